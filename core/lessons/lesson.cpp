// Reading lesson files (docs/lessons.md): every field checked, every step's view and question
// checked against the step's own trace, errors naming the file, the step and the field.
#include "lessons/lesson.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "attention/engine.h"
#include "attention/format.h"
#include "io/atomic_file.h"
#include "io/examples.h"
#include "io/input_file.h"
#include "io/json_input.h"
#include "io/scenario_json.h"
#include "io/shipped.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ordered = nlohmann::ordered_json;

// The readers of io/json_input.h throw the same error.
[[noreturn]] void fail(const std::string& field, const std::string& what) {
  throw_field_error(field, what);
}

// "12,345": counts in the limits' messages.
std::string with_commas(uint64_t n) {
  std::string s = std::to_string(n);
  for (int at = static_cast<int>(s.size()) - 3; at > 0; at -= 3) s.insert(at, ",");
  return s;
}

// A string of at most `limit` bytes: every string of a lesson is bounded (lesson.h), so a title
// or a choice of 30,000 characters is an error here rather than a window that cannot draw it or
// a worksheet that takes a minute to lay it out.
std::string read_text(const json& j, const std::string& field, size_t limit) {
  std::string s = read_json_string(j, field);
  if (s.size() > limit)
    fail(field, "is " + with_commas(s.size()) + " bytes long; at most " + with_commas(limit) +
                    " are allowed (docs/lessons.md)");
  return s;
}
// The strings a lesson names things with (examples, models, tabs, stages, properties).
std::string read_name(const json& j, const std::string& field) {
  return read_text(j, field, kMaxLessonLineBytes);
}

// Text: a string or an array of strings (paragraphs), so long text can be written line by line.
std::vector<std::string> read_paragraphs(const json& j, const std::string& field) {
  if (j.is_string()) return {read_text(j, field, kMaxLessonTextBytes)};
  if (!j.is_array())
    fail(field, "expected a string or an array of strings, got " + json_type_name(j));
  if (j.size() > kMaxLessonParagraphs)
    fail(field, "has " + with_commas(j.size()) + " paragraphs; at most " +
                    std::to_string(kMaxLessonParagraphs) + " are allowed (docs/lessons.md)");
  std::vector<std::string> out;
  for (size_t i = 0; i < j.size(); ++i)
    out.push_back(read_text(j[i], field + "[" + std::to_string(i) + "]", kMaxLessonTextBytes));
  return out;
}

uint64_t stack_bytes(const HeadStack& h) {
  uint64_t n = 0;
  for (const Matrix& m : h) n += static_cast<uint64_t>(m.size()) * sizeof(float) + sizeof(Matrix);
  return n;
}

// What a scenario holds in memory, roughly: its numbers and tokens (lesson.h,
// kMaxLessonScenarioBytes).
uint64_t scenario_bytes(const Scenario& s) {
  uint64_t n = sizeof(Scenario) + s.name.size() + s.description.size();
  for (const auto* tokens : {&s.query_tokens, &s.key_tokens})
    for (const std::string& t : *tokens) n += sizeof(std::string) + t.size();
  n += stack_bytes(s.qkv.q) + stack_bytes(s.qkv.k) + stack_bytes(s.qkv.v);
  const ProjectionSpec& p = s.projection;
  n += static_cast<uint64_t>(p.x.size() + p.x_kv.size() + p.w_o.size() + p.b_o.size()) *
       sizeof(float);
  n += stack_bytes(p.w_q) + stack_bytes(p.w_k) + stack_bytes(p.w_v);
  const AttentionOptions& o = s.options;
  n += stack_bytes(o.mask.custom) + stack_bytes(o.mask.bias) + o.mask.global.size() * sizeof(int);
  n += stack_bytes(o.variants.linformer.e) + stack_bytes(o.variants.linformer.f);
  n += stack_bytes(o.variants.multi_token.kq_conv) + stack_bytes(o.variants.multi_token.head_mix);
  if (o.additive)
    n += static_cast<uint64_t>(o.additive->w_q.size() + o.additive->w_k.size() +
                               o.additive->v.size()) *
         sizeof(float);
  return n;
}

// "" when the step's scenario traces within kMaxLessonTraceCells, else why not.
std::string lesson_trace_size_error(const Scenario& s) {
  const long long heads =
      static_cast<long long>(s.use_projection ? s.projection.w_q.size() : s.qkv.q.size());
  const long long cells = heads * static_cast<long long>(s.query_tokens.size()) *
                          static_cast<long long>(s.keys().size());
  if (cells <= kMaxLessonTraceCells) return "";
  return "the step's scenario is too large for a lesson: its trace would hold H·n_q·n_k = " +
         std::to_string(heads) + "·" + std::to_string(s.query_tokens.size()) + "·" +
         std::to_string(s.keys().size()) + " = " + with_commas(static_cast<uint64_t>(cells)) +
         " cells per stage; a lesson's steps hold at most " +
         with_commas(static_cast<uint64_t>(kMaxLessonTraceCells)) + " (docs/robustness.md)";
}

// "FILE: " + message; a parse error of the scenario code already starts with its source.
std::string strip_prefix(const std::string& message, const std::string& prefix) {
  return message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message;
}

