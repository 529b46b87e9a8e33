// A model step's figure for the worksheet (see model_figures.h).
#include "lessons/model_figures.h"

#include <algorithm>
#include <vector>

#include "attention/format.h"
#include "io/shipped.h"
#include "lm/head_trace.h"
#include "lm/model.h"
#include "render/align_plot.h"
#include "render/heatmap_view.h"
#include "seq2seq/alignment.h"
#include "seq2seq/model_io.h"

namespace attn {
namespace {

std::optional<LabelledMatrix> seq2seq_figure(const LessonStep& step, std::string& error) {
  const std::optional<std::string> path =
      resolve_shipped(kSeq2seqModels, step.seq2seq_model, error);
  if (!path) return std::nullopt;
  s2s::Model m;
  if (!s2s::load_model(*path, m, error)) return std::nullopt;
  s2s::Alignment a;
  if (!s2s::align(m, s2s::kExampleInput, a, error)) return std::nullopt;
  AlignmentPlot p;
  p.title = s2s::score_name(m.config.score) + ": “" + std::string(s2s::kExampleInput) + "” → “" +
            a.output + "”";
  if (m.config.score == s2s::Score::kNone)
    p.subtitle = "no attention: every step sees only h_T, the state after the last character";
  p.rows = a.rows;
  p.cols = a.cols;
  p.weights = a.weights;
  p.visible = a.visible;
  return alignment_matrix(p);
}

// The Next tab's chart on paper: the ten likeliest tokens after the step's position (the last
// token unless the step names one), likeliest first along the row, each coloured and printed with
// its chance.
LabelledMatrix next_token_figure(const lm::Model& m, const std::vector<int>& ids,
                                 const LessonStep& step) {
  const int T = static_cast<int>(ids.size());
  const int at = step.lm_position >= 0 && step.lm_position < T ? step.lm_position : T - 1;
  lm::Activations acts;
  lm::ForwardOptions o;
  o.all_logits = false;
  lm::gpt_forward(m, ids, 1, T, acts, o);
  const std::vector<std::pair<int, double>> top =
      at + 1 < T ? lm::top_tokens_at(m, acts, at, 10) : lm::top_next_tokens(m.config, acts, 10);
  LabelledMatrix fig;
  const std::string after = m.tokenizer.display(ids[static_cast<size_t>(at)]);
  fig.title = m.name + ": the next token after “" + after + "”";
  fig.subtitle =
      "its ten likeliest of " + std::to_string(m.config.vocab_size) + " tokens, with their chances";
  fig.row_labels = {"chance"};
  fig.values = Matrix(1, static_cast<int>(top.size()));
  for (size_t i = 0; i < top.size(); ++i) {
    fig.col_labels.push_back("“" + m.tokenizer.display(top[i].first) + "”");
    fig.values(0, static_cast<int>(i)) = static_cast<float>(top[i].second);
    fig.numbers.push_back(format_fixed(100 * top[i].second, 1) + " %");
  }
  // From 0 to the likeliest, so the colours tell the chances apart however small they are; the
  // printed chances are the scale (a colour bar in fractions beside percentages would confuse).
  fig.color_bar = false;
  fig.scale.lo = 0;
  fig.scale.hi = top.empty() ? 1 : std::max(top.front().second, 1e-6);
  return fig;
}

std::optional<LabelledMatrix> lm_figure(const LessonStep& step, std::string& error) {
  const std::string folder = lm::resolve_model_folder(step.lm_model, error);
  if (folder.empty()) return std::nullopt;
  lm::Model m;
  if (!lm::load_model(folder, m, error)) return std::nullopt;
  if (step.lm_text.empty() || !lm::valid_utf8(step.lm_text)) {
    error = "the step's language-model text is empty or not UTF-8";
    return std::nullopt;
  }
  const std::vector<int> ids = m.tokenizer.encode(step.lm_text);
  if (static_cast<int>(ids.size()) > m.config.n_positions) {
    error = "the step's text has " + std::to_string(ids.size()) + " tokens, more than " + m.name +
            "'s n_positions = " + std::to_string(m.config.n_positions);
    return std::nullopt;
  }
  if (step.lm_tab == "next") return next_token_figure(m, ids, step);
  const int layer = std::clamp(step.lm_layer, 0, m.config.n_layer - 1);
  const int head = std::clamp(step.lm_head, 0, m.config.n_head - 1);
  lm::Activations acts;
  lm::ForwardOptions o;
  o.all_logits = false;
  lm::gpt_forward(m, ids, 1, static_cast<int>(ids.size()), acts, o);
  const Scenario s =
      lm::head_scenario(m, acts, layer, head, lm::display_tokens(m.tokenizer, ids), step.lm_text);
  const AttentionTrace t = scenario_trace(s);
  HeatmapOptions h;
  h.step = StageId::kWeights;
  h.precision = 2;
  LabelledMatrix fig = stage_matrix(t, h);
  fig.title = m.name + ": layer " + std::to_string(layer) + ", head " + std::to_string(head);
  // The title names the model, the layer and the head; the subtitle began with the trace's name,
  // which says them again (with, for a grouped-query model, the query heads sharing the K/V
  // head): a line so long that, fitted to the page's width, it shrank the whole figure.
  const std::string repeat = t.name + " · ";
  if (const size_t at = fig.subtitle.find(repeat); at != std::string::npos)
    fig.subtitle.erase(at, repeat.size());
  return fig;
}

}  // namespace

std::optional<LabelledMatrix> model_step_figure(const LessonStep& step, std::string& error) {
  error.clear();
  if (!step.seq2seq_model.empty()) return seq2seq_figure(step, error);
  if (!step.lm_model.empty()) return lm_figure(step, error);
  return std::nullopt;
}

}  // namespace attn
