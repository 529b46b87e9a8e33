// Validation of a scenario: every field a user can get wrong, named with its index.
#include "attention/scenario.h"

#include "attention/engine.h"

namespace attn {
namespace {

std::string shape(const Matrix& m) {
  return "(" + std::to_string(m.rows()) + ", " + std::to_string(m.cols()) + ")";
}

std::string validate_projection(const ProjectionSpec& p) {
  const Eigen::Index d_model = p.x.cols();
  auto check_stack = [&](const HeadStack& w, const char* name) -> std::string {
    if (w.empty()) return std::string("projection.") + name + ": needs at least one head";
    for (size_t h = 0; h < w.size(); ++h)
      if (w[h].rows() != d_model)
        return std::string("projection.") + name + "[" + std::to_string(h) + "]: has " +
               std::to_string(w[h].rows()) +
               " rows; expected d_model = " + std::to_string(d_model) +
               " (the columns of projection.x)";
    return "";
  };
  for (auto e : {check_stack(p.w_q, "w_q"), check_stack(p.w_k, "w_k"), check_stack(p.w_v, "w_v")})
    if (!e.empty()) return e;
  if (p.x_kv.size() && p.x_kv.cols() != d_model)
    return "projection.x_kv: has " + std::to_string(p.x_kv.cols()) +
           " columns; expected d_model = " + std::to_string(d_model);
  if (p.w_k[0].cols() != p.w_q[0].cols())
    return "projection.w_k: has d_k = " + std::to_string(p.w_k[0].cols()) +
           " columns but w_q has " + std::to_string(p.w_q[0].cols());
  if (p.w_q.size() % p.w_k.size() != 0)
    return "projection.w_q: H = " + std::to_string(p.w_q.size()) +
           " heads is not a multiple of the key/value heads H_kv = " + std::to_string(p.w_k.size());
  if (p.w_v.size() != p.w_k.size())
    return "projection.w_v: has " + std::to_string(p.w_v.size()) + " heads but w_k has " +
           std::to_string(p.w_k.size());
  if (p.w_o.size()) {
    const Eigen::Index want = static_cast<Eigen::Index>(p.w_q.size()) * p.w_v[0].cols();
    if (p.w_o.rows() != want)
      return "projection.w_o: has shape " + shape(p.w_o) + "; expected " + std::to_string(want) +
             " rows (H × d_v = " + std::to_string(p.w_q.size()) + " × " +
             std::to_string(p.w_v[0].cols()) + ")";
    if (p.b_o.size() && p.b_o.size() != p.w_o.cols())
      return "projection.b_o: has " + std::to_string(p.b_o.size()) + " values; expected " +
             std::to_string(p.w_o.cols()) + " (the columns of w_o)";
  } else if (p.b_o.size()) {
    return "projection.b_o: given without projection.w_o";
  }
  return "";
}

}  // namespace

std::string validate_scenario(const Scenario& s) {
  if (s.use_projection) {
    std::string e = validate_projection(s.projection);
    if (!e.empty()) return e;
  } else {
    // Name the JSON fields (q, k, v) rather than the engine's tensor names.
    const char* names[] = {"q", "k", "v"};
    const HeadStack* stacks[] = {&s.qkv.q, &s.qkv.k, &s.qkv.v};
    for (int t = 0; t < 3; ++t)
      if (stacks[t]->empty()) return std::string(names[t]) + ": missing";
    if (s.qkv.k[0].cols() != s.qkv.q[0].cols())
      return "k: has d_k = " + std::to_string(s.qkv.k[0].cols()) + " columns but q has " +
             std::to_string(s.qkv.q[0].cols()) + " (keys and queries must have the same d_k)";
    if (s.qkv.v[0].rows() != s.qkv.k[0].rows())
      return "v: has " + std::to_string(s.qkv.v[0].rows()) + " rows but k has " +
             std::to_string(s.qkv.k[0].rows()) + " (one value per key)";
    if (s.qkv.v.size() != s.qkv.k.size())
      return "v: has " + std::to_string(s.qkv.v.size()) + " heads but k has " +
             std::to_string(s.qkv.k.size());
    if (s.qkv.q.size() % s.qkv.k.size() != 0)
      return "q: H = " + std::to_string(s.qkv.q.size()) +
             " heads is not a multiple of the key/value heads H_kv = " +
             std::to_string(s.qkv.k.size());
  }
  AttentionProblem p = to_problem(s);
  const int n_q = p.input.n_q(), n_k = p.input.n_k();
  if (!s.query_tokens.empty() && static_cast<int>(s.query_tokens.size()) != n_q)
    return "query_tokens: has " + std::to_string(s.query_tokens.size()) + " tokens but there are " +
           std::to_string(n_q) + " queries";
  if (!s.key_tokens.empty() && static_cast<int>(s.key_tokens.size()) != n_k)
    return "key_tokens: has " + std::to_string(s.key_tokens.size()) + " tokens but there are " +
           std::to_string(n_k) + " keys";
  if (s.key_tokens.empty() && !s.query_tokens.empty() && n_q != n_k)
    return "key_tokens: missing; needed because there are " + std::to_string(n_k) + " keys but " +
           std::to_string(n_q) + " queries (cross-attention)";
  std::string e = validate_problem(p);
  return e;
}

Scenario with_random_inputs(const Scenario& s, uint64_t seed) {
  const AttentionProblem p = to_problem(s);
  bool non_negative = true;
  for (const HeadStack* stack : {&p.input.q, &p.input.k, &p.input.v})
    for (const Matrix& m : *stack)
      non_negative = non_negative && (m.size() == 0 || m.minCoeff() >= 0);
  // SplitMix64: the same numbers for the same seed on every machine and library.
  uint64_t state = seed;
  auto next = [&state] {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  auto draw = [&](const HeadStack& like) {
    HeadStack out;
    for (const Matrix& m : like) {
      Matrix r(m.rows(), m.cols());
      for (Eigen::Index k = 0; k < r.size(); ++k) {
        const int tenth =
            non_negative ? 1 + static_cast<int>(next() % 9) : static_cast<int>(next() % 19) - 9;
        r.data()[k] = static_cast<float>(tenth / 10.0);
      }
      out.push_back(r);
    }
    return out;
  };
  Scenario r = s;
  r.use_projection = false;
  r.projection = ProjectionSpec{};
  r.rope = RopeInputs{};  // fresh Q and K are not the rotation of the old ones
  r.qkv.q = draw(p.input.q);
  r.qkv.k = draw(p.input.k);
  r.qkv.v = draw(p.input.v);
  return r;
}

}  // namespace attn
