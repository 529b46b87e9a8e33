// A model step's figure for the worksheet (see model_figures.h).
#include "lessons/model_figures.h"

#include <algorithm>
#include <vector>

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