// The scenario with the step's variants: the scenario as JSON with the masks, scale and
// temperature replaced, read back, so every check (and message) is the scenario reader's.
Scenario with_variants(const Scenario& s, const json& v, const std::string& field) {
  if (!v.is_object()) fail(field, "expected an object, got " + json_type_name(v));
  check_json_keys(v, field, {"causal", "window", "global", "key_length", "scale", "temperature"});
  json j = json::parse(scenario_to_json(s));
  if (!j.contains("mask")) j["mask"] = json::object();
  for (const char* k : {"causal", "window", "global", "key_length"})
    if (v.contains(k)) {
      if (v[k].is_null())
        j["mask"].erase(k);
      else
        j["mask"][k] = v[k];
    }
  for (const char* k : {"scale", "temperature"})
    if (v.contains(k)) {
      if (v[k].is_null())
        j.erase(k);
      else
        j[k] = v[k];
    }
  std::string error;
  const std::string source = "variants";
  std::optional<Scenario> out = parse_scenario_json(j.dump(), source, error);
  if (!out) {
    // The scenario reader names "mask.window"; the lesson names "variants.window".
    std::string m = strip_prefix(strip_prefix(error, source + ": "), "mask.");
    const size_t colon = m.find(": ");
    if (colon == std::string::npos || m.find(' ') < colon) fail(field, m);
    fail(field + "." + m.substr(0, colon), m.substr(colon + 2));
  }
  return *out;
}

const std::vector<std::string> kProperties = {"scale",   "d_k", "d_v", "heads",       "kv_heads",
                                              "kv_head", "n_q", "n_k", "visible_keys"};

// A stage name no stage has: read_step names the stages its scenario does have.
struct UnknownStage {
  std::string field, name;
};

StageId read_stage(const json& j, const std::string& field) {
  const std::string name = read_name(j, field);
  if (std::optional<StageId> id = stage_from_name(name)) return *id;
  throw UnknownStage{field, name};
}

AnswerRef read_answer(const json& j, const std::string& field, QuestionKind kind) {
  if (!j.is_object()) fail(field, "expected an object, got " + json_type_name(j));
  AnswerRef a;
  if (kind == QuestionKind::kKey) {
    check_json_keys(j, field, {"stage", "head", "row", "pick"});
    a.stage = j.contains("stage") ? read_stage(j["stage"], field + ".stage") : StageId::kWeights;
  } else {
    check_json_keys(j, field, {"stage", "head", "row", "col", "property"});
    if (j.contains("stage") == j.contains("property"))
      fail(field, "give either stage (with row and col) or property");
    if (j.contains("stage")) a.stage = read_stage(j["stage"], field + ".stage");
  }
  if (j.contains("property")) {
    a.property = read_name(j["property"], field + ".property");
    if (std::find(kProperties.begin(), kProperties.end(), a.property) == kProperties.end()) {
      std::string list;
      for (const auto& p : kProperties) list += (list.empty() ? "" : ", ") + p;
      fail(field + ".property", "unknown property '" + a.property + "'; expected one of " + list);
    }
  }
  if (j.contains("head")) a.head = read_json_int(j["head"], field + ".head", 0);
  const bool needs_row = a.stage || a.property == "visible_keys";
  if (needs_row && !j.contains("row")) fail(field + ".row", "missing field");
  if (j.contains("row")) a.row = read_json_int(j["row"], field + ".row", 0);
  if (kind == QuestionKind::kNumber && a.stage) {
    if (!j.contains("col")) fail(field + ".col", "missing field");
    a.col = read_json_int(j["col"], field + ".col", 0);
  }
  if (j.contains("pick")) {
    const std::string p = read_name(j["pick"], field + ".pick");
    if (p != "largest" && p != "smallest")
      fail(field + ".pick", "expected \"largest\" or \"smallest\", got \"" + p + "\"");
    a.smallest = p == "smallest";
  }
  return a;
}

LessonQuestion read_question(const json& j) {
  const std::string f = "question";
  if (!j.is_object()) fail(f, "expected an object, got " + json_type_name(j));
  check_json_keys(j, f, {"kind", "prompt", "answer", "tolerance", "choices", "explanation"});
  LessonQuestion q;
  if (!j.contains("kind")) fail(f + ".kind", "missing field (number, key or statement)");
  const std::string kind = read_name(j["kind"], f + ".kind");
  if (kind == "number")
    q.kind = QuestionKind::kNumber;
  else if (kind == "key")
    q.kind = QuestionKind::kKey;
  else if (kind == "statement")
    q.kind = QuestionKind::kStatement;
  else
    fail(f + ".kind", "unknown kind \"" + kind + "\"; expected number, key or statement");
  if (!j.contains("prompt")) fail(f + ".prompt", "missing field");
  q.prompt = read_text(j["prompt"], f + ".prompt", kMaxLessonLineBytes);
  if (q.prompt.empty()) fail(f + ".prompt", "is empty");
  if (j.contains("explanation"))
    q.explanation = read_text(j["explanation"], f + ".explanation", kMaxLessonTextBytes);
  if (q.kind == QuestionKind::kStatement) {
    for (const char* k : {"answer", "tolerance"})
      if (j.contains(k))
        fail(f + "." + k, "not used by a statement question (mark the true choice instead)");
    if (!j.contains("choices")) fail(f + ".choices", "missing field");
    const json& c = j["choices"];
    if (!c.is_array() || c.size() < 2)
      fail(f + ".choices", "expected an array of at least two choices");
    if (c.size() > kMaxLessonChoices)
      fail(f + ".choices", "has " + with_commas(c.size()) + " choices; at most " +
                               std::to_string(kMaxLessonChoices) +
                               " are allowed (docs/lessons.md)");
    int correct = 0;
    for (size_t i = 0; i < c.size(); ++i) {
      const std::string fi = f + ".choices[" + std::to_string(i) + "]";
      if (!c[i].is_object()) fail(fi, "expected an object {\"text\", \"correct\"}");
      check_json_keys(c[i], fi, {"text", "correct"});
      Choice ch;
      if (!c[i].contains("text")) fail(fi + ".text", "missing field");
      ch.text = read_text(c[i]["text"], fi + ".text", kMaxLessonLineBytes);
      if (c[i].contains("correct")) {
        if (!c[i]["correct"].is_boolean())
          fail(fi + ".correct", "expected true or false, got " + json_type_name(c[i]["correct"]));
        ch.correct = c[i]["correct"].get<bool>();
      }
      correct += ch.correct ? 1 : 0;
      q.choices.push_back(ch);
    }
    if (correct != 1)
      fail(f + ".choices", "exactly one choice must be marked \"correct\": true (found " +
                               std::to_string(correct) + ")");
    return q;
  }
  if (j.contains("choices")) fail(f + ".choices", "only statement questions have choices");
  if (!j.contains("answer")) fail(f + ".answer", "missing field");
  q.answer = read_answer(j["answer"], f + ".answer", q.kind);
  if (j.contains("tolerance")) {
    if (q.kind != QuestionKind::kNumber)
      fail(f + ".tolerance", "only number questions have a tolerance");
    if (!j["tolerance"].is_number())
      fail(f + ".tolerance", "expected a number, got " + json_type_name(j["tolerance"]));
    q.tolerance = j["tolerance"].get<double>();
    if (!(q.tolerance >= 0) || !std::isfinite(q.tolerance) || q.tolerance > 1e6)
      fail(f + ".tolerance", "expected a number >= 0");
  }
  return q;
}

