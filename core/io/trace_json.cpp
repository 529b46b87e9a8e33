// Serialises an AttentionTrace to the JSON layout of cli.md.
#include "io/trace_json.h"

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

namespace attn {

double float_for_json(float x) {
  // Printing the float's shortest representation and reading it as a double keeps "0.31" short
  // in the JSON instead of 0.3100000023841858.
  char buf[32];
  auto res = std::to_chars(buf, buf + sizeof buf, x);
  double d = 0;
  std::from_chars(buf, res.ptr, d);
  return d;
}

namespace {

// Appends a matrix row as nlohmann's dump of a json array of float_for_json values would read,
// character for character (its own double formatting, null for -inf), without building a json
// value per cell: a long sequence's trace has millions of them.
void append_row(std::string& o, const float* row, Eigen::Index cols) {
  o += '[';
  char buf[64];
  for (Eigen::Index c = 0; c < cols; ++c) {
    if (c) o += ',';
    if (!std::isfinite(row[c])) {
      o += "null";  // -inf in masked cells
      continue;
    }
    o.append(buf, nlohmann::detail::to_chars(buf, buf + sizeof buf, float_for_json(row[c])));
  }
  o += ']';
}

}  // namespace

std::string trace_to_json(const AttentionTrace& t) {
  // Written by hand around nlohmann's scalar/array dumps so the keys keep cli.md's order and
  // each matrix row stays on one line (readable, and diff-friendly for slide pipelines).
  using nlohmann::json;
  std::string o = "{\n";
  auto field = [&o](const char* key, const json& value, bool last = false) {
    o += "  \"";
    o += key;
    o += "\": " + value.dump() + (last ? "\n" : ",\n");
  };
  field("name", t.name);
  field("backend", t.backend);
  field("query_tokens", t.query_tokens);
  field("key_tokens", t.key_tokens);
  // Linformer: key_tokens are the virtual keys; these name the rows of k and v.
  if (!t.input_key_tokens.empty()) field("input_key_tokens", t.input_key_tokens);
  field("num_heads", t.num_heads);
  field("num_kv_heads", t.num_kv_heads);
  field("kv_head_of", t.kv_head_of);
  field("scale", float_for_json(t.scale));
  field("temperature", float_for_json(t.temperature));
  json empty = json::array();
  for (const auto& rows : t.empty_row) {
    json list = json::array();
    for (size_t i = 0; i < rows.size(); ++i)
      if (rows[i]) list.push_back(i);
    empty.push_back(list);
  }
  field("empty_rows", empty);  // per head: queries whose every key is hidden (weights, output 0)
  if (t.projection_form_gap) field("projection_form_gap", *t.projection_form_gap);
  o += "  \"steps\": [\n";
  for (size_t si = 0; si < t.steps.size(); ++si) {
    const TraceStep& s = t.steps[si];
    o += "    {\"id\": " + json(stage_name(s.id)).dump() + ", \"title\": " + json(s.title).dump() +
         ", \"formula\": " + json(s.formula).dump() + ",\n     \"heads\": [\n";
    const size_t heads = static_cast<size_t>(s.num_heads());
    for (size_t h = 0; h < heads; ++h) {
      const Matrix& m = t.head(s, static_cast<int>(h));
      o += "      {\"head\": " + std::to_string(h) +
           ", \"kv_head\": " + std::to_string(h < s.kv_head.size() ? s.kv_head[h] : 0) +
           ", \"rows\": " + std::to_string(m.rows()) + ", \"cols\": " + std::to_string(m.cols()) +
           ", \"data\": [\n";
      for (Eigen::Index r = 0; r < m.rows(); ++r) {
        o += "        ";
        append_row(o, m.data() + r * m.cols(), m.cols());
        o += r + 1 < m.rows() ? ",\n" : "\n";
      }
      o += std::string("      ]}") + (h + 1 < heads ? ",\n" : "\n");
    }
    o += std::string("    ]}") + (si + 1 < t.steps.size() ? ",\n" : "\n");
  }
  o += "  ]\n}\n";
  return o;
}

}  // namespace attn
