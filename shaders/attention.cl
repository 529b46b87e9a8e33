// OpenCL kernels of attention: the staged trace (scores, scaled, masked, weights, output) and the
// fused outputs-only path (tiled online softmax). Semantics as cli.md, "Attention semantics".
//
// Layouts (row-major, heads stacked): Q (H, n_q, d_k), K (H_kv, n_k, d_k), V (H_kv, n_k, d_v),
// stages (H, n_q, n_k), output (H, n_q, d_v). Query head h reads key/value head h / group.
// Compile-time sizes come from the host as -D options: TS (square tile of the staged products),
// and for the fused kernel BQ (queries = keys per tile, the work-group size), D_K, D_V and VW
// (the float vector width).
// Nothing assumes a vendor, a subgroup size or a work-group size the device did not allow.

// The masks every kernel applies, packed by the host (see opencl_backend.cpp, MaskArgs):
//   mp.s0 causal (0/1), mp.s1 lower-right (0/1), mp.s2 window (-1 = none),
//   mp.s3 key length (-1 = none), mp.s4 has global positions (0/1),
//   mp.s5 custom mask heads (0 = none, 1 = shared, else one per head), mp.s6 bias heads (same),
//   mp.s7 any mask at all (0 lets kernels skip every test).
// global_flags has one byte per position (1 = global); custom and bias are (heads, n_q, n_k).
inline int visible_cell(int8 mp, int h, int i, int j, int n_q, int n_k,
                        __global const uchar* global_flags, __global const float* custom) {
  const int p = mp.s1 ? i + n_k - n_q : i;
  if (mp.s0 && j > p) return 0;
  if (mp.s2 >= 0) {
    const int w = mp.s2;
    const int inside = mp.s0 ? (j >= p - w && j <= p) : (abs(p - j) <= w);
    // Global positions relax the window only (Longformer style); a query is global when its
    // position p (not its row index) is listed.
    if (!inside && !(mp.s4 && ((p >= 0 && global_flags[p]) || global_flags[j]))) return 0;
  }
  if (mp.s3 >= 0 && j >= mp.s3) return 0;
  if (mp.s5) {
    const int mh = mp.s5 == 1 ? 0 : h;
    if (custom[((size_t)mh * n_q + i) * n_k + j] == 0.0f) return 0;
  }
  return 1;
}

inline float bias_at(int8 mp, int h, int i, int j, int n_q, int n_k, __global const float* bias) {
  if (!mp.s6) return 0.0f;
  const int bh = mp.s6 == 1 ? 0 : h;
  return bias[((size_t)bh * n_q + i) * n_k + j];
}

// scores = Q·Kᵀ, scaled = scale·scores, masked = scaled + bias with −∞ where hidden.
// Work-group TS×TS computes one TS×TS tile; Q and K tiles pass through local memory with
// coalesced loads (consecutive work-items read consecutive addresses).
__kernel __attribute__((reqd_work_group_size(TS, TS, 1))) void attention_scores(
    __global const float* q, __global const float* k, __global float* scores,
    __global float* scaled, __global float* masked, int n_q, int n_k, int d_k, int group,
    float scale, int8 mp, __global const uchar* global_flags, __global const float* custom,
    __global const float* bias) {
  __local float q_tile[TS][TS];
  __local float k_tile[TS][TS + 1];  // +1: column reads hit different banks
  const int tj = get_local_id(0), ti = get_local_id(1);
  const int j = get_group_id(0) * TS + tj, i = get_group_id(1) * TS + ti;
  const int h = get_global_id(2), g = h / group;
  const int k_row = get_group_id(0) * TS + ti;
  __global const float* qh = q + (size_t)h * n_q * d_k;
  __global const float* kg = k + (size_t)g * n_k * d_k;
  float acc = 0.0f;
  for (int a0 = 0; a0 < d_k; a0 += TS) {
    const int a = a0 + tj;
    q_tile[ti][tj] = (i < n_q && a < d_k) ? qh[(size_t)i * d_k + a] : 0.0f;
    k_tile[ti][tj] = (k_row < n_k && a < d_k) ? kg[(size_t)k_row * d_k + a] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int t = 0; t < TS; ++t) acc += q_tile[ti][t] * k_tile[tj][t];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (i < n_q && j < n_k) {
    const size_t cell = ((size_t)h * n_q + i) * n_k + j;
    const float s = acc * scale;
    scores[cell] = acc;
    scaled[cell] = s;
    float m = s;
    if (mp.s7) {
      m = visible_cell(mp, h, i, j, n_q, n_k, global_flags, custom)
              ? s + bias_at(mp, h, i, j, n_q, n_k, bias)
              : -INFINITY;
    }
    masked[cell] = m;
  }
}