// Checks what a step shows and asks against the trace it will show.
void check_against_trace(const LessonStep& s, const AttentionTrace& t) {
  // The inputs show whatever the scenario's inputs are; every other stage must be in the trace.
  if (!is_input(s.stage) && !t.find(s.stage))
    fail("stage", "unknown stage '" + std::string(stage_name(s.stage)) +
                      "' for this scenario; expected one of " + stage_names(t, true));
  if (s.head >= t.num_heads)
    fail("head", "head " + std::to_string(s.head) + " is out of range; the scenario has " +
                     std::to_string(t.num_heads) + " head(s)");
  if (s.select_query >= t.n_q)
    fail("select[0]", "query " + std::to_string(s.select_query) + " is out of range; there are " +
                          std::to_string(t.n_q) + " queries");
  if (s.select_key >= t.n_k)
    fail("select[1]", "key " + std::to_string(s.select_key) + " is out of range; there are " +
                          std::to_string(t.n_k) + " keys");
  for (size_t i = 0; i < s.highlights.size(); ++i) {
    const Highlight& h = s.highlights[i];
    const std::string f = "highlight[" + std::to_string(i) + "]";
    if (h.query >= t.n_q) fail(f + "[0]", "query " + std::to_string(h.query) + " is out of range");
    if (h.key >= t.n_k) fail(f + "[1]", "key " + std::to_string(h.key) + " is out of range");
  }
  if (!s.question) return;
  const LessonQuestion& q = *s.question;
  if (q.kind == QuestionKind::kStatement) return;
  const AnswerRef& a = q.answer;
  const std::string f = "question.answer";
  if (a.stage) {
    const std::string stage = stage_name(*a.stage);
    const TraceStep* st = t.find(*a.stage);
    if (!st)
      fail(f + ".stage", "unknown stage '" + stage + "' for this scenario; expected one of " +
                             stage_names(t, false));
    if (a.head >= st->num_heads())
      fail(f + ".head", "stage '" + stage + "' has " + std::to_string(st->num_heads()) +
                            " head(s); head " + std::to_string(a.head) + " is out of range");
    const Matrix& m = t.head(*st, a.head);
    if (a.row >= m.rows())
      fail(f + ".row", "row " + std::to_string(a.row) + " is out of range; stage '" + stage +
                           "' has " + std::to_string(m.rows()) + " rows");
    if (q.kind == QuestionKind::kNumber && a.col >= m.cols())
      fail(f + ".col", "column " + std::to_string(a.col) + " is out of range; stage '" + stage +
                           "' has " + std::to_string(m.cols()) + " columns");
    if (q.kind == QuestionKind::kKey && m.cols() != t.n_k)
      fail(f + ".stage", "a key question needs a stage with one column per key (e.g. weights)");
  } else if (a.property == "kv_head") {
    if (a.head >= t.num_heads)
      fail(f + ".head", "query head " + std::to_string(a.head) +
                            " is out of range; the trace has " + std::to_string(t.num_heads) +
                            " head(s)");
  } else if (a.property == "visible_keys") {
    if (a.head >= t.num_heads) fail(f + ".head", "out of range");
    if (a.row >= t.n_q) fail(f + ".row", "out of range");
  }
  std::string error;
  if (q.kind == QuestionKind::kNumber ? !number_answer(q, t, error) : !key_answer(q, t, error))
    fail(f, error);
  const std::string unfair = unfair_at_precision(q, t, shown_decimals(s));
  if (!unfair.empty()) fail(q.kind == QuestionKind::kKey ? f + ".row" : f, unfair);
}

struct StepContext {
  std::string dir;  // the lesson's folder, for relative scenario files
  const LessonStep* previous = nullptr;
};

