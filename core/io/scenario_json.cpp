// Reading and writing scenarios as JSON (docs/scenario.md), with errors that name the file, the
// field and the index, and saving through a temporary file so a failure never leaves half a file.
#include "io/scenario_json.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "attention/engine.h"
#include "attention/format.h"
#include "io/atomic_file.h"
#include "io/json_input.h"

namespace attn {
namespace {

using nlohmann::json;

// The readers of io/json_input.h throw the same error.
[[noreturn]] void fail(const std::string& field, const std::string& what) {
  throw_field_error(field, what);
}

float read_number(const json& j, const std::string& field, bool allow_neg_inf) {
  if (allow_neg_inf && (j.is_null() || (j.is_string() && (j == "-inf" || j == "-Infinity"))))
    return -std::numeric_limits<float>::infinity();
  if (!j.is_number())
    fail(field, "expected a number" +
                    std::string(allow_neg_inf ? " (or null / \"-inf\" for -inf)" : "") + ", got " +
                    json_type_name(j));
  double x = j.get<double>();
  if (!std::isfinite(x) || std::abs(x) > std::numeric_limits<float>::max())
    fail(field, "value " + format_value(x) + " is not a finite float");
  return static_cast<float>(x);
}

Matrix read_matrix(const json& j, const std::string& field, bool allow_neg_inf) {
  if (!j.is_array() || j.empty())
    fail(field, "expected a non-empty array of rows, got " + json_type_name(j));
  const size_t rows = j.size();
  if (!j[0].is_array() || j[0].empty())
    fail(field + "[0]", "expected a non-empty array of numbers, got " + json_type_name(j[0]));
  const size_t cols = j[0].size();
  // Every row's length is checked before the matrix is allocated: rows × cols is only bounded by
  // the file's size once each row really holds cols values.
  for (size_t i = 0; i < rows; ++i) {
    std::string fi = field + "[" + std::to_string(i) + "]";
    if (!j[i].is_array()) fail(fi, "expected an array of numbers, got " + json_type_name(j[i]));
    if (j[i].size() != cols)
      fail(fi, "has " + std::to_string(j[i].size()) + " values but row 0 has " +
                   std::to_string(cols) + " (ragged rows)");
  }
  Matrix m(rows, cols);
  for (size_t i = 0; i < rows; ++i) {
    std::string fi = field + "[" + std::to_string(i) + "]";
    for (size_t c = 0; c < cols; ++c)
      m(i, c) = read_number(j[i][c], fi + "[" + std::to_string(c) + "]", allow_neg_inf);
  }
  return m;
}

// A 2-D array (one head) or a 3-D array (heads).
HeadStack read_heads(const json& j, const std::string& field, bool allow_neg_inf = false) {
  if (!j.is_array() || j.empty())
    fail(field, "expected a non-empty 2-D or 3-D array of numbers, got " +
                    (j.is_array() ? std::string("an empty array") : json_type_name(j)));
  bool three_d = j[0].is_array() && !j[0].empty() && j[0][0].is_array();
  HeadStack out;
  if (!three_d) {
    out.push_back(read_matrix(j, field, allow_neg_inf));
    return out;
  }
  for (size_t h = 0; h < j.size(); ++h) {
    std::string fh = field + "[" + std::to_string(h) + "]";
    out.push_back(read_matrix(j[h], fh, allow_neg_inf));
    if (out[h].rows() != out[0].rows() || out[h].cols() != out[0].cols())
      fail(fh, "has shape (" + std::to_string(out[h].rows()) + ", " +
                   std::to_string(out[h].cols()) + ") but head 0 has (" +
                   std::to_string(out[0].rows()) + ", " + std::to_string(out[0].cols()) + ")");
  }
  return out;
}

std::vector<std::string> read_tokens(const json& j, const std::string& field) {
  if (!j.is_array()) fail(field, "expected an array of strings, got " + json_type_name(j));
  std::vector<std::string> out;
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string())
      fail(field + "[" + std::to_string(i) + "]", "expected a string, got " + json_type_name(j[i]));
    out.push_back(j[i].get<std::string>());
  }
  return out;
}

