// Forward pass, BPTT backward and greedy decoding of the seq2seq models (see model.h).
#include "seq2seq/model.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>

#include "seq2seq/vocab.h"

namespace attn::s2s {

const std::vector<std::string>& score_names() {
  static const std::vector<std::string> kNames = {"none",   "bahdanau", "dot",    "general",
                                                  "concat", "local-p",  "local-m"};
  return kNames;
}

bool parse_score(const std::string& name, Score& out) {
  const auto& n = score_names();
  for (size_t i = 0; i < n.size(); ++i)
    if (n[i] == name) {
      out = static_cast<Score>(i);
      return true;
    }
  return false;
}

std::string score_name(Score s) { return score_names()[static_cast<size_t>(s)]; }

std::string score_formula(Score s) {
  switch (s) {
    case Score::kNone:
      return "no attention: c = h_T (the last encoder state) at every step";
    case Score::kBahdanau:
      return "e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j)";
    case Score::kDot:
      return "e_tj = s_t^T h_j";
    case Score::kGeneral:
      return "e_tj = s_t^T W_g h_j";
    case Score::kConcat:
      return "e_tj = v_a^T tanh(W_a [s_t; h_j])";
    case Score::kLocalP:
      return "e_tj = s_t^T W_g h_j for |j - p_t| <= D, p_t = S sigmoid(v_p^T tanh(W_p s_t)); "
             "a_tj = softmax(e_tj) exp(-(j - p_t)^2 / (2 (D/2)^2))";
    case Score::kLocalM:
      return "e_tj = s_t^T W_g h_j for |j - p_t| <= D, p_t = min(t, S - 1)";
  }
  return "";
}

bool uses_window(Score s) { return s == Score::kLocalP || s == Score::kLocalM; }

namespace {

bool is_additive(Score s) { return s == Score::kBahdanau || s == Score::kConcat; }
bool is_general(Score s) {
  return s == Score::kGeneral || s == Score::kLocalP || s == Score::kLocalM;
}

template <typename T>
Mat<T> gather_rows(const Mat<T>& table, const std::vector<int>& ids) {
  Mat<T> out(static_cast<Eigen::Index>(ids.size()), table.cols());
  for (size_t i = 0; i < ids.size(); ++i) out.row(static_cast<Eigen::Index>(i)) = table.row(ids[i]);
  return out;
}

template <typename T>
Mat<T> hcat(const Mat<T>& a, const Mat<T>& b) {
  Mat<T> out(a.rows(), a.cols() + b.cols());
  out << a, b;
  return out;
}

// Column j of `m` scales every row of `x`: out(b, :) = m(b, j) · x(b, :).
template <typename T>
Mat<T> scale_rows(const Mat<T>& x, const Mat<T>& m, Eigen::Index j) {
  return (x.array().colwise() * m.col(j).array()).matrix();
}

template <typename T>
void attend(const ModelConfig& c, const Params<T>& p, const ForwardCache<T>& fc, StepCache<T>& st,
            int t) {
  const Eigen::Index B = fc.batch, S = fc.src_len;
  const Mat<T>& q = st.query;
  st.e = Mat<T>::Zero(B, S);
  if (c.score == Score::kDot) {
    for (Eigen::Index j = 0; j < S; ++j) st.e.col(j) = q.cwiseProduct(fc.hs[j]).rowwise().sum();
  } else if (is_general(c.score)) {
    st.key = q * p.att_g;
    for (Eigen::Index j = 0; j < S; ++j)
      st.e.col(j) = st.key.cwiseProduct(fc.hs[j]).rowwise().sum();
  } else {
    st.qw = q * p.att_w;
    st.tanh_j.resize(static_cast<size_t>(S));
    for (Eigen::Index j = 0; j < S; ++j) {
      st.tanh_j[j] = (st.qw + fc.hu[j]).array().tanh().matrix();
      st.e.col(j) = st.tanh_j[j] * p.att_v.transpose();
    }
  }
  st.valid = fc.src_mask;
  if (c.score == Score::kLocalM || c.score == Score::kLocalP) {
    st.pos.resize(B, 1);
    if (c.score == Score::kLocalP) {
      st.pos_t = (q * p.pos_w).array().tanh().matrix();
      st.pos_u = st.pos_t * p.pos_v.transpose();
    }
    for (Eigen::Index b = 0; b < B; ++b) {
      const T len = T(fc.lens[b]);
      st.pos(b, 0) = c.score == Score::kLocalM ? T(std::min(t, fc.lens[b] - 1))
                                               : len / (T(1) + std::exp(-st.pos_u(b, 0)));
      for (Eigen::Index j = 0; j < S; ++j)
        if (std::abs(T(j) - st.pos(b, 0)) > T(c.window)) st.valid(b, j) = 0;
    }
  }
  // Softmax over the visible positions only; the window always holds at least one.
  st.a = Mat<T>::Zero(B, S);
  for (Eigen::Index b = 0; b < B; ++b) {
    T mx = -std::numeric_limits<T>::infinity();
    for (Eigen::Index j = 0; j < S; ++j)
      if (st.valid(b, j) != T(0)) mx = std::max(mx, st.e(b, j));
    T sum = 0;
    for (Eigen::Index j = 0; j < S; ++j)
      if (st.valid(b, j) != T(0)) sum += st.a(b, j) = std::exp(st.e(b, j) - mx);
    st.a.row(b) /= sum;
  }
  if (c.score == Score::kLocalP) {
    const T sigma = T(c.window) / T(2);
    st.gauss.resize(B, S);
    for (Eigen::Index b = 0; b < B; ++b)
      for (Eigen::Index j = 0; j < S; ++j) {
        const T d = T(j) - st.pos(b, 0);
        st.gauss(b, j) = std::exp(-d * d / (T(2) * sigma * sigma));
      }
    st.alpha = st.a.cwiseProduct(st.gauss);
  } else {
    st.alpha = st.a;
  }
  st.c = Mat<T>::Zero(B, c.hidden);
  for (Eigen::Index j = 0; j < S; ++j) st.c += scale_rows(fc.hs[j], st.alpha, j);
}

// dc: dL/dc. Adds into dq (dL/dquery), dhs, dhu and the score's parameter gradients.
template <typename T>
void attend_backward(const ModelConfig& c, const Params<T>& p, const ForwardCache<T>& fc,
                     const StepCache<T>& st, const Mat<T>& dc, Mat<T>& dq, std::vector<Mat<T>>& dhs,
                     std::vector<Mat<T>>& dhu, Params<T>& g) {
  const Eigen::Index B = fc.batch, S = fc.src_len;
  const Mat<T>& q = st.query;
  Mat<T> dalpha(B, S);
  for (Eigen::Index j = 0; j < S; ++j) {
    dalpha.col(j) = dc.cwiseProduct(fc.hs[j]).rowwise().sum();
    dhs[j] += scale_rows(dc, st.alpha, j);
  }
  Mat<T> da = dalpha;
  if (c.score == Score::kLocalP) {
    const T sigma = T(c.window) / T(2);
    da = dalpha.cwiseProduct(st.gauss);
    Mat<T> du(B, 1);
    for (Eigen::Index b = 0; b < B; ++b) {
      T dpos = 0;
      for (Eigen::Index j = 0; j < S; ++j)
        dpos +=
            dalpha(b, j) * st.a(b, j) * st.gauss(b, j) * (T(j) - st.pos(b, 0)) / (sigma * sigma);
      const T sig = st.pos(b, 0) / T(fc.lens[b]);
      du(b, 0) = dpos * T(fc.lens[b]) * sig * (T(1) - sig);
    }
    g.pos_v.noalias() += du.transpose() * st.pos_t;
    const Mat<T> dpre = ((du * p.pos_v).array() * (T(1) - st.pos_t.array().square())).matrix();
    g.pos_w.noalias() += q.transpose() * dpre;
    dq.noalias() += dpre * p.pos_w.transpose();
  }
  // Softmax backward; positions outside the window have a = 0 and get no gradient.
  const Mat<T> ada = st.a.cwiseProduct(da);
  const Mat<T> de = (st.a.array() * (da.array().colwise() - ada.rowwise().sum().array())).matrix();
  if (c.score == Score::kDot) {
    for (Eigen::Index j = 0; j < S; ++j) {
      dq += scale_rows(fc.hs[j], de, j);
      dhs[j] += scale_rows(q, de, j);
    }
  } else if (is_general(c.score)) {
    Mat<T> dk = Mat<T>::Zero(B, c.hidden);
    for (Eigen::Index j = 0; j < S; ++j) {
      dk += scale_rows(fc.hs[j], de, j);
      dhs[j] += scale_rows(st.key, de, j);
    }
    g.att_g.noalias() += q.transpose() * dk;
    dq.noalias() += dk * p.att_g.transpose();
  } else {
    Mat<T> dqw = Mat<T>::Zero(B, c.hidden);
    for (Eigen::Index j = 0; j < S; ++j) {
      const Mat<T> dt =
          ((de.col(j) * p.att_v).array() * (T(1) - st.tanh_j[j].array().square())).matrix();
      dqw += dt;
      dhu[j] += dt;
      g.att_v.noalias() += de.col(j).transpose() * st.tanh_j[j];
    }
    g.att_w.noalias() += q.transpose() * dqw;
    dq.noalias() += dqw * p.att_w.transpose();
  }
}

}  // namespace

std::vector<ParamShape> param_shapes(const ModelConfig& c) {
  const int64_t H = c.hidden, E = c.embed, V_in = c.in_vocab, V_out = c.out_vocab;
  // The baseline reads its input with one forward GRU of size H (Cho et al.'s RNNencdec).
  const bool bi = c.score != Score::kNone;
  const int64_t h = bi ? H / 2 : H;
  std::vector<ParamShape> s = {
      {"emb_in", V_in, E}, {"enc_f.wx", E, 3 * h}, {"enc_f.wh", h, 3 * h}, {"enc_f.b", 1, 3 * h}};
  if (bi)
    s.insert(s.end(), {{"enc_b.wx", E, 3 * h}, {"enc_b.wh", h, 3 * h}, {"enc_b.b", 1, 3 * h}});
  s.insert(s.end(), {{"w_init", H, H},
                     {"b_init", 1, H},
                     {"emb_out", V_out, E},
                     {"dec.wx", E + H, 3 * H},
                     {"dec.wh", H, 3 * H},
                     {"dec.b", 1, 3 * H}});
  if (is_additive(c.score)) s.insert(s.end(), {{"att_w", H, H}, {"att_u", H, H}, {"att_v", 1, H}});
  if (is_general(c.score)) s.push_back({"att_g", H, H});
  if (c.score == Score::kLocalP) s.insert(s.end(), {{"pos_w", H, H}, {"pos_v", 1, H}});
  s.insert(s.end(), {{"w_c", 2 * H, H}, {"b_c", 1, H}, {"w_s", H, V_out}, {"b_s", 1, V_out}});
  return s;
}

template <typename T>
Params<T> make_params(const ModelConfig& c) {
  const std::vector<ParamShape> shapes = param_shapes(c);
  Params<T> p;
  size_t next = 0;  // shapes come in member order
  p.visit_members([&](const char* name, Mat<T>& m) {
    if (next < shapes.size() && std::strcmp(shapes[next].name, name) == 0) {
      m = Mat<T>::Zero(shapes[next].rows, shapes[next].cols);
      ++next;
    }
  });
  assert(next == shapes.size() && "param_shapes lists members out of order");
  return p;
}

template <typename T>
Params<T> Params<T>::zeros_like() const {
  Params<T> out = *this;
  out.visit([](const char*, Mat<T>& m) { m.setZero(); });
  return out;
}

template <typename T>
template <typename U>
Params<U> Params<T>::cast() const {
  Params<U> out;
  auto copy = [](const Mat<T>& a, Mat<U>& b) { b = a.template cast<U>(); };
  copy(emb_in, out.emb_in);
  copy(emb_out, out.emb_out);
  for (auto [a, b] : {std::pair<const GruParams<T>*, GruParams<U>*>{&enc_f, &out.enc_f},
                      {&enc_b, &out.enc_b},
                      {&dec, &out.dec}}) {
    copy(a->wx, b->wx);
    copy(a->wh, b->wh);
    copy(a->b, b->b);
  }
  copy(w_init, out.w_init);
  copy(b_init, out.b_init);
  copy(att_w, out.att_w);
  copy(att_u, out.att_u);
  copy(att_v, out.att_v);
  copy(att_g, out.att_g);
  copy(pos_w, out.pos_w);
  copy(pos_v, out.pos_v);
  copy(w_c, out.w_c);
  copy(b_c, out.b_c);
  copy(w_s, out.w_s);
  copy(b_s, out.b_s);
  return out;
}

Params<float> init_params(const ModelConfig& c, uint64_t seed) {
  Params<float> p = make_params<float>(c);
  Rng rng(seed * 0x9E3779B97F4A7C15ull + 17);
  p.visit([&rng](const char* name, Mat<float>& m) {
    const std::string n = name;
    const bool bias = n == "b_init" || n == "b_c" || n == "b_s" ||
                      (n.size() > 2 && n.compare(n.size() - 2, 2, ".b") == 0);
    if (bias) return;
    const double fan_in = m.rows() == 1 ? m.cols() : m.rows();
    const double limit = n.rfind("emb", 0) == 0 ? 0.5 : 1.0 / std::sqrt(fan_in);
    for (Eigen::Index i = 0; i < m.size(); ++i)
      m.data()[i] = static_cast<float>((2.0 * rng.unit() - 1.0) * limit);
  });
  return p;
}

template <typename T>
void forward(const ModelConfig& c, const Params<T>& p, const Batch& batch, ForwardCache<T>& fc,
             int max_steps) {
  const int B = static_cast<int>(batch.src.size());
  const int H = c.hidden;
  const bool bi = c.score != Score::kNone;
  const int h = bi ? H / 2 : H;
  assert(B > 0);
  fc = ForwardCache<T>{};
  fc.batch = B;
  fc.src = batch.src;
  fc.tgt = batch.tgt;
  int S = 0;
  for (const auto& s : batch.src) {
    assert(!s.empty());
    fc.lens.push_back(static_cast<int>(s.size()));
    S = std::max(S, static_cast<int>(s.size()));
  }
  fc.src_len = S;
  fc.src_mask = Mat<T>::Zero(B, S);
  for (int b = 0; b < B; ++b) fc.src_mask.row(b).head(fc.lens[b]).setOnes();

  auto src_ids = [&](int t) {
    std::vector<int> ids(static_cast<size_t>(B));
    for (int b = 0; b < B; ++b) ids[b] = t < fc.lens[b] ? batch.src[b][t] : 0;
    return ids;
  };
  fc.gru_f.resize(S);
  fc.gru_b.resize(S);
  fc.f.resize(S);
  fc.b.resize(S);
  Mat<T> state = Mat<T>::Zero(B, h);
  for (int t = 0; t < S; ++t) {
    const Mat<T> m = fc.src_mask.col(t);
    state = gru_forward(p.enc_f, gather_rows(p.emb_in, src_ids(t)), state, &m, fc.gru_f[t]);
    fc.f[t] = state;
  }
  if (bi) {
    state = Mat<T>::Zero(B, h);
    for (int t = S - 1; t >= 0; --t) {
      const Mat<T> m = fc.src_mask.col(t);
      state = gru_forward(p.enc_b, gather_rows(p.emb_in, src_ids(t)), state, &m, fc.gru_b[t]);
      fc.b[t] = state;
    }
    fc.hs.resize(S);
    for (int j = 0; j < S; ++j) fc.hs[j] = hcat(fc.f[j], fc.b[j]);
    fc.h_last = hcat(fc.f[S - 1], fc.b[0]);
  } else {
    fc.gru_b.clear();
    fc.b.clear();
    fc.h_last = fc.f[S - 1];
  }
  Mat<T> pre = fc.h_last * p.w_init;
  pre.rowwise() += p.b_init.row(0);
  fc.s0 = pre.array().tanh().matrix();
  if (is_additive(c.score)) {
    fc.hu.resize(S);
    for (int j = 0; j < S; ++j) fc.hu[j] = fc.hs[j] * p.att_u;
  }

  const bool teacher = !batch.tgt.empty();
  const int steps = teacher ? static_cast<int>(batch.tgt[0].size()) : max_steps;
  fc.steps.resize(steps);
  Mat<T> s = fc.s0;
  Mat<T> ht_prev = Mat<T>::Zero(B, H);
  for (int t = 0; t < steps; ++t) {
    StepCache<T>& st = fc.steps[t];
    std::vector<int> prev(static_cast<size_t>(B));
    st.y_prev.resize(B, 1);
    for (int b = 0; b < B; ++b) {
      prev[b] = t == 0 ? kSos : teacher ? batch.tgt[b][t - 1] : fc.steps[t - 1].out[b];
      st.y_prev(b, 0) = T(prev[b]);
    }
    const Mat<T> emb = gather_rows(p.emb_out, prev);
    if (c.score == Score::kNone) {
      st.c = fc.h_last;
      s = gru_forward(p.dec, hcat(emb, st.c), s, static_cast<const Mat<T>*>(nullptr), st.gru);
      st.query = s;
    } else if (c.score == Score::kBahdanau) {
      st.query = s;
      attend(c, p, fc, st, t);
      s = gru_forward(p.dec, hcat(emb, st.c), s, static_cast<const Mat<T>*>(nullptr), st.gru);
    } else {
      s = gru_forward(p.dec, hcat(emb, ht_prev), s, static_cast<const Mat<T>*>(nullptr), st.gru);
      st.query = s;
      attend(c, p, fc, st, t);
    }
    st.s = s;
    st.sc = hcat(st.s, st.c);
    Mat<T> hp = st.sc * p.w_c;
    hp.rowwise() += p.b_c.row(0);
    st.ht = hp.array().tanh().matrix();
    Mat<T> logits = st.ht * p.w_s;
    logits.rowwise() += p.b_s.row(0);
    st.probs.resize(B, logits.cols());
    st.out.resize(static_cast<size_t>(B));
    for (int b = 0; b < B; ++b) {
      const T mx = logits.row(b).maxCoeff();
      st.probs.row(b) = (logits.row(b).array() - mx).exp().matrix();
      st.probs.row(b) /= st.probs.row(b).sum();
      Eigen::Index best = 0;
      st.probs.row(b).maxCoeff(&best);
      st.out[b] = static_cast<int>(best);
      if (teacher) fc.loss_sum -= std::log(static_cast<double>(st.probs(b, batch.tgt[b][t])));
    }
    ht_prev = st.ht;
  }
}

template <typename T>
void backward(const ModelConfig& c, const Params<T>& p, const ForwardCache<T>& fc, T scale,
              Params<T>& g) {
  const int B = fc.batch, S = fc.src_len, H = c.hidden, E = c.embed;
  const bool bi = c.score != Score::kNone;
  const int h = bi ? H / 2 : H;
  const int steps = static_cast<int>(fc.steps.size());
  assert(!fc.tgt.empty());
  std::vector<Mat<T>> dhs(S, Mat<T>::Zero(B, H));
  std::vector<Mat<T>> dhu(is_additive(c.score) ? S : 0, Mat<T>::Zero(B, H));
  Mat<T> dh_last = Mat<T>::Zero(B, H);
  Mat<T> ds = Mat<T>::Zero(B, H);
  Mat<T> dht_next = Mat<T>::Zero(B, H);
  Mat<T> dx, ds_prev;
  for (int t = steps - 1; t >= 0; --t) {
    const StepCache<T>& st = fc.steps[t];
    Mat<T> dlogits = st.probs;
    for (int b = 0; b < B; ++b) dlogits(b, fc.tgt[b][t]) -= T(1);
    dlogits *= scale;
    g.w_s.noalias() += st.ht.transpose() * dlogits;
    g.b_s += dlogits.colwise().sum();
    Mat<T> dht = dlogits * p.w_s.transpose();
    dht += dht_next;
    const Mat<T> dpre = (dht.array() * (T(1) - st.ht.array().square())).matrix();
    g.w_c.noalias() += st.sc.transpose() * dpre;
    g.b_c += dpre.colwise().sum();
    const Mat<T> dsc = dpre * p.w_c.transpose();
    Mat<T> ds_t = ds + dsc.leftCols(H);
    Mat<T> dc = dsc.rightCols(H);
    if (c.score == Score::kNone) {
      gru_backward(p.dec, st.gru, ds_t, g.dec, dx, ds_prev);
      dh_last += dc + dx.rightCols(H);
    } else if (c.score == Score::kBahdanau) {
      gru_backward(p.dec, st.gru, ds_t, g.dec, dx, ds_prev);
      dc += dx.rightCols(H);
      attend_backward(c, p, fc, st, dc, ds_prev, dhs, dhu, g);
    } else {
      attend_backward(c, p, fc, st, dc, ds_t, dhs, dhu, g);
      gru_backward(p.dec, st.gru, ds_t, g.dec, dx, ds_prev);
      dht_next = dx.rightCols(H);
    }
    for (int b = 0; b < B; ++b)
      g.emb_out.row(static_cast<Eigen::Index>(st.y_prev(b, 0))) += dx.row(b).head(E);
    ds = ds_prev;
  }
  const Mat<T> dpre0 = (ds.array() * (T(1) - fc.s0.array().square())).matrix();
  g.w_init.noalias() += fc.h_last.transpose() * dpre0;
  g.b_init += dpre0.colwise().sum();
  dh_last.noalias() += dpre0 * p.w_init.transpose();
  if (is_additive(c.score))
    for (int j = 0; j < S; ++j) {
      g.att_u.noalias() += fc.hs[j].transpose() * dhu[j];
      dhs[j].noalias() += dhu[j] * p.att_u.transpose();
    }
  dhs[S - 1].leftCols(h) += dh_last.leftCols(h);
  if (bi) dhs[0].rightCols(h) += dh_last.rightCols(h);

  auto scatter = [&](int t, const Mat<T>& d) {
    for (int b = 0; b < B; ++b)
      if (t < fc.lens[b]) g.emb_in.row(fc.src[b][t]) += d.row(b);
  };
  Mat<T> carry = Mat<T>::Zero(B, h);
  for (int t = S - 1; t >= 0; --t) {
    const Mat<T> dh = dhs[t].leftCols(h) + carry;
    gru_backward(p.enc_f, fc.gru_f[t], dh, g.enc_f, dx, carry);
    scatter(t, dx);
  }
  carry.setZero();
  for (int t = 0; t < S && bi; ++t) {
    const Mat<T> dh = dhs[t].rightCols(h) + carry;
    gru_backward(p.enc_b, fc.gru_b[t], dh, g.enc_b, dx, carry);
    scatter(t, dx);
  }
}

template <typename T>
std::vector<std::vector<int>> decoded(const ForwardCache<T>& fc) {
  std::vector<std::vector<int>> out(static_cast<size_t>(fc.batch));
  for (int b = 0; b < fc.batch; ++b)
    for (const auto& st : fc.steps) {
      if (st.out[b] == kEos) break;
      out[b].push_back(st.out[b]);
    }
  return out;
}

#define ATTN_S2S_INSTANTIATE(T)                                                                  \
  template struct Params<T>;                                                                     \
  template Params<T> make_params<T>(const ModelConfig&);                                         \
  template void forward<T>(const ModelConfig&, const Params<T>&, const Batch&, ForwardCache<T>&, \
                           int);                                                                 \
  template void backward<T>(const ModelConfig&, const Params<T>&, const ForwardCache<T>&, T,     \
                            Params<T>&);                                                         \
  template std::vector<std::vector<int>> decoded<T>(const ForwardCache<T>&);
ATTN_S2S_INSTANTIATE(float)
ATTN_S2S_INSTANTIATE(double)
template Params<double> Params<float>::cast<double>() const;
template Params<float> Params<double>::cast<float>() const;
template Params<float> Params<float>::cast<float>() const;

}  // namespace attn::s2s