// The step's scenario: a built-in example, a scenario file or inline object, or the previous
// step's (without its variants).
void read_step_source(const json& j, const StepContext& c, LessonStep& s) {
  if (j.contains("example") && j.contains("scenario"))
    fail("scenario", "give either example or scenario, not both");
  if (j.contains("example")) {
    s.example = read_name(j["example"], "example");
    std::string error;
    std::optional<Scenario> sc = load_example(s.example, error);
    if (!sc) fail("example", error);
    s.scenario = std::move(*sc);
  } else if (j.contains("scenario")) {
    const json& sj = j["scenario"];
    std::string error;
    std::optional<Scenario> sc;
    if (sj.is_string()) {
      s.scenario_file = read_name(sj, "scenario");
      const fs::path p = fs::path(s.scenario_file).is_absolute()
                             ? fs::path(s.scenario_file)
                             : fs::path(c.dir) / s.scenario_file;
      sc = load_scenario_file(p.string(), error);
    } else if (sj.is_object()) {
      s.inline_scenario = true;
      const std::string source = "scenario";
      sc = parse_scenario_json(sj.dump(), source, error);
      if (!sc) error = strip_prefix(error, source + ": ");
    } else {
      fail("scenario",
           "expected a file name or an inline scenario object, got " + json_type_name(sj));
    }
    if (!sc) fail("scenario", error);
    s.scenario = std::move(*sc);
  } else if (c.previous) {
    // The previous step's source, without its variants.
    s.example = c.previous->example;
    s.scenario_file = c.previous->scenario_file;
    s.inline_scenario = c.previous->inline_scenario;
    s.scenario = c.previous->base;
  } else {
    fail("example", "the first step must name an example or a scenario");
  }
}

// "seq2seq": {"model", "tab"}: the seq2seq window the step opens.
void read_step_seq2seq(const json& m, LessonStep& s) {
  if (!m.is_object()) fail("seq2seq", "expected an object {\"model\", \"tab\"}");
  check_json_keys(m, "seq2seq", {"model", "tab"});
  if (m.contains("model")) {
    s.seq2seq_model = read_name(m["model"], "seq2seq.model");
    std::string error;
    if (!resolve_shipped(kSeq2seqModels, s.seq2seq_model, error)) fail("seq2seq.model", error);
  }
  s.seq2seq_tab = m.contains("tab") ? read_name(m["tab"], "seq2seq.tab") : "translate";
  if (s.seq2seq_tab != "translate" && s.seq2seq_tab != "live" && s.seq2seq_tab != "bottleneck")
    fail("seq2seq.tab", "expected translate, live or bottleneck, got \"" + s.seq2seq_tab + "\"");
}

// "lm": {"model", "text", "tab", "layer", "head", "position", "stepper"}: the language model
// the step opens, on which view.
void read_step_lm(const json& m, LessonStep& s) {
  if (!m.is_object()) fail("lm", "expected an object {\"model\", \"text\", \"tab\"}");
  check_json_keys(m, "lm", {"model", "text", "tab", "layer", "head", "position", "stepper"});
  if (m.contains("text")) s.lm_text = read_name(m["text"], "lm.text");
  if (m.contains("layer")) s.lm_layer = read_json_int(m["layer"], "lm.layer", 0);
  if (m.contains("head")) s.lm_head = read_json_int(m["head"], "lm.head", 0);
  if (m.contains("position")) s.lm_position = read_json_int(m["position"], "lm.position", 0);
  if ((s.lm_layer < 0) != (s.lm_head < 0))
    fail(s.lm_layer < 0 ? "lm.layer" : "lm.head", "give layer and head together");
  if (m.contains("stepper")) {
    const std::string name = read_name(m["stepper"], "lm.stepper");
    s.lm_stepper = stage_from_name(name);
    if (!s.lm_stepper) fail("lm.stepper", "no stage is called \"" + name + "\"");
    if (s.lm_layer < 0) fail("lm.layer", "the head to open in the stepper: give layer and head");
  }
  if (s.lm_stepper) {
    // The stage's own view: the rope stage's angles, q and k turned, or same distance.
    s.lm_tab = m.contains("tab") ? read_name(m["tab"], "lm.tab") : "";
    if (!s.lm_tab.empty() &&
        (*s.lm_stepper != StageId::kRope ||
         (s.lm_tab != "angles" && s.lm_tab != "turned" && s.lm_tab != "distance")))
      fail("lm.tab",
           "with \"stepper\": \"rope\", expected angles, turned or distance (other "
           "stages have one view), got \"" +
               s.lm_tab + "\"");
  } else {
    s.lm_tab = m.contains("tab") ? read_name(m["tab"], "lm.tab") : "model";
    // "sinks" is the roles tab on the first-token score, with its attention-sink box;
    // "induction" the roles tab on the induction score; "circuit-why" the circuit tab at its
    // third step, the winning key's score split.
    const std::set<std::string> tabs = {"model", "heads",     "block",   "next",        "roles",
                                        "sinks", "induction", "circuit", "circuit-why", "kv"};
    if (!tabs.count(s.lm_tab))
      fail("lm.tab",
           "expected model, heads, block, next, roles, sinks, induction, circuit, circuit-why or "
           "kv, got \"" +
               s.lm_tab + "\"");
  }
  if (!m.contains("model")) fail("lm.model", "missing field");
  s.lm_model = read_name(m["model"], "lm.model");
  std::string error;
  if (!resolve_shipped(kLmModels, s.lm_model, error)) fail("lm.model", error);
}