MaskSpec read_mask(const json& j) {
  MaskSpec m;
  if (!j.is_object()) fail("mask", "expected an object, got " + json_type_name(j));
  check_json_keys(j, "mask", {"causal", "window", "global", "key_length", "custom", "bias"});
  if (j.contains("causal")) {
    const json& c = j["causal"];
    if (c.is_boolean()) {
      m.causal = c.get<bool>() ? CausalAlign::kTopLeft : CausalAlign::kNone;
    } else if (c.is_string() && c == "none") {
      m.causal = CausalAlign::kNone;
    } else if (c.is_string() && c == "top-left") {
      m.causal = CausalAlign::kTopLeft;
    } else if (c.is_string() && c == "lower-right") {
      m.causal = CausalAlign::kLowerRight;
    } else {
      fail("mask.causal", "unknown mask kind " + json_type_name(c) +
                              "; expected true, false, \"none\", \"top-left\" or \"lower-right\"");
    }
  }
  if (j.contains("window") && !j["window"].is_null())
    m.window = read_json_int(j["window"], "mask.window", 0);
  if (j.contains("key_length") && !j["key_length"].is_null())
    m.key_length = read_json_int(j["key_length"], "mask.key_length", 0);
  if (j.contains("global")) {
    const json& g = j["global"];
    if (!g.is_array())
      fail("mask.global", "expected an array of positions, got " + json_type_name(g));
    for (size_t i = 0; i < g.size(); ++i)
      m.global.push_back(read_json_int(g[i], "mask.global[" + std::to_string(i) + "]", 0));
  }
  if (j.contains("custom")) {
    const json& c = j["custom"];
    // Booleans are allowed in a custom mask: true = may attend.
    json numeric = c;
    std::function<void(json&)> convert = [&](json& x) {
      if (x.is_boolean())
        x = x.get<bool>() ? 1 : 0;
      else if (x.is_array())
        for (auto& e : x) convert(e);
    };
    convert(numeric);
    m.custom = read_heads(numeric, "mask.custom");
  }
  if (j.contains("bias")) m.bias = read_heads(j["bias"], "mask.bias", true);
  return m;
}

