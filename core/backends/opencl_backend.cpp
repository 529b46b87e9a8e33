// The OpenCL backend: the staged trace and the fused outputs-only path on an OpenCL device, with
// every call checked and programs built once per configuration and cached.
#include "backends/opencl_backend.h"

#ifndef ATTN_HAVE_OPENCL

namespace attn {

std::vector<OpenClDeviceInfo> list_opencl_devices(std::string& error) {
  error = "the OpenCL backend is not built into this binary (OpenCL was not found at build time)";
  return {};
}

std::unique_ptr<Backend> make_opencl_backend(int, std::string& error) {
  list_opencl_devices(error);
  return nullptr;
}

}  // namespace attn

#else

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <sstream>

#include "attention/mask.h"
#include "backends/fused.h"
#include "backends/opencl_runtime.h"

namespace attn {
namespace {

using namespace ocl;

constexpr const char* kSource = "attention.cl";
// Beyond d_k + d_v floats per query row the fused kernel's private arrays get unreasonable.
constexpr int kMaxFusedWidth = 1024;

size_t round_up(size_t x, size_t m) { return (x + m - 1) / m * m; }

std::string megabytes(size_t bytes) {
  std::ostringstream s;
  s << (bytes + (1 << 20) - 1) / (1 << 20) << " MB";
  return s.str();
}

// The masks as the kernels read them (see the comment on visible_cell in attention.cl).
struct MaskArgs {
  cl_int8 mp{};
  Buffer global_flags, custom, bias;
};

class OpenClBackend : public Backend {
 public:
  explicit OpenClBackend(const Device& d) : dev_(d) {
    const cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                           reinterpret_cast<cl_context_properties>(d.platform), 0};
    cl_int status = CL_SUCCESS;
    ctx_ = Context(clCreateContext(props, 1, &d.id, nullptr, nullptr, &status));
    check(status, "clCreateContext", d.name);
    queue_ = Queue(clCreateCommandQueue(ctx_.get(), d.id, 0, &status));
    check(status, "clCreateCommandQueue", d.name);
    max_alloc_ = device_value<cl_ulong>(d.id, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    global_mem_ = device_value<cl_ulong>(d.id, CL_DEVICE_GLOBAL_MEM_SIZE);
    local_mem_ = device_value<cl_ulong>(d.id, CL_DEVICE_LOCAL_MEM_SIZE);
    max_wg_ = device_value<size_t>(d.id, CL_DEVICE_MAX_WORK_GROUP_SIZE);
    size_t item_sizes[3] = {1, 1, 1};
    check(clGetDeviceInfo(d.id, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(item_sizes), item_sizes,
                          nullptr),
          "clGetDeviceInfo");
    max_item_ = std::min(item_sizes[0], item_sizes[1]);
    // The fused kernel's float vectors: the width the device prefers, a power of two up to 16.
    const auto preferred = device_value<cl_uint>(d.id, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT);
    while (vector_width_ * 2 <= static_cast<int>(std::min<cl_uint>(preferred, 16)))
      vector_width_ *= 2;
    // CPU devices run a work-group as a loop: several rows per work-item reuse each loaded key
    // and value vector. GPUs keep one row per work-item for occupancy.
    rows_per_item_ = d.type == "cpu" ? 2 : 1;
    override_fused_tuning();
    source_ = kernel_source(kSource);
    build_staged();
  }

  std::string name() const override { return "opencl: " + dev_.name; }

  // Whether the outputs can be computed here: the inputs fit, and either the fused kernel's
  // private rows are of a reasonable size or the staged buffers fit.
  bool supports_outputs(const AttentionProblem& p) const override {
    if (!inputs_fit(p)) return false;
    return p.input.d_k() + p.input.d_v() <= kMaxFusedWidth || staged_fits(p);
  }

  // Whether every stage can be computed here: the inputs and the four (H, n_q, n_k) stages fit.
  // run_stages checks the same and throws when they do not.
  bool supports_trace(const AttentionProblem& p) const override {
    return inputs_fit(p) && staged_fits(p);
  }