// "select" and "highlight": the cells the step points at.
void read_step_cells(const json& j, LessonStep& s) {
  if (j.contains("select")) {
    const json& sel = j["select"];
    if (!sel.is_array() || sel.empty() || sel.size() > 2)
      fail("select", "expected [QUERY] or [QUERY, KEY], got " + json_type_name(sel));
    s.select_query = read_json_int(sel[0], "select[0]", 0);
    if (sel.size() == 2) s.select_key = read_json_int(sel[1], "select[1]", 0);
  }
  if (j.contains("highlight")) {
    const json& h = j["highlight"];
    if (!h.is_array()) fail("highlight", "expected an array of [QUERY] or [QUERY, KEY]");
    if (h.size() > kMaxLessonHighlights)
      fail("highlight", "has " + with_commas(h.size()) + " cells; at most " +
                            with_commas(kMaxLessonHighlights) + " are allowed (docs/lessons.md)");
    for (size_t i = 0; i < h.size(); ++i) {
      const std::string f = "highlight[" + std::to_string(i) + "]";
      if (!h[i].is_array() || h[i].empty() || h[i].size() > 2)
        fail(f, "expected [QUERY] or [QUERY, KEY], got " + json_type_name(h[i]));
      Highlight hl;
      hl.query = read_json_int(h[i][0], f + "[0]", 0);
      if (h[i].size() == 2) hl.key = read_json_int(h[i][1], f + "[1]", 0);
      s.highlights.push_back(hl);
    }
  }
}

LessonStep read_step(const json& j, const StepContext& c) {
  if (!j.is_object()) fail("", "expected an object, got " + json_type_name(j));
  check_json_keys(j, "",
                  {"title", "text", "formula", "example", "scenario", "variants", "seq2seq", "lm",
                   "stage", "head", "select", "highlight", "decimals", "question"});
  LessonStep s;
  if (!j.contains("title")) fail("title", "missing field");
  s.title = read_text(j["title"], "title", kMaxLessonTitleBytes);
  if (j.contains("text")) s.text = read_paragraphs(j["text"], "text");
  if (j.contains("formula")) s.formula = read_text(j["formula"], "formula", kMaxLessonLineBytes);
  read_step_source(j, c, s);
  s.base = s.scenario;
  if (j.contains("variants")) {
    s.variants_json = j["variants"].dump();
    s.scenario = with_variants(s.scenario, j["variants"], "variants");
  }
  if (j.contains("seq2seq")) read_step_seq2seq(j["seq2seq"], s);
  if (j.contains("lm")) read_step_lm(j["lm"], s);
  if (j.contains("head")) s.head = read_json_int(j["head"], "head", 0);
  if (j.contains("decimals")) {
    s.decimals = read_json_int(j["decimals"], "decimals", 1);
    if (s.decimals > 4)
      fail("decimals", "the heatmap shows 1 to 4 decimals, got " + std::to_string(s.decimals));
  }
  read_step_cells(j, s);
  try {
    if (j.contains("stage")) s.stage = read_stage(j["stage"], "stage");
    if (j.contains("question")) s.question = read_question(j["question"]);
    if (s.question && s.lm_stepper && s.question->kind != QuestionKind::kStatement)
      fail("question.kind",
           "a step that opens a model's head in the stepper asks statement questions only (its "
           "numbers are the head's, not the step's)");
  } catch (const UnknownStage& u) {
    // The step's scenario is read by now: list what its trace shows (the strip's stages for the
    // step's view, every stage for a question's answer).
    fail(u.field, "unknown stage '" + u.name + "' for this scenario; expected one of " +
                      stage_names(lesson_step_trace(s), u.field == "stage"));
  }
  const std::string too_large = lesson_trace_size_error(s.scenario);
  if (!too_large.empty()) fail(j.contains("scenario") ? "scenario" : "example", too_large);
  check_against_trace(s, lesson_step_trace(s));
  return s;
}

std::string quoted(const std::string& token) { return "“" + token + "”"; }

// Whether the masks hide key j from query i in head h: the trace's reasons when it has them, else
// the −∞ of its masked stage.
bool is_hidden(const AttentionTrace& t, int h, int i, int j) {
  if (t.has_reasons(h)) return t.hidden_of(h)(i, j) != 0;
  return !std::isfinite(t.head(StageId::kMasked, h)(i, j));
}

double property_value(const AnswerRef& a, const AttentionTrace& t) {
  if (a.property == "scale") return t.scale;
  if (a.property == "d_k") return t.d_k;
  if (a.property == "d_v") return t.d_v;
  if (a.property == "heads") return t.num_heads;
  if (a.property == "kv_heads") return t.num_kv_heads;
  if (a.property == "kv_head") return t.kv_head_of[static_cast<size_t>(a.head)];
  if (a.property == "n_q") return t.n_q;
  if (a.property == "n_k") return t.n_k;
  int visible = 0;  // visible_keys
  for (int j = 0; j < t.n_k; ++j) visible += is_hidden(t, a.head, a.row, j) ? 0 : 1;
  return visible;
}

}  // namespace