Scenario read_scenario(const json& j) {
  if (!j.is_object()) fail("(top level)", "expected a JSON object, got " + json_type_name(j));
  check_json_keys(
      j, "",
      {"format", "version", "name", "description", "query_tokens", "key_tokens", "q", "k", "v",
       "projection", "mask", "scale", "temperature", "linformer", "multi_token", "additive"});
  if (j.contains("version")) {
    int v = read_json_int(j["version"], "version", 0);
    if (v != 1)
      fail("version", "unsupported scenario version " + std::to_string(v) + "; expected 1");
  }
  Scenario s;
  if (j.contains("name")) {
    if (!j["name"].is_string()) fail("name", "expected a string, got " + json_type_name(j["name"]));
    s.name = j["name"].get<std::string>();
  }
  if (j.contains("description")) {
    if (!j["description"].is_string())
      fail("description", "expected a string, got " + json_type_name(j["description"]));
    s.description = j["description"].get<std::string>();
  }
  if (j.contains("query_tokens")) s.query_tokens = read_tokens(j["query_tokens"], "query_tokens");
  if (j.contains("key_tokens")) s.key_tokens = read_tokens(j["key_tokens"], "key_tokens");

  bool direct = j.contains("q") || j.contains("k") || j.contains("v");
  if (direct && j.contains("projection"))
    fail("projection", "give either q/k/v or projection, not both");
  if (!direct && !j.contains("projection"))
    fail("q", "missing field: give q, k and v, or projection");
  if (direct) {
    for (const char* f : {"q", "k", "v"})
      if (!j.contains(f)) fail(f, "missing field (q, k and v go together)");
    s.qkv.q = read_heads(j["q"], "q");
    s.qkv.k = read_heads(j["k"], "k");
    s.qkv.v = read_heads(j["v"], "v");
  } else {
    const json& p = j["projection"];
    if (!p.is_object()) fail("projection", "expected an object, got " + json_type_name(p));
    check_json_keys(p, "projection", {"x", "x_kv", "w_q", "w_k", "w_v", "w_o", "b_o"});
    for (const char* f : {"x", "w_q", "w_k", "w_v"})
      if (!p.contains(f)) fail(std::string("projection.") + f, "missing field");
    s.use_projection = true;
    ProjectionSpec& pr = s.projection;
    pr.x = read_matrix(p["x"], "projection.x", false);
    if (p.contains("x_kv")) pr.x_kv = read_matrix(p["x_kv"], "projection.x_kv", false);
    pr.w_q = read_heads(p["w_q"], "projection.w_q");
    pr.w_k = read_heads(p["w_k"], "projection.w_k");
    pr.w_v = read_heads(p["w_v"], "projection.w_v");
    if (p.contains("w_o")) pr.w_o = read_matrix(p["w_o"], "projection.w_o", false);
    if (p.contains("b_o")) {
      Matrix b = read_matrix(json::array({p["b_o"]}), "projection.b_o", false);
      pr.b_o = b.row(0);
    }
  }
  if (j.contains("mask")) s.options.mask = read_mask(j["mask"]);
  if (j.contains("scale") && !j["scale"].is_null())
    s.options.scale = read_number(j["scale"], "scale", false);
  if (j.contains("temperature"))
    s.options.temperature = read_number(j["temperature"], "temperature", false);
  if (j.contains("linformer")) {
    const json& l = j["linformer"];
    if (!l.is_object()) fail("linformer", "expected an object, got " + json_type_name(l));
    check_json_keys(l, "linformer", {"e", "f"});
    for (const char* f : {"e", "f"})
      if (!l.contains(f))
        fail(std::string("linformer.") + f, "missing field (e and f go together)");
    s.options.variants.linformer.e = read_heads(l["e"], "linformer.e");
    s.options.variants.linformer.f = read_heads(l["f"], "linformer.f");
  }
  if (j.contains("multi_token")) {
    const json& m = j["multi_token"];
    if (!m.is_object()) fail("multi_token", "expected an object, got " + json_type_name(m));
    check_json_keys(m, "multi_token", {"kq_conv", "head_mix"});
    if (m.contains("kq_conv"))
      s.options.variants.multi_token.kq_conv = read_heads(m["kq_conv"], "multi_token.kq_conv");
    if (m.contains("head_mix"))
      s.options.variants.multi_token.head_mix = read_heads(m["head_mix"], "multi_token.head_mix");
  }
  if (j.contains("additive")) {
    // Bahdanau's score vᵀ tanh(W_q q + W_k k): W_q and W_k (d_a, d_k), v (d_a).
    const json& a = j["additive"];
    if (!a.is_object())
      fail("additive", "expected an object with w_q, w_k and v, got " + json_type_name(a));
    check_json_keys(a, "additive", {"w_q", "w_k", "v"});
    for (const char* f : {"w_q", "w_k", "v"})
      if (!a.contains(f)) fail(std::string("additive.") + f, "missing field");
    AdditiveScore add;
    add.w_q = read_matrix(a["w_q"], "additive.w_q", false);
    add.w_k = read_matrix(a["w_k"], "additive.w_k", false);
    add.v = read_matrix(json::array({a["v"]}), "additive.v", false).row(0);
    s.options.additive = std::move(add);
  }
  return s;
}

json matrix_json(const Matrix& m) {
  json rows = json::array();
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    json row = json::array();
    for (Eigen::Index c = 0; c < m.cols(); ++c) {
      float x = m(i, c);
      if (std::isinf(x) && x < 0)
        row.push_back(nullptr);  // -inf in a bias
      else
        row.push_back(x);
    }
    rows.push_back(row);
  }
  return rows;
}

json heads_json(const HeadStack& s) {
  if (s.size() == 1) return matrix_json(s[0]);
  json out = json::array();
  for (const Matrix& m : s) out.push_back(matrix_json(m));
  return out;
}

}  // namespace