// weights = softmax(masked / T) per row; a row with every key hidden (all −∞) gets zeros.
// One work-group per row; its size is any power of two the device allows (the host picks it),
// and the reductions go through `scratch` (one float per work-item).
__kernel void attention_softmax(__global const float* masked, __global float* weights, int n_k,
                                float inv_t, __local float* scratch) {
  const int lid = get_local_id(0), ls = get_local_size(0);
  const size_t row = (size_t)get_group_id(2) * get_num_groups(1) + get_group_id(1);
  __global const float* x = masked + row * n_k;
  __global float* w = weights + row * n_k;
  float m = -INFINITY;
  for (int j = lid; j < n_k; j += ls)
    if (x[j] != -INFINITY) {
      const float xt = x[j] * inv_t;
      m = fmax(m, xt);
    }
  scratch[lid] = m;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = ls / 2; s > 0; s /= 2) {
    if (lid < s) scratch[lid] = fmax(scratch[lid], scratch[lid + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  m = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  // x·(1/T) is rounded to float before subtracting the max, in every loop alike: fusing it into
  // one multiply-add in some loops but not others would break exp(x/T - max) <= 1 at large logits.
  float sum = 0.0f;
  if (m != -INFINITY)
    for (int j = lid; j < n_k; j += ls)
      if (x[j] != -INFINITY) {
        const float xt = x[j] * inv_t;
        sum += exp(xt - m);
      }
  scratch[lid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = ls / 2; s > 0; s /= 2) {
    if (lid < s) scratch[lid] += scratch[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  sum = scratch[0];
  for (int j = lid; j < n_k; j += ls) {
    const float xt = x[j] * inv_t;
    w[j] = (m == -INFINITY || x[j] == -INFINITY) ? 0.0f : exp(xt - m) / sum;
  }
}

// output = weights·V, tiled like attention_scores.
__kernel __attribute__((reqd_work_group_size(TS, TS, 1))) void attention_output(
    __global const float* weights, __global const float* v, __global float* out, int n_q, int n_k,
    int d_v, int group) {
  __local float w_tile[TS][TS];
  __local float v_tile[TS][TS];
  const int tc = get_local_id(0), ti = get_local_id(1);
  const int c = get_group_id(0) * TS + tc, i = get_group_id(1) * TS + ti;
  const int h = get_global_id(2), g = h / group;
  __global const float* wh = weights + (size_t)h * n_q * n_k;
  __global const float* vg = v + (size_t)g * n_k * d_v;
  float acc = 0.0f;
  for (int j0 = 0; j0 < n_k; j0 += TS) {
    w_tile[ti][tc] = (i < n_q && j0 + tc < n_k) ? wh[(size_t)i * n_k + j0 + tc] : 0.0f;
    v_tile[ti][tc] = (j0 + ti < n_k && c < d_v) ? vg[(size_t)(j0 + ti) * d_v + c] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int t = 0; t < TS; ++t) acc += w_tile[ti][t] * v_tile[t][tc];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (i < n_q && c < d_v) out[((size_t)h * n_q + i) * d_v + c] = acc;
}

#ifdef BQ
// Fused outputs-only attention (flash-attention style). One work-group per tile of BQ queries of
// one head; each of its WG = BQ / RPW work-items owns RPW query rows (1 on GPUs; more on CPU
// devices, where each loaded key and value vector then serves several rows). Tiles of BQ keys and
// values are loaded into local memory by the whole group (contiguous, coalesced global reads),
// then each work-item updates its rows' running max m, running sum l and accumulator with the
// online softmax; the division by l happens once at the end. `ranges` holds, per query tile, the
// keys [x, y) any of its queries may see structurally, so key tiles hidden from the whole tile
// (causal, window, padding) are never loaded, and the keys [z, w) every one of its queries sees,
// so key tiles inside need no mask test (empty when a custom mask, bias or global applies).
//
// Arithmetic runs on vectors of VW floats (the device's preferred float vector width, 1 on most
// GPUs, 16 on AVX-512 CPUs): the key tile is stored transposed so that the scores of VW keys come
// from one multiply-add per component of q, and the value rows are padded to D_VP columns so the
// accumulator is whole vectors. No horizontal reduction is needed anywhere.
#define ATTN_CAT(a, b) a##b
#define ATTN_XCAT(a, b) ATTN_CAT(a, b)
#if VW == 1
#define floatv float
#define VLOADV(i, p) ((p)[i])
#define VSTOREV(x, i, p) ((p)[i] = (x))
#else
#define floatv ATTN_XCAT(float, VW)
#define VLOADV(i, p) ATTN_XCAT(vload, VW)(i, p)
#define VSTOREV(x, i, p) ATTN_XCAT(vstore, VW)(x, i, p)
#endif
#define D_VP (((D_V + VW - 1) / VW) * VW)  // value row padded to whole vectors
#define NKV (BQ / VW)                      // vectors of keys per tile
#define NVV (D_VP / VW)                    // vectors per accumulator row
#define WG (BQ / RPW)                      // work-items per group: RPW query rows each
// Row stride of the transposed key tile: with scalar floats (GPUs) one float of padding spreads
// the transposing writes over the local memory banks; vectors keep their alignment.
#if VW == 1
#define KS (BQ + 1)
#else
#define KS BQ
#endif

__kernel __attribute__((reqd_work_group_size(BQ / RPW, 1, 1))) void attention_fused(
    __global const float* q, __global const float* k, __global const float* v,
    __global float* out, int n_q, int n_k, int group, float q_scale, float inv_t,
    __global const int4* ranges, int8 mp, __global const uchar* global_flags,
    __global const float* custom, __global const float* bias) {
  __local float k_tile[D_K * KS];   // k_tile[a * KS + t]; stages the query tile on entry
  __local float v_tile[BQ * D_VP];  // v_tile[t * D_VP + c]; stages the output tile on exit
  const int lid = get_local_id(0);
  const int tile = get_group_id(0), h = get_group_id(1), g = h / group;
  const int i0 = tile * BQ;
  const int rows = min(BQ, n_q - i0);

  // Query rows through local memory so the global reads are coalesced.
  __global const float* qt = q + ((size_t)h * n_q + i0) * D_K;
  for (int x = lid; x < rows * D_K; x += WG) k_tile[x] = qt[x];
  barrier(CLK_LOCAL_MEM_FENCE);
  // Work-item lid owns rows lid, lid + WG, ...: each key and value loaded serves RPW rows.
  float qr[RPW][D_K];
  for (int r = 0; r < RPW; ++r) {
    const int row = lid + r * WG;
    for (int a = 0; a < D_K; ++a) qr[r][a] = row < rows ? k_tile[row * D_K + a] * q_scale : 0.0f;
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  floatv acc[RPW][NVV];
  float m[RPW], l[RPW];
  for (int r = 0; r < RPW; ++r) {
    for (int c = 0; c < NVV; ++c) acc[r][c] = (floatv)(0.0f);
    m[r] = -INFINITY;
    l[r] = 0.0f;
  }
  float s[RPW][BQ];
  const int4 range = ranges[tile];
  __global const float* kg = k + (size_t)g * n_k * D_K;
  __global const float* vg = v + (size_t)g * n_k * D_V;
  for (int j0 = range.x; j0 < range.y; j0 += BQ) {
    const int cols = min(BQ, range.y - j0);
    // Keys past the end of the range are zeros: finite scores that are never used.
    for (int x = lid; x < BQ * D_K; x += WG) {
      const int t = x / D_K, a = x - t * D_K;
      k_tile[a * KS + t] = t < cols ? kg[(size_t)j0 * D_K + x] : 0.0f;
    }
    for (int x = lid; x < BQ * D_VP; x += WG) {
      const int t = x / D_VP, c = x - t * D_VP;
      v_tile[x] = (t < cols && c < D_V) ? vg[(size_t)(j0 + t) * D_V + c] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    // Cells need testing unless every query of the tile sees every key of this key tile.
    const int need_mask = mp.s7 && !(j0 >= range.z && j0 + BQ <= range.w);
    {
      // Accumulators in registers: one vector of keys at a time, over the whole of d_k.
      floatv sv[RPW][NKV];
      for (int kv = 0; kv < NKV; ++kv) {
        floatv acc_s[RPW];
        for (int r = 0; r < RPW; ++r) acc_s[r] = (floatv)(0.0f);
        for (int a = 0; a < D_K; ++a) {
          const floatv kk = VLOADV(kv, k_tile + a * KS);
          for (int r = 0; r < RPW; ++r) acc_s[r] += qr[r][a] * kk;
        }
        for (int r = 0; r < RPW; ++r) sv[r][kv] = acc_s[r];
      }
      for (int r = 0; r < RPW; ++r) {
        // Masks (and the keys past the end of a partial tile) cell by cell, only when needed.
        if (need_mask || cols < BQ) {
          for (int kv = 0; kv < NKV; ++kv) VSTOREV(sv[r][kv], kv, s[r]);
          const int i = i0 + lid + r * WG;
          for (int t = 0; t < BQ; ++t) {
            const int j = j0 + t;
            if (t >= cols)
              s[r][t] = -INFINITY;
            else if (need_mask)
              s[r][t] = i < n_q && visible_cell(mp, h, i, j, n_q, n_k, global_flags, custom)
                            ? s[r][t] + bias_at(mp, h, i, j, n_q, n_k, bias) * inv_t
                            : -INFINITY;
          }
          for (int kv = 0; kv < NKV; ++kv) sv[r][kv] = VLOADV(kv, s[r]);
        }
        floatv vmax = sv[r][0];
        for (int kv = 1; kv < NKV; ++kv) vmax = fmax(vmax, sv[r][kv]);
        float lanes[VW];
        VSTOREV(vmax, 0, lanes);
        float mb = m[r];
        for (int x = 0; x < VW; ++x) mb = fmax(mb, lanes[x]);
        // A row that has seen no visible key keeps m = −∞; exponentials against 0 give 0.
        const float mu = mb == -INFINITY ? 0.0f : mb;
        const float alpha = exp(m[r] - mu);
        floatv vsum = (floatv)(0.0f);
        for (int kv = 0; kv < NKV; ++kv) {
          const floatv e = exp(sv[r][kv] - mu);  // whole vectors: the exponentials are vectorised
          vsum += e;
          VSTOREV(e, kv, s[r]);
        }
        VSTOREV(vsum, 0, lanes);
        float sum = 0.0f;
        for (int x = 0; x < VW; ++x) sum += lanes[x];
        l[r] = l[r] * alpha + sum;
        for (int c = 0; c < NVV; ++c) acc[r][c] *= alpha;
        m[r] = mb;
      }
      // Likewise one vector of output columns at a time, over every key of the tile.
      for (int c = 0; c < NVV; ++c) {
        floatv acc_o[RPW];
        for (int r = 0; r < RPW; ++r) acc_o[r] = acc[r][c];
        for (int t = 0; t < cols; ++t) {
          const floatv vv = VLOADV(t * NVV + c, v_tile);
          for (int r = 0; r < RPW; ++r) acc_o[r] += s[r][t] * vv;
        }
        for (int r = 0; r < RPW; ++r) acc[r][c] = acc_o[r];
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  // l = 0 only when every key is hidden from the row: output 0, never NaN.
  for (int r = 0; r < RPW; ++r) {
    const int row = lid + r * WG;
    const float inv_l = l[r] > 0.0f ? 1.0f / l[r] : 0.0f;
    if (row < rows)
      for (int c = 0; c < NVV; ++c) VSTOREV(acc[r][c] * inv_l, row * NVV + c, v_tile);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  __global float* ot = out + ((size_t)h * n_q + i0) * D_V;
  for (int x = lid; x < rows * D_V; x += WG) {
    const int r = x / D_V, c = x - r * D_V;
    ot[x] = v_tile[r * D_VP + c];
  }
}
#endif