std::optional<Lesson> parse_lesson(const std::string& text, const std::string& path,
                                   std::string& error) {
  // Depth-bounded: a file of nested brackets must not overflow the stack (io/json_input.h).
  std::optional<json> parsed = parse_json_input(text, path, error);
  if (!parsed) return std::nullopt;
  const json& j = *parsed;
  Lesson lesson;
  lesson.path = path;
  std::string where;  // "step 3 (“Softmax”): " once inside a step
  try {
    if (!j.is_object()) fail("(top level)", "expected a JSON object, got " + json_type_name(j));
    check_json_keys(j, "", {"format", "version", "title", "summary", "steps"});
    if (j.contains("format") && j["format"] != "attention-lab-lesson")
      fail("format", "expected \"attention-lab-lesson\"");
    if (j.contains("version") && read_json_int(j["version"], "version", 0) != 1)
      fail("version", "unsupported lesson version; expected 1");
    if (!j.contains("title")) fail("title", "missing field");
    lesson.title = read_text(j["title"], "title", kMaxLessonTitleBytes);
    if (j.contains("summary"))
      lesson.summary = read_text(j["summary"], "summary", kMaxLessonLineBytes);
    if (!j.contains("steps")) fail("steps", "missing field");
    const json& steps = j["steps"];
    if (!steps.is_array() || steps.empty()) fail("steps", "expected a non-empty array of steps");
    // Refused before any step is read: each step computes its trace and keeps its scenario.
    if (steps.size() > kMaxLessonSteps)
      fail("steps", "the lesson has " + with_commas(steps.size()) + " steps; at most " +
                        with_commas(kMaxLessonSteps) + " are read (docs/robustness.md)");
    lesson.steps.reserve(steps.size());  // c.previous points into it
    StepContext c;
    c.dir = fs::path(path).parent_path().string();
    uint64_t held = 0;  // what the steps' scenarios hold so far
    for (size_t i = 0; i < steps.size(); ++i) {
      where = "step " + std::to_string(i + 1);
      if (steps[i].is_object() && steps[i].contains("title") && steps[i]["title"].is_string())
        where += " (" + quoted(clip_utf8(steps[i]["title"].get<std::string>(), 60)) + ")";
      where += ": ";
      lesson.steps.push_back(read_step(steps[i], c));
      c.previous = &lesson.steps.back();
      const LessonStep& st = lesson.steps.back();
      held += scenario_bytes(st.scenario) + scenario_bytes(st.base);
      if (held > kMaxLessonScenarioBytes)
        fail("scenario", "the steps' scenarios up to this one hold " + byte_size_text(held) +
                             "; a lesson holds at most " + byte_size_text(kMaxLessonScenarioBytes) +
                             " (each step keeps its own copy; docs/robustness.md)");
    }
  } catch (const JsonFieldError& e) {
    error = path + ": " + where + e.message();
    return std::nullopt;
  }
  return lesson;
}

std::optional<Lesson> load_lesson_file(const std::string& path, std::string& error) {
  std::string text;
  if (!read_input_file(path, kMaxLessonFileBytes, text, error)) return std::nullopt;
  return parse_lesson(text, path, error);
}

std::vector<LessonInfo> list_course(std::string& error) {
  std::vector<LessonInfo> out;
  const std::vector<ShippedItem> items = list_shipped(kLessons);
  if (items.empty()) error = no_shipped_message(kLessons);
  for (const ShippedItem& it : items) {
    // Titles only: a full parse computes every step's trace, and a menu needs none of that.
    std::string text, e;
    LessonInfo info{it.path, it.name, ""};
    if (read_input_file(it.path, kMaxLessonFileBytes, text, e)) {
      const json j = json::parse(text, nullptr, false);
      if (j.is_object() && j.contains("title") && j["title"].is_string())
        info.title = clip_utf8(j["title"].get<std::string>(), kMaxLessonTitleBytes);
      if (j.is_object() && j.contains("summary") && j["summary"].is_string())
        info.summary = clip_utf8(j["summary"].get<std::string>(), kMaxLessonLineBytes);
    }
    out.push_back(info);
  }
  return out;
}

AttentionTrace scenario_trace(const Scenario& scenario) {
  const AttentionProblem p = to_problem(scenario);
  AttentionTrace t = begin_trace(p);
  t.backend = "cpu";
  compute_stages_cpu(p, t);
  label_stages(p, t);
  add_scenario_steps(scenario, t);
  return t;
}

AttentionTrace lesson_step_trace(const LessonStep& step) { return scenario_trace(step.scenario); }

std::optional<double> number_answer(const LessonQuestion& q, const AttentionTrace& t,
                                    std::string& error) {
  const AnswerRef& a = q.answer;
  if (!a.property.empty()) {
    if (a.property == "visible_keys" && (a.head >= t.num_heads || a.row >= t.n_q)) {
      error = "the trace has no query row " + std::to_string(a.row);
      return std::nullopt;
    }
    if (a.property == "kv_head" && a.head >= t.num_heads) {
      error = "the trace has no query head " + std::to_string(a.head);
      return std::nullopt;
    }
    return property_value(a, t);
  }
  const TraceStep* st = a.stage ? t.find(*a.stage) : nullptr;
  const std::string stage = a.stage ? stage_name(*a.stage) : "";
  const Matrix* m = st && a.head < st->num_heads() ? &t.head(*st, a.head) : nullptr;
  if (!m || a.row >= m->rows() || a.col >= m->cols()) {
    error = "the trace has no cell (" + std::to_string(a.row) + ", " + std::to_string(a.col) +
            ") in stage '" + stage + "' head " + std::to_string(a.head);
    return std::nullopt;
  }
  const double v = (*m)(a.row, a.col);
  if (!std::isfinite(v)) {
    error = "the answer cell (" + std::to_string(a.row) + ", " + std::to_string(a.col) +
            ") of stage '" + stage + "' is hidden (−∞); ask about a visible cell";
    return std::nullopt;
  }
  return v;
}