  // What both questions ask first: plain attention of a whole problem whose inputs fit.
  bool inputs_fit(const AttentionProblem& p) const {
    const AttentionInput& in = p.input;
    // The kernels place query i at row i of the whole problem; a slice of rows
    // (attention/row_slice.h) runs on the CPU.
    if (p.first_query_row != 0 || p.total_query_rows != 0) return false;
    // The kernels compute plain Q·Kᵀ attention: Linformer, the key–query convolution, head
    // mixing and the additive score run on the staged CPU path.
    if (p.options.variants.any() || p.options.additive) return false;
    const size_t f = sizeof(float);
    const size_t q = size_t(in.num_heads()) * in.n_q() * std::max(in.d_k(), in.d_v()) * f;
    const size_t kv = size_t(in.num_kv_heads()) * in.n_k() * (in.d_k() + in.d_v()) * f;
    return q <= max_alloc_ && kv <= max_alloc_ && 2 * q + kv <= global_mem_;
  }

  void run_stages(const AttentionProblem& p, AttentionTrace& t) override {
    const AttentionInput& in = p.input;
    const int H = in.num_heads(), n_q = in.n_q(), n_k = in.n_k(), d_v = in.d_v();
    const cl_int group = H / in.num_kv_heads();
    const size_t cells = size_t(H) * n_q * n_k;
    require_fits(cells * sizeof(float), "each (H, n_q, n_k) stage");
    if (!staged_fits(p))
      throw OpenClError("the four (H, n_q, n_k) stages need " +
                            megabytes(4 * cells * sizeof(float)) + " but the OpenCL device " +
                            dev_.name + " has " + megabytes(global_mem_) +
                            "; the device is out of memory",
                        CL_MEM_OBJECT_ALLOCATION_FAILURE);
    Buffer q = upload(in.q, "Q"), k = upload(in.k, "K"), v = upload(in.v, "V");
    MaskArgs mask = mask_args(p);
    Buffer scores = create_buffer(ctx_.get(), CL_MEM_READ_WRITE, cells * 4, "scores");
    Buffer scaled = create_buffer(ctx_.get(), CL_MEM_READ_WRITE, cells * 4, "scaled");
    Buffer masked = create_buffer(ctx_.get(), CL_MEM_READ_WRITE, cells * 4, "masked");
    Buffer weights = create_buffer(ctx_.get(), CL_MEM_READ_WRITE, cells * 4, "weights");
    Buffer out = create_buffer(ctx_.get(), CL_MEM_READ_WRITE, size_t(H) * n_q * d_v * 4, "output");

    const size_t ts = static_cast<size_t>(ts_);
    ArgSetter(scores_k_.get(), "attention_scores")(q)(k)(scores)(scaled)(masked)(cl_int(n_q))(
        cl_int(n_k))(cl_int(in.d_k()))(group)(cl_float(p.effective_scale()))(mask.mp)(
        mask.global_flags)(mask.custom)(mask.bias);
    enqueue(scores_k_, "attention_scores", {round_up(n_k, ts), round_up(n_q, ts), size_t(H)},
            {ts, ts, 1});
    ArgSetter(softmax_k_.get(), "attention_softmax")(masked)(weights)(cl_int(n_k))(
        cl_float(1.0f / p.options.temperature))
        .local(softmax_ls_ * sizeof(float));
    enqueue(softmax_k_, "attention_softmax", {softmax_ls_, size_t(n_q), size_t(H)},
            {softmax_ls_, 1, 1});
    ArgSetter(output_k_.get(),
              "attention_output")(weights)(v)(out)(cl_int(n_q))(cl_int(n_k))(cl_int(d_v))(group);
    enqueue(output_k_, "attention_output", {round_up(d_v, ts), round_up(n_q, ts), size_t(H)},
            {ts, ts, 1});

    // Read everything back before touching the trace, so a failure leaves it unchanged.
    TraceStep steps[5] = {{StageId::kScores, "", "", download(scores, H, n_q, n_k), {}},
                          {StageId::kScaled, "", "", download(scaled, H, n_q, n_k), {}},
                          {StageId::kMasked, "", "", download(masked, H, n_q, n_k), {}},
                          {StageId::kWeights, "", "", download(weights, H, n_q, n_k), {}},
                          {StageId::kOutput, "", "", download(out, H, n_q, d_v), {}}};
    // The reasons are metadata for the narration; the numbers above all came from the device.
    t.hidden.assign(H, {});
    t.empty_row.assign(H, {});
    for (int h = 0; h < H; ++h) {
      t.hidden[h] = build_reasons(p, h);
      std::vector<bool>& empty = t.empty_row[h];
      empty.assign(n_q, false);
      for (int i = 0; i < n_q; ++i) empty[i] = (t.hidden[h].row(i).array() != 0).all();
      for (TraceStep& s : steps) s.kv_head.push_back(in.kv_head_of(h));
    }
    for (TraceStep& s : steps) t.steps.push_back(std::move(s));
  }