std::optional<Scenario> parse_scenario_json(const std::string& text, const std::string& source,
                                            std::string& error) {
  std::optional<json> j = parse_json_input(text, source, error);
  if (!j) return std::nullopt;
  try {
    Scenario s = read_scenario(*j);
    std::string v = validate_scenario(s);
    if (!v.empty()) {
      error = source + ": " + v;
      return std::nullopt;
    }
    // Tokens are optional: number the positions when none are given.
    const AttentionProblem p = to_problem(s);
    if (s.query_tokens.empty())
      for (int i = 0; i < p.input.n_q(); ++i) s.query_tokens.push_back(std::to_string(i));
    if (s.key_tokens.empty() && p.input.n_k() != p.input.n_q())
      for (int j = 0; j < p.input.n_k(); ++j) s.key_tokens.push_back(std::to_string(j));
    if (s.name.empty()) s.name = source;
    return s;
  } catch (const JsonFieldError& e) {
    error = source + ": " + e.message();
  } catch (const json::exception& e) {
    error = source + ": " + e.what();
  }
  return std::nullopt;
}

std::optional<Scenario> load_scenario_file(const std::string& path, std::string& error) {
  std::string text;
  if (!read_input_file(path, kMaxScenarioFileBytes, text, error)) return std::nullopt;
  return parse_scenario_json(text, path, error);
}

std::string scenario_to_json(const Scenario& s) {
  json j;
  j["format"] = "attention-lab-scenario";
  j["version"] = 1;
  j["name"] = s.name;
  if (!s.description.empty()) j["description"] = s.description;
  j["query_tokens"] = s.query_tokens;
  if (!s.key_tokens.empty()) j["key_tokens"] = s.key_tokens;
  if (s.use_projection) {
    const ProjectionSpec& p = s.projection;
    json pj;
    pj["x"] = matrix_json(p.x);
    if (p.x_kv.size()) pj["x_kv"] = matrix_json(p.x_kv);
    // Projection weights are always written with their head axis, even for one head.
    auto stack3 = [](const HeadStack& st) {
      json out = json::array();
      for (const Matrix& m : st) out.push_back(matrix_json(m));
      return out;
    };
    pj["w_q"] = stack3(p.w_q);
    pj["w_k"] = stack3(p.w_k);
    pj["w_v"] = stack3(p.w_v);
    if (p.w_o.size()) pj["w_o"] = matrix_json(p.w_o);
    if (p.b_o.size()) pj["b_o"] = matrix_json(p.b_o)[0];
    j["projection"] = pj;
  } else {
    j["q"] = heads_json(s.qkv.q);
    j["k"] = heads_json(s.qkv.k);
    j["v"] = heads_json(s.qkv.v);
  }
  const MaskSpec& m = s.options.mask;
  if (!m.empty()) {
    json mj = json::object();
    if (m.causal == CausalAlign::kTopLeft) mj["causal"] = "top-left";
    if (m.causal == CausalAlign::kLowerRight) mj["causal"] = "lower-right";
    if (m.window) mj["window"] = *m.window;
    if (!m.global.empty()) mj["global"] = m.global;
    if (m.key_length) mj["key_length"] = *m.key_length;
    if (!m.custom.empty()) mj["custom"] = heads_json(m.custom);
    if (!m.bias.empty()) mj["bias"] = heads_json(m.bias);
    j["mask"] = mj;
  }
  if (s.options.scale) j["scale"] = *s.options.scale;
  if (s.options.temperature != 1.0f) j["temperature"] = s.options.temperature;
  const VariantSpec& v = s.options.variants;
  if (v.linformer.enabled())
    j["linformer"] = {{"e", heads_json(v.linformer.e)}, {"f", heads_json(v.linformer.f)}};
  if (!v.multi_token.kq_conv.empty() || !v.multi_token.head_mix.empty()) {
    json mj = json::object();
    if (!v.multi_token.kq_conv.empty()) mj["kq_conv"] = heads_json(v.multi_token.kq_conv);
    if (!v.multi_token.head_mix.empty()) mj["head_mix"] = heads_json(v.multi_token.head_mix);
    j["multi_token"] = mj;
  }
  if (s.options.additive) {
    const AdditiveScore& a = *s.options.additive;
    j["additive"] = {
        {"w_q", matrix_json(a.w_q)}, {"w_k", matrix_json(a.w_k)}, {"v", matrix_json(a.v)[0]}};
  }
  return j.dump(2) + "\n";
}

bool save_scenario_file(const Scenario& s, const std::string& path, std::string& error) {
  return write_file_atomically(path, scenario_to_json(s), error);
}

}  // namespace attn