std::optional<int> key_answer(const LessonQuestion& q, const AttentionTrace& t,
                              std::string& error) {
  const AnswerRef& a = q.answer;
  const TraceStep* st = a.stage ? t.find(*a.stage) : nullptr;
  const Matrix* mp = st && a.head < st->num_heads() ? &t.head(*st, a.head) : nullptr;
  if (!mp || a.row >= mp->rows() || mp->cols() != t.n_k) {
    error = "the trace has no row " + std::to_string(a.row) + " of keys in stage '" +
            (a.stage ? stage_name(*a.stage) : "") + "'";
    return std::nullopt;
  }
  const Matrix& m = *mp;
  // The head's mask, when the stage is per query head (k/v-head stages have no key columns).
  const int mask_head = std::min<int>(a.head, t.num_heads - 1);
  int best = -1;
  for (int j = 0; j < m.cols(); ++j) {
    if (mask_head >= 0 && is_hidden(t, mask_head, a.row, j)) continue;
    if (best < 0 || (a.smallest ? m(a.row, j) < m(a.row, best) : m(a.row, j) > m(a.row, best)))
      best = j;
  }
  if (best < 0) {
    error = "query row " + std::to_string(a.row) + " sees no key";
    return std::nullopt;
  }
  // A tie has no single right key: the question would be unfair.
  for (int j = 0; j < m.cols(); ++j)
    if (j != best && (mask_head < 0 || !is_hidden(t, mask_head, a.row, j)) &&
        std::abs(m(a.row, j) - m(a.row, best)) < 1e-6f) {
      error = "keys " + std::to_string(best) + " and " + std::to_string(j) + " of row " +
              std::to_string(a.row) + " tie; a key question needs one clear answer";
      return std::nullopt;
    }
  return best;
}

int statement_answer(const LessonQuestion& q) {
  for (size_t i = 0; i < q.choices.size(); ++i)
    if (q.choices[i].correct) return static_cast<int>(i);
  return -1;
}

std::string unfair_at_precision(const LessonQuestion& q, const AttentionTrace& t, int decimals) {
  const double unit = std::pow(10.0, -decimals);
  const std::string d = std::to_string(decimals) + " decimal" + (decimals == 1 ? "" : "s");
  std::string error;
  if (q.kind == QuestionKind::kKey) {
    const std::optional<int> best = key_answer(q, t, error);
    if (!best) return error;
    const AnswerRef& a = q.answer;
    const Matrix& m = t.head(*a.stage, a.head);
    const int mask_head = std::min<int>(a.head, t.num_heads - 1);
    int second = -1;
    for (int j = 0; j < m.cols(); ++j) {
      if (j == *best || (mask_head >= 0 && is_hidden(t, mask_head, a.row, j))) continue;
      if (second < 0 ||
          (a.smallest ? m(a.row, j) < m(a.row, second) : m(a.row, j) > m(a.row, second)))
        second = j;
    }
    if (second < 0) return "";  // one visible key: nothing to confuse it with
    const double x = m(a.row, *best), y = m(a.row, second);
    // A float's last bit must not make a gap of exactly one unit unfair.
    if (std::abs(x - y) >= unit * (1 - 1e-4)) return "";
    return "a near-tie at " + d + ": keys " + quoted(t.key_tokens[*best]) + " (" +
           format_fixed(x, 4, true) + ") and " + quoted(t.key_tokens[second]) + " (" +
           format_fixed(y, 4, true) + ") of row " + std::to_string(a.row) +
           " differ by less than " + format_fixed(unit, decimals, true) + ", so the screen shows " +
           format_fixed(x, decimals, true) + " and " + format_fixed(y, decimals, true) +
           "; ask about another row or example";
  }
  if (q.kind != QuestionKind::kNumber) return "";
  const std::optional<double> v = number_answer(q, t, error);
  if (!v) return error;
  // Whole-number properties (d_k, heads, visible keys …) are exact.
  if (!q.answer.property.empty() && q.answer.property != "scale") return "";
  if (q.tolerance >= unit) return "";  // both neighbours are accepted
  // Within a twentieth of a unit of …5 (0.3450 ± 0.0005 at 2 decimals): rounded working on the
  // way can land on either side.
  constexpr double kEdge = 0.05;
  const double units = *v / unit;
  const double edge = std::abs(units - std::floor(units) - 0.5);
  if (edge >= kEdge) return "";
  const double below = std::floor(units) * unit, above = below + unit;
  return "the answer " + format_fixed(*v, 4, true) + " is on the rounding edge between " +
         format_fixed(below, decimals, true) + " and " + format_fixed(above, decimals, true) +
         " at " + d +
         ": working from the rounded numbers on screen can give either; ask about "
         "another cell, or set a tolerance of " +
         format_fixed(unit, decimals, true) + " so both are right";
}

std::vector<std::string> question_options(const LessonQuestion& q, const AttentionTrace& t) {
  std::vector<std::string> out;
  if (q.kind == QuestionKind::kKey) {
    for (const std::string& k : t.key_tokens) out.push_back(k);
  } else if (q.kind == QuestionKind::kStatement) {
    for (const Choice& c : q.choices) out.push_back(c.text);
  }
  return out;
}