  HeadStack run_output(const AttentionProblem& p) override {
    const AttentionInput& in = p.input;
    const int H = in.num_heads(), n_q = in.n_q(), d_v = in.d_v();
    const Fused& f = fused(in.d_k(), d_v);
    if (f.bq == 0) {  // the tiles do not fit this device's local memory: staged kernels instead
      AttentionTrace t;
      run_stages(p, t);
      return t.step(StageId::kOutput).heads;
    }
    // Per query tile, the keys any of its queries may see (hidden key tiles are never loaded) and
    // the keys all of them see (key tiles there skip the mask test).
    const KeyRanges kr = key_ranges(p);
    const int tiles = (n_q + f.bq - 1) / f.bq;
    std::vector<cl_int4> ranges(static_cast<size_t>(tiles));
    for (int tile = 0; tile < tiles; ++tile) {
      int lo = std::numeric_limits<int>::max(), hi = 0;
      int all_lo = 0, all_hi = std::numeric_limits<int>::max();
      for (int i = tile * f.bq; i < std::min(n_q, (tile + 1) * f.bq); ++i) {
        auto [a, b] = kr.rows[static_cast<size_t>(i)];
        if (a < b) lo = std::min(lo, a), hi = std::max(hi, b);
        all_lo = std::max(all_lo, a);
        all_hi = std::min(all_hi, b);
      }
      if (lo >= hi) lo = hi = 0;
      if (!kr.exact || all_lo >= all_hi) all_lo = all_hi = 0;
      cl_int4& r = ranges[static_cast<size_t>(tile)];
      r.s[0] = lo;
      r.s[1] = hi;
      r.s[2] = all_lo;
      r.s[3] = all_hi;
    }
    Buffer q = upload(in.q, "Q"), k = upload(in.k, "K"), v = upload(in.v, "V");
    Buffer range_buf = upload_bytes(ranges.data(), ranges.size() * sizeof(cl_int4), "key ranges");
    MaskArgs mask = mask_args(p);
    Buffer out = create_buffer(ctx_.get(), CL_MEM_WRITE_ONLY, size_t(H) * n_q * d_v * 4, "output");
    const float inv_t = 1.0f / p.options.temperature;
    ArgSetter(f.kernel.get(), "attention_fused")(q)(k)(v)(out)(cl_int(n_q))(cl_int(in.n_k()))(
        cl_int(H / in.num_kv_heads()))(cl_float(p.effective_scale() * inv_t))(cl_float(inv_t))(
        range_buf)(mask.mp)(mask.global_flags)(mask.custom)(mask.bias);
    const size_t wg = static_cast<size_t>(f.wg);
    enqueue(f.kernel, "attention_fused", {size_t(tiles) * wg, size_t(H), 1}, {wg, 1, 1});
    return download(out, H, n_q, d_v);
  }

 private:
  struct Fused {
    Program program;
    Kernel kernel;
    int bq = 0;  // query (= key) tile; 0 = not possible on this device
    int wg = 1;  // work-group size: each work-item owns bq / wg query rows
  };

  // Builds the staged kernels with the largest square tile the device takes (16, else smaller).
  void build_staged() {
    for (int ts = 16; ts >= 1; ts /= 2) {
      if (size_t(ts) * ts > max_wg_ || size_t(ts) > max_item_) continue;
      if (2 * size_t(ts) * (ts + 1) * sizeof(float) > local_mem_) continue;
      Program prog = build_program(ctx_.get(), dev_.id, source_, options(ts));
      Kernel scores = create_kernel(prog.get(), "attention_scores");
      Kernel softmax = create_kernel(prog.get(), "attention_softmax");
      Kernel output = create_kernel(prog.get(), "attention_output");
      const size_t need = size_t(ts) * ts;
      if (kernel_work_group_size(scores.get(), dev_.id) < need ||
          kernel_work_group_size(output.get(), dev_.id) < need)
        continue;
      // The softmax reduction takes any power of two the kernel allows, up to 256.
      const size_t limit = std::min<size_t>({256, kernel_work_group_size(softmax.get(), dev_.id),
                                             max_item_, local_mem_ / sizeof(float)});
      softmax_ls_ = 1;
      while (softmax_ls_ * 2 <= limit) softmax_ls_ *= 2;
      ts_ = ts;
      staged_ = std::move(prog);
      scores_k_ = std::move(scores);
      softmax_k_ = std::move(softmax);
      output_k_ = std::move(output);
      return;
    }
    throw OpenClError("the OpenCL device " + dev_.name + " allows no usable work-group size", 0);
  }