std::string answer_text(const LessonQuestion& q, const AttentionTrace& t, int precision,
                        std::string& error) {
  switch (q.kind) {
    case QuestionKind::kNumber: {
      const std::optional<double> v = number_answer(q, t, error);
      if (!v) return "";
      if (std::abs(*v - std::round(*v)) < 1e-9 && !q.answer.property.empty() &&
          q.answer.property != "scale")
        return std::to_string(static_cast<long long>(std::llround(*v)));
      return format_fixed(*v, precision, true);
    }
    case QuestionKind::kKey: {
      const std::optional<int> k = key_answer(q, t, error);
      if (!k) return "";
      return quoted(t.key_tokens[*k]);
    }
    case QuestionKind::kStatement: {
      const int c = statement_answer(q);
      return std::string(1, static_cast<char>('A' + c)) + ". " + q.choices[c].text;
    }
  }
  return "";
}

AnswerVerdict check_number(const LessonQuestion& q, const AttentionTrace& t, double guess,
                           int precision) {
  AnswerVerdict v;
  std::string error;
  const std::optional<double> right = number_answer(q, t, error);
  if (!right) {
    v.feedback = "This question cannot be checked on the current numbers: " + error + ".";
    return v;
  }
  // Half a unit of the last decimal shown is always accepted: the answer rounded as displayed.
  const double tol = std::max(q.tolerance, 0.5 * std::pow(10.0, -precision)) + 1e-9;
  v.correct = std::abs(guess - *right) <= tol;
  const std::string shown = answer_text(q, t, precision, error);
  if (v.correct)
    v.feedback = "Right: " + shown + ".";
  else
    v.feedback = "Not quite: the answer is " + shown + " (you were off by " +
                 format_fixed(std::abs(guess - *right), precision, true) + ").";
  if (!q.explanation.empty()) v.feedback += " " + q.explanation;
  return v;
}

AnswerVerdict check_choice(const LessonQuestion& q, const AttentionTrace& t, int guess) {
  AnswerVerdict v;
  std::string error;
  int right = -1;
  if (q.kind == QuestionKind::kKey) {
    const std::optional<int> k = key_answer(q, t, error);
    if (!k) {
      v.feedback = "This question cannot be checked on the current numbers: " + error + ".";
      return v;
    }
    right = *k;
  } else {
    right = statement_answer(q);
  }
  v.correct = guess == right;
  const std::string shown = answer_text(q, t, 4, error);
  v.feedback = v.correct ? "Right: " + shown + "." : "Not quite: the answer is " + shown + ".";
  if (!q.explanation.empty()) v.feedback += " " + q.explanation;
  return v;
}

bool append_step_to_file(const std::string& path, const std::string& title,
                         const std::string& step_json, std::string& error) {
  ordered lesson;
  std::error_code ec;
  if (fs::exists(path, ec)) {
    std::string text;
    if (!read_input_file(path, kMaxLessonFileBytes, text, error)) return false;
    std::string ignored;
    if (check_json_depth(text, kMaxJsonDepth, ignored))
      lesson = ordered::parse(text, nullptr, false);
    if (lesson.is_null() || lesson.is_discarded() || !lesson.is_object() ||
        (lesson.contains("steps") && !lesson["steps"].is_array())) {
      error = path + ": not a lesson file (expected a JSON object with \"steps\"); not changed";
      return false;
    }
  } else {
    lesson["format"] = "attention-lab-lesson";
    lesson["version"] = 1;
    lesson["title"] = title;
    lesson["steps"] = ordered::array();
  }
  lesson["steps"].push_back(ordered::parse(step_json));
  const std::string text = lesson.dump(2) + "\n";
  // The file must still read as a lesson before it replaces the old one.
  if (!parse_lesson(text, path, error)) return false;
  return write_file_atomically(path, text, error);
}

std::string step_json_for_view(const std::string& title, const Scenario& scenario,
                               const std::string& example, StageId stage, int head,
                               int select_query, int select_key) {
  ordered step;
  step["title"] = title;
  step["text"] = ordered::array({"(Write what the class should notice here.)"});
  bool by_name = false;
  if (!example.empty()) {
    std::string error;
    if (std::optional<Scenario> ex = load_example(example, error)) {
      // The same inputs as the example: name it, and record masks, scale and temperature.
      Scenario same = *ex;
      same.options = scenario.options;
      by_name = scenario_to_json(same) == scenario_to_json(scenario);
    }
  }
  if (by_name) {
    step["example"] = example;
    ordered v = ordered::object();
    const MaskSpec& m = scenario.options.mask;
    v["causal"] = m.causal == CausalAlign::kTopLeft      ? ordered("top-left")
                  : m.causal == CausalAlign::kLowerRight ? ordered("lower-right")
                                                         : ordered(false);
    v["window"] = m.window ? ordered(*m.window) : ordered(nullptr);
    v["global"] = m.global;
    v["key_length"] = m.key_length ? ordered(*m.key_length) : ordered(nullptr);
    v["scale"] = scenario.options.scale ? ordered(*scenario.options.scale) : ordered(nullptr);
    v["temperature"] = scenario.options.temperature;
    step["variants"] = v;
  } else {
    step["scenario"] = ordered::parse(scenario_to_json(scenario));
  }
  step["stage"] = stage_name(stage);
  if (head > 0) step["head"] = head;
  if (select_query >= 0) {
    step["select"] = ordered::array({select_query});
    if (select_key >= 0) step["select"].push_back(select_key);
  }
  return step.dump();
}

}  // namespace attn