  // ATTN_OPENCL_FUSED="VW,RPW,BQ" forces the fused kernel's vector width, rows per work-item and
  // largest tile (powers of two), so the tests can run a GPU's configuration on a CPU device.
  void override_fused_tuning() {
    const char* e = std::getenv("ATTN_OPENCL_FUSED");
    int vw = 0, rpw = 0, bq = 0;
    if (!e || std::sscanf(e, "%d,%d,%d", &vw, &rpw, &bq) != 3) return;
    auto pow2 = [](int x, int hi) { return x >= 1 && x <= hi && (x & (x - 1)) == 0; };
    if (pow2(vw, 16) && pow2(rpw, 64) && pow2(bq, 1024)) {
      vector_width_ = vw;
      rows_per_item_ = rpw;
      max_tile_ = bq;
    }
  }

  // No -cl-std: each device then compiles its highest OpenCL C 1.x, and the kernels need no more
  // than 1.1. No -cl-mad-enable: multiply-adds may only be fused within one expression (the
  // OpenCL C default), so a value rounded once is the same value everywhere it is used.
  std::string options(int ts) const { return "-DTS=" + std::to_string(ts); }

  // The fused kernel for (d_k, d_v), built on first use and cached: its private arrays and
  // local tiles are sized at compile time.
  const Fused& fused(int d_k, int d_v) {
    auto key = std::make_pair(d_k, d_v);
    auto it = fused_.find(key);
    if (it != fused_.end()) return it->second;
    Fused f;
    // Private rows of d_k + d_v floats per work-item: beyond that the staged path is kinder.
    const bool small_enough = d_k + d_v <= kMaxFusedWidth;
    for (int bq = max_tile_; bq >= 1 && small_enough; bq /= 2) {
      if (size_t(bq) > max_wg_ || size_t(bq) > max_item_) continue;
      const int vw = std::min(vector_width_, bq);
      const int rpw = std::min(rows_per_item_, bq);
      const int d_vp = (d_v + vw - 1) / vw * vw;
      if ((size_t(bq + 1) * d_k + size_t(bq) * d_vp) * sizeof(float) > local_mem_) continue;
      Program prog =
          build_program(ctx_.get(), dev_.id, source_,
                        options(ts_) + " -DBQ=" + std::to_string(bq) +
                            " -DD_K=" + std::to_string(d_k) + " -DD_V=" + std::to_string(d_v) +
                            " -DVW=" + std::to_string(vw) + " -DRPW=" + std::to_string(rpw));
      Kernel kernel = create_kernel(prog.get(), "attention_fused");
      if (kernel_work_group_size(kernel.get(), dev_.id) < size_t(bq / rpw)) continue;
      f.wg = bq / rpw;
      f.program = std::move(prog);
      f.kernel = std::move(kernel);
      f.bq = bq;
      break;
    }
    return fused_.emplace(key, std::move(f)).first->second;
  }

  bool staged_fits(const AttentionProblem& p) const {
    const AttentionInput& in = p.input;
    const size_t cells = size_t(in.num_heads()) * in.n_q() * in.n_k() * sizeof(float);
    return cells <= max_alloc_ && 4 * cells < global_mem_;
  }

  void require_fits(size_t bytes, const char* what) const {
    if (bytes > max_alloc_)
      throw OpenClError(std::string(what) + " needs " + megabytes(bytes) +
                            " but the OpenCL device " + dev_.name + " allocates at most " +
                            megabytes(max_alloc_) +
                            " at once; the device is out of memory for this problem size",
                        CL_MEM_OBJECT_ALLOCATION_FAILURE);
  }

  Buffer upload_bytes(const void* data, size_t bytes, const char* what) {
    require_fits(bytes, what);
    Buffer b = create_buffer(ctx_.get(), CL_MEM_READ_ONLY, bytes, what);
    if (bytes)
      check(
          clEnqueueWriteBuffer(queue_.get(), b.get(), CL_TRUE, 0, bytes, data, 0, nullptr, nullptr),
          "clEnqueueWriteBuffer", what);
    return b;
  }

  // Heads stacked into one buffer (heads, rows, cols).
  Buffer upload(const HeadStack& s, const char* what) {
    const size_t one = size_t(s[0].rows()) * s[0].cols() * sizeof(float);
    require_fits(one * s.size(), what);
    Buffer b = create_buffer(ctx_.get(), CL_MEM_READ_ONLY, one * s.size(), what);
    for (size_t h = 0; h < s.size(); ++h)
      check(clEnqueueWriteBuffer(queue_.get(), b.get(), CL_TRUE, h * one, one, s[h].data(), 0,
                                 nullptr, nullptr),
            "clEnqueueWriteBuffer", what);
    return b;
  }

  HeadStack download(const Buffer& b, int heads, int rows, int cols) {
    HeadStack out;
    const size_t one = size_t(rows) * cols * sizeof(float);
    for (int h = 0; h < heads; ++h) {
      Matrix m(rows, cols);
      check(clEnqueueReadBuffer(queue_.get(), b.get(), CL_TRUE, h * one, one, m.data(), 0, nullptr,
                                nullptr),
            "clEnqueueReadBuffer");
      out.push_back(std::move(m));
    }
    return out;
  }

  MaskArgs mask_args(const AttentionProblem& p) {
    const MaskSpec& m = p.options.mask;
    const int n_q = p.input.n_q(), n_k = p.input.n_k();
    MaskArgs a;
    a.mp.s[0] = m.causal != CausalAlign::kNone;
    a.mp.s[1] = m.causal == CausalAlign::kLowerRight;
    a.mp.s[2] = MaskGeometry::of(p).window();  // clamped, so p ± W cannot overflow
    a.mp.s[3] = m.key_length ? *m.key_length : -1;
    a.mp.s[4] = !m.global.empty();
    a.mp.s[5] = static_cast<cl_int>(m.custom.size());
    a.mp.s[6] = static_cast<cl_int>(m.bias.size());
    a.mp.s[7] = !m.empty();
    std::vector<cl_uchar> flags(size_t(std::max(n_q, n_k)) + 1, 0);
    for (int g : m.global)
      if (g >= 0 && size_t(g) < flags.size()) flags[size_t(g)] = 1;
    a.global_flags = upload_bytes(flags.data(), flags.size(), "global positions");
    const float zero = 0.0f;
    a.custom =
        m.custom.empty() ? upload_bytes(&zero, sizeof(zero), "mask") : upload(m.custom, "mask");
    a.bias = m.bias.empty() ? upload_bytes(&zero, sizeof(zero), "bias") : upload(m.bias, "bias");
    return a;
  }

  void enqueue(const Kernel& k, const char* name, std::initializer_list<size_t> global,
               std::initializer_list<size_t> local) {
    check(clEnqueueNDRangeKernel(queue_.get(), k.get(), 3, nullptr, global.begin(), local.begin(),
                                 0, nullptr, nullptr),
          "clEnqueueNDRangeKernel", name);
  }

  Device dev_;
  Context ctx_;
  Queue queue_;
  std::string source_;
  size_t max_alloc_ = 0, global_mem_ = 0, local_mem_ = 0, max_wg_ = 1, max_item_ = 1;
  Program staged_;
  Kernel scores_k_, softmax_k_, output_k_;
  int ts_ = 1;
  int vector_width_ = 1;
  int rows_per_item_ = 1;
  int max_tile_ = 128;
  size_t softmax_ls_ = 1;
  std::map<std::pair<int, int>, Fused> fused_;
};

}  // namespace

std::vector<OpenClDeviceInfo> list_opencl_devices(std::string& error) {
  std::vector<OpenClDeviceInfo> out;
  try {
    int index = 0;
    for (const Device& d : all_devices()) out.push_back({index++, d.platform_name, d.name, d.type});
  } catch (const std::exception& e) {
    error = e.what();
  }
  return out;
}

std::unique_ptr<Backend> make_opencl_backend(int device, std::string& error) {
  try {
    std::vector<Device> devices = all_devices();
    if (device < 0 || device >= static_cast<int>(devices.size())) {
      std::ostringstream s;
      s << "OpenCL device " << device << " does not exist; found " << devices.size()
        << " device(s):";
      for (size_t i = 0; i < devices.size(); ++i)
        s << " " << i << " = " << devices[i].name << " (" << devices[i].platform_name << ")"
          << (i + 1 < devices.size() ? ";" : "");
      error = s.str();
      return nullptr;
    }
    return std::make_unique<OpenClBackend>(devices[static_cast<size_t>(device)]);
  } catch (const std::exception& e) {
    error = e.what();
    return nullptr;
  }
}

}  // namespace attn

#endif  // ATTN_HAVE_OPENCL
