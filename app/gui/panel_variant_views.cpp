// The window that shows what the variants beyond masks do. Linformer: the cost (cells computed
// against n, n·k beside n²) and the error against full attention on the same Q, K, V as k grows.
// Multi-Token Attention: the score map before and after the key–query convolution with the kernel
// drawn over the cells it reads for the hovered cell, and each head's weights before and after
// head mixing.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "attention/engine.h"
#include "attention/linformer.h"
#include "attention/multi_token.h"
#include "gui/chart_widget.h"
#include "gui/heatmap_widget.h"
#include "gui/ui.h"
#include "train/background_job.h"

namespace attn {

// What the views derive from the trace, kept between frames and derived again only when the trace
// (or the head shown) changes, so a frame's work does not grow with n²; and where the pointer was.
// Linformer's error curve against full attention, for the trace of `serial`.
struct LinformerCurve {
  uint64_t serial = 0;
  std::vector<int> ks;
  std::vector<double> error;
};

struct VariantViewsState {
  // Linformer's error curve against full attention for the current Q, K, V: one full attention
  // per k, seconds at 2048 tokens, so it is computed on a worker and the window keeps drawing.
  uint64_t error_serial = 0;  // the trace the curve (or its failure) is for
  std::vector<int> ks;
  std::vector<double> error;
  std::string error_failure;  // why the curve could not be computed ("" when it was)
  BackgroundJob<LinformerCurve> error_job;
  uint64_t job_serial = 0;  // the trace the running job computes for
  // The weights of the unconvolved scores (one query–key pair at a time) of one head.
  uint64_t plain_serial = 0;
  int plain_head = -1;
  Matrix plain_w;
  // The widest query token at the font size (the space for the row names).
  uint64_t rows_serial = 0;
  float rows_font = 0, rows_w = 0;
  // The widest key token at the size key_labels writes them.
  uint64_t keys_serial = 0;
  float keys_size = 0, keys_w = 0;
  int keys_cols = -1;
  // The cell the frames follow: the last one hovered.
  int conv_i = -1, conv_j = -1;
  int mix_h = -1, mix_i = -1, mix_j = -1;
};

namespace {

VariantViewsState& views_state(Ui& ui) { return ui.variant_views.get(); }

void title(Ui& ui, const char* text) {
  ImGui::Spacing();
  ImGui::PushFont(ui.fonts.bold);
  ImGui::TextUnformatted(text);
  ImGui::PopFont();
}

std::string count_text(double x) {
  char buf[32];
  if (x >= 1e6)
    std::snprintf(buf, sizeof buf, "%.1f M", x / 1e6);
  else if (x >= 1e4)
    std::snprintf(buf, sizeof buf, "%.0f k", x / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.0f", x);
  return buf;
}

void linformer_views(Ui& ui) {
  AppState& st = ui.state;
  const AttentionTrace& t = st.trace();
  const int k = t.variants.linformer.k();
  const int n = static_cast<int>(t.input_key_tokens.size());
  const float fs = ImGui::GetFontSize();
  title(ui, "Linformer: what k buys");
  ImGui::PushTextWrapPos(0);
  ImGui::Text(
      "%d keys are projected to k = %d virtual keys: each query computes %d scores instead of %d "
      "(%d × %d = %d cells instead of %d × %d = %d).",
      n, k, k, n, t.n_q, k, t.n_q * k, t.n_q, n, t.n_q * n);
  ImGui::PopTextWrapPos();

  // Cost: cells computed against n for this k.
  ChartSpec cost;
  ChartSeries full{"full attention: n²", {}, IM_COL32(213, 94, 0, 255)};
  ChartSeries lin{"Linformer: n·k (k = " + std::to_string(k) + ")", {}, IM_COL32(0, 114, 178, 255)};
  // Small n, where both lines fit one axis; the text below gives a long sequence's figures.
  for (int len = 8; len <= 96; len += 8) {
    cost.x_labels.push_back(std::to_string(len));
    full.y.push_back(static_cast<float>(len * len));
    lin.y.push_back(static_cast<float>(len * k));
  }
  cost.series = {full, lin};
  cost.x_title = "sequence length n";
  cost.y_title = "score cells per head";
  cost.y_min = 0;
  const float chart_h = std::max(fs * 11, ImGui::GetContentRegionAvail().y * 0.5f);
  const float half = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) / 2;
  const bool side = half > fs * 22;
  cost.size = {side ? half : 0, chart_h};
  ImGui::BeginGroup();
  ImGui::TextUnformatted("Cost: cells computed against n");
  draw_line_chart(widgets(ui), cost);
  ImGui::Text("at n = 4096: %s cells instead of %s", count_text(4096.0 * k).c_str(),
              count_text(4096.0 * 4096).c_str());
  ImGui::EndGroup();
  if (side) ImGui::SameLine();

  // Error: the same Q, K, V with random E, F for every k, computed once per trace on a worker.
  VariantViewsState& cache = views_state(ui);
  if (std::optional<JobResult<LinformerCurve>> done = cache.error_job.poll()) {
    const bool whole =
        done->ok() && !done->cancelled && done->value->error.size() == done->value->ks.size();
    if (whole && done->value->serial == st.trace_serial()) {
      cache.ks = std::move(done->value->ks);
      cache.error = std::move(done->value->error);
      cache.error_failure.clear();
      cache.error_serial = done->value->serial;
    } else if (!done->ok() && !done->cancelled) {
      cache.error_failure = done->error;
      cache.error_serial = cache.job_serial;  // not tried again until the trace changes
      st.set_message("Linformer's error curve could not be computed: " + done->error, true);
    }
  }
  if (cache.error_serial != st.trace_serial()) {
    if (!cache.error_job.running()) {
      AttentionProblem full_problem = to_problem(st.scenario());
      full_problem.options.variants = {};
      std::vector<int> ks;
      for (int kk = 1; kk <= n; kk += std::max(1, n / 16)) ks.push_back(kk);
      if (ks.back() != n) ks.push_back(n);
      cache.job_serial = st.trace_serial();
      cache.error_job.start([p = std::move(full_problem), ks, serial = cache.job_serial,
                             seed = st.linformer_seed * 7 + 3](JobControl& control) {
        // A newer trace stops it between two ks.
        LinformerCurve c{serial, ks, {}};
        c.error = linformer_error_by_k(p, ks, seed, [&](size_t done) {
          control.set_progress(static_cast<double>(done) / static_cast<double>(ks.size()));
          return !control.cancelled();
        });
        return c;
      });
    } else if (cache.job_serial != st.trace_serial()) {
      cache.error_job.cancel();  // out of date: it stops at its next k, then a new one starts
    }
  }
  ui.variant_views.busy = cache.error_job.running();  // keep drawing while it runs
  ChartSpec err;
  ChartSeries e{"mean |output − full attention's output|", {}, IM_COL32(0, 158, 115, 255)};
  for (size_t i = 0; i < cache.ks.size(); ++i) {
    err.x_labels.push_back(std::to_string(cache.ks[i]));
    e.y.push_back(static_cast<float>(cache.error[i]));
  }
  err.series = {e};
  err.x_title = "k (virtual keys), random E and F";
  err.y_title = "error";
  err.y_min = 0;
  err.size = {side ? half : 0, chart_h};
  ImGui::BeginGroup();
  ImGui::TextUnformatted("Error against full attention on the same Q, K, V");
  if (cache.error_job.running())
    ImGui::TextDisabled("computing… %d%%  %.1f s",
                        static_cast<int>(cache.error_job.progress() * 100),
                        cache.error_job.elapsed_seconds());
  else if (!cache.error_failure.empty())
    ImGui::TextColored(ImVec4(0.8f, 0.2f, 0.1f, 1), "could not be computed: %s",
                       cache.error_failure.c_str());
  draw_line_chart(widgets(ui), err);
  ImGui::TextDisabled("random projections: k near n is close, small k is coarse");
  ImGui::EndGroup();
}

// Where a map was drawn and the cell under the pointer (-1: none), for the frames drawn on top.
struct MapResult {
  int row = -1, col = -1;
  ImVec2 origin;
  float cell = 0;
};

// Key tokens written upright above a map of `cols` cells starting at the cursor; advances the
// cursor past them. Nothing when the cells are too narrow for readable text.
void key_labels(Ui& ui, const std::vector<std::string>& tokens, int cols, float cell) {
  const float fs = ImGui::GetFontSize(), size = std::min(fs * 0.8f, cell * 0.95f);
  if (size < fs * 0.5f) return;
  VariantViewsState& vs = views_state(ui);
  if (vs.keys_serial != ui.state.trace_serial() || vs.keys_size != size || vs.keys_cols != cols) {
    vs.keys_serial = ui.state.trace_serial();
    vs.keys_size = size;
    vs.keys_cols = cols;
    vs.keys_w = 0;
    for (int j = 0; j < cols && j < static_cast<int>(tokens.size()); ++j)
      vs.keys_w =
          std::max(vs.keys_w, text_width(ui.fonts.regular, size, tokens[static_cast<size_t>(j)]));
  }
  const float tall = std::min(vs.keys_w, fs * 5);
  const ImVec2 o = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  if (tall <= cell) {  // every label fits its cell's width: written across, centred
    for (int j = 0; j < cols && j < static_cast<int>(tokens.size()); ++j) {
      const std::string& tok = tokens[static_cast<size_t>(j)];
      draw_text(widgets(ui), dl, ui.fonts.regular, size,
                {o.x + cell * static_cast<float>(j) +
                     (cell - text_width(ui.fonts.regular, size, tok)) / 2,
                 o.y},
                ImGui::GetColorU32(ImGuiCol_Text), tok);
    }
    ImGui::Dummy({cell * static_cast<float>(cols), size + fs * 0.2f});
    return;
  }
  for (int j = 0; j < cols && j < static_cast<int>(tokens.size()); ++j)
    draw_text(widgets(ui), dl, ui.fonts.regular, size,
              {o.x + cell * static_cast<float>(j) + (cell - size) / 2, o.y + tall},
              ImGui::GetColorU32(ImGuiCol_Text),
              abbreviate(ui.fonts.regular, size, tokens[static_cast<size_t>(j)], tall), true);
  ImGui::Dummy({cell * static_cast<float>(cols), tall + fs * 0.2f});
}

// One map through the heatmap widget (cells as one texture, sampled when they are smaller than a
// pixel, drawn only where the window shows them) at a fixed cell size, framed; the pointer's cell.
MapResult draw_map(Ui& ui, const std::string& id, const Matrix& m, uint64_t serial,
                   const ColorScale& scale, float cell) {
  MapResult r;
  r.origin = ImGui::GetCursorScreenPos();
  r.cell = cell;
  const ImVec2 size{cell * static_cast<float>(m.cols()), cell * static_cast<float>(m.rows())};
  HeatmapSpec sp;
  sp.id = id;
  sp.serial = serial;
  sp.m = &m;
  sp.scale = scale;
  sp.labels = sp.color_bar = sp.interactive = sp.cell_text = false;
  sp.cell = cell;
  sp.size = {std::max(size.x, 1.0f), std::max(size.y, 1.0f)};
  draw_heatmap(widgets(ui), sp);
  // The widget draws no hover here: the views frame the cells the hovered one is made of.
  ImGui::SetCursorScreenPos(r.origin);
  ImGui::InvisibleButton(("##" + id).c_str(), sp.size);
  const bool hovered = ImGui::IsItemHovered();
  ImGui::GetWindowDrawList()->AddRect(r.origin, {r.origin.x + size.x, r.origin.y + size.y},
                                      ImGui::GetColorU32(ImGuiCol_Border));
  if (hovered) {
    const ImVec2 mp = ImGui::GetIO().MousePos;
    r.row =
        std::clamp(static_cast<int>((mp.y - r.origin.y) / cell), 0, static_cast<int>(m.rows()) - 1);
    r.col =
        std::clamp(static_cast<int>((mp.x - r.origin.x) / cell), 0, static_cast<int>(m.cols()) - 1);
  }
  return r;
}

// The widest query token at the font size, measured once per trace.
float query_label_width(Ui& ui, const std::vector<std::string>& tokens) {
  VariantViewsState& vs = views_state(ui);
  const float fs = ImGui::GetFontSize();
  if (vs.rows_serial != ui.state.trace_serial() || vs.rows_font != fs) {
    vs.rows_serial = ui.state.trace_serial();
    vs.rows_font = fs;
    vs.rows_w = 0;
    for (const std::string& q : tokens)
      vs.rows_w = std::max(vs.rows_w, ImGui::CalcTextSize(q.c_str()).x);
  }
  return vs.rows_w;
}

// Query tokens down the left of a map whose rows start at `at`: only the rows the window shows.
void query_labels(const std::vector<std::string>& tokens, int rows, ImVec2 at, float cell) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float fs = ImGui::GetFontSize();
  const int n = std::min(rows, static_cast<int>(tokens.size()));
  const int first = std::max(0, static_cast<int>((dl->GetClipRectMin().y - at.y) / cell) - 1);
  const int last = std::min(n, static_cast<int>((dl->GetClipRectMax().y - at.y) / cell) + 2);
  for (int i = first; i < last; ++i)
    dl->AddText({at.x, at.y + cell * static_cast<float>(i) + (cell - fs) / 2},
                ImGui::GetColorU32(ImGuiCol_Text), tokens[static_cast<size_t>(i)].c_str());
}

void cell_box(const MapResult& r, int i, int j, ImU32 col, float thick) {
  const ImVec2 a{r.origin.x + r.cell * static_cast<float>(j),
                 r.origin.y + r.cell * static_cast<float>(i)};
  ImGui::GetWindowDrawList()->AddRect(a, {a.x + r.cell, a.y + r.cell}, col, 0, 0, thick);
}

void convolution_views(Ui& ui) {
  AppState& st = ui.state;
  const AttentionTrace& t = st.trace();
  const int h = std::min(st.head(), t.num_heads - 1);
  const Matrix& before = t.head(StageId::kPreConv, h);
  const Matrix& after = t.head(StageId::kMasked, h);
  const Matrix& th = t.variants.multi_token.kernel_of(h);
  const int c_q = static_cast<int>(th.rows()), c_k = static_cast<int>(th.cols());
  const float fs = ImGui::GetFontSize();
  title(ui, "Multi-Token Attention: the scores before and after the key–query convolution");
  ImGui::TextDisabled("hover a cell: the frame shows the %d × %d kernel's cells it adds up", c_q,
                      c_k);
  // Query tokens down the left of the first map.
  float label_w = std::min(query_label_width(ui, t.query_tokens), fs * 9) + fs * 0.5f;
  float cell = std::clamp((ImGui::GetContentRegionAvail().x - label_w - fs * 4) /
                              (2.0f * static_cast<float>(after.cols())),
                          4.0f, fs * 1.6f);
  if (cell < fs * 0.9f) {  // too small for the query names: give their room to the cells
    label_w = 0;
    cell = std::clamp(
        (ImGui::GetContentRegionAvail().x - fs * 4) / (2.0f * static_cast<float>(after.cols())),
        4.0f, fs * 1.6f);
  }
  // Many queries: a map is also at most a third of the window high (cells under a pixel, the
  // texture showing the largest of those under each), so the four maps and the sum stay in view
  // and a frame shades a bounded area however long the sequence.
  cell = std::min(cell, ImGui::GetWindowHeight() * 0.3f /
                            static_cast<float>(std::max<Eigen::Index>(1, before.rows())));
  VariantViewsState& vs = views_state(ui);
  int& hover_i = vs.conv_i;
  int& hover_j = vs.conv_j;
  const uint64_t serial = st.head_serial(h);
  const std::string hs = std::to_string(h);
  const ColorScale& scale =
      color_scale_cached(ui, "variant-before-" + hs, StageId::kScaled, before, serial);
  const ColorScale& scale_after =
      color_scale_cached(ui, "variant-after-" + hs, StageId::kMasked, after, serial);
  const int cols = static_cast<int>(after.cols());
  ImGui::BeginGroup();
  ImGui::TextUnformatted("before: S (masked scores)");
  ImGui::Dummy({label_w, 0});
  ImGui::SameLine(0, 0);
  key_labels(ui, t.key_tokens, cols, cell);
  if (cell >= fs * 0.9f)
    query_labels(t.query_tokens, static_cast<int>(before.rows()), ImGui::GetCursorScreenPos(),
                 cell);
  ImGui::Dummy({label_w, 0});
  ImGui::SameLine(0, 0);
  const MapResult a = draw_map(ui, "variant-before-" + hs, before, serial, scale, cell);
  ImGui::EndGroup();
  ImGui::SameLine(0, fs * 2);
  ImGui::BeginGroup();
  ImGui::TextUnformatted("after: θ ∗ S (convolved)");
  key_labels(ui, t.key_tokens, cols, cell);
  const MapResult b = draw_map(ui, "variant-after-" + hs, after, serial, scale_after, cell);
  ImGui::EndGroup();
  if (a.row >= 0) hover_i = a.row, hover_j = a.col;
  if (b.row >= 0) hover_i = b.row, hover_j = b.col;
  if (hover_i >= before.rows() || hover_j >= before.cols()) hover_i = hover_j = -1;
  if (hover_i < 0) {
    // Until the mouse comes: the query's strongest convolved cell.
    hover_i = 0;
    Eigen::Index jj = 0;
    after.row(0).maxCoeff(&jj);
    hover_j = static_cast<int>(jj);
  }
  const ImU32 frame = IM_COL32(230, 20, 60, 255), target = ui.settings.light_theme
                                                               ? IM_COL32(0, 0, 0, 255)
                                                               : IM_COL32(255, 255, 255, 255);
  double total = 0;
  std::string terms;
  for (int qa = 0; qa < c_q; ++qa)
    for (int kb = 0; kb < c_k; ++kb) {
      const int si = conv_source_row(hover_i, qa), sj = conv_source_col(hover_j, kb, c_k);
      if (si < 0 || si >= before.rows() || sj < 0 || sj >= before.cols()) continue;
      cell_box(a, si, sj, frame, std::max(1.5f, fs * 0.1f));
      const double s = std::isfinite(before(si, sj)) ? before(si, sj) : 0.0;
      total += double(th(qa, kb)) * s;
      char buf[64];
      std::snprintf(buf, sizeof buf, "%s%.2f×%.2f", terms.empty() ? "" : " + ",
                    static_cast<double>(th(qa, kb)), s);
      terms += buf;
    }
  cell_box(b, hover_i, hover_j, target, std::max(2.0f, fs * 0.12f));
  const std::string qn = hover_i < static_cast<int>(t.query_tokens.size())
                             ? t.query_tokens[hover_i]
                             : std::to_string(hover_i);
  const std::string kn = hover_j < static_cast<int>(t.key_tokens.size()) ? t.key_tokens[hover_j]
                                                                         : std::to_string(hover_j);
  // The weights each map gives: one query–key pair at a time against the convolved scores (the
  // first once per head's trace).
  if (vs.plain_serial != serial || vs.plain_head != h) {
    vs.plain_serial = serial;
    vs.plain_head = h;
    std::vector<bool> empty;
    const ReasonMatrix* hid = t.has_reasons(h) ? &t.hidden_of(h) : nullptr;
    const ReasonMatrix none = ReasonMatrix::Zero(before.rows(), before.cols());
    masked_softmax_rows(before, hid ? *hid : none, t.temperature, vs.plain_w, empty);
  }
  const Matrix& plain_w = vs.plain_w;
  const Matrix& conv_w = t.head(t.find(StageId::kPreMix) ? StageId::kPreMix : StageId::kWeights, h);
  const ColorScale& wscale =
      color_scale_cached(ui, "variant-conv-w-" + hs, StageId::kWeights, conv_w, serial);
  ImGui::BeginGroup();
  ImGui::TextUnformatted("weights from S (one pair at a time)");
  ImGui::Dummy({label_w, 0});
  ImGui::SameLine(0, 0);
  draw_map(ui, "variant-plain-w-" + hs, plain_w, serial, wscale, cell);
  ImGui::EndGroup();
  ImGui::SameLine(0, fs * 2);
  ImGui::BeginGroup();
  ImGui::TextUnformatted("weights from θ ∗ S");
  draw_map(ui, "variant-conv-w-" + hs, conv_w, serial, wscale, cell);
  ImGui::EndGroup();
  ImGui::PushTextWrapPos(0);
  ImGui::Text("C[%s, %s] = %s", qn.c_str(), kn.c_str(), terms.c_str());
  ImGui::Text("= %.3f   (the engine: %.3f)", total, static_cast<double>(after(hover_i, hover_j)));
  ImGui::PopTextWrapPos();
}

void mixing_views(Ui& ui) {
  AppState& st = ui.state;
  const AttentionTrace& t = st.trace();
  const float fs = ImGui::GetFontSize();
  title(ui, "Head mixing: each head's weights (top) and the mixed weights (bottom)");
  ImGui::TextDisabled("hover a cell: the frames show the heads' cells it blends");
  const int H = t.num_heads, cols = std::max(1, t.n_k);
  const int c = t.variants.multi_token.mix_group_size();
  // Query tokens down the left of the first head's maps, when the cells are tall enough.
  float label_w = std::min(query_label_width(ui, t.query_tokens), fs * 9) + fs * 0.5f;
  auto cell_for = [&](float labels) {
    return std::clamp((ImGui::GetContentRegionAvail().x - labels - fs * 1.5f * H) /
                          (static_cast<float>(H) * static_cast<float>(cols)),
                      2.0f, fs * 1.6f);
  };
  float cell = cell_for(label_w);
  if (cell < fs * 0.9f) {
    label_w = 0;
    cell = cell_for(0);
  }
  // Many queries: each row of maps at most a third of the window high, as in the convolution's.
  cell = std::min(
      cell, ImGui::GetWindowHeight() * 0.3f /
                static_cast<float>(std::max<Eigen::Index>(1, t.head(StageId::kWeights, 0).rows())));
  VariantViewsState& vs = views_state(ui);
  int &hover_h = vs.mix_h, &hover_i = vs.mix_i, &hover_j = vs.mix_j;
  std::vector<MapResult> maps[2];
  for (int row = 0; row < 2; ++row) {
    for (int h = 0; h < H; ++h) {
      if (h > 0) ImGui::SameLine(0, fs * (h % c == 0 ? 1.5f : 0.6f));
      const Matrix& m = t.head(row == 0 ? StageId::kPreMix : StageId::kWeights, h);
      ImGui::BeginGroup();
      ImGui::Text("%s %d", row == 0 ? "head" : "mixed", h);
      if (row == 0) {
        if (h == 0) {
          ImGui::Dummy({label_w, 0});
          ImGui::SameLine(0, 0);
        }
        key_labels(ui, t.key_tokens, cols, cell);
      }
      if (h == 0 && label_w > 0)
        query_labels(t.query_tokens, static_cast<int>(m.rows()), ImGui::GetCursorScreenPos(), cell);
      if (h == 0) {
        ImGui::Dummy({label_w, 0});
        ImGui::SameLine(0, 0);
      }
      const std::string id = "variant-mix" + std::to_string(row) + "-" + std::to_string(h);
      const uint64_t serial = st.head_serial(h);
      const MapResult r = draw_map(ui, id, m, serial,
                                   color_scale_cached(ui, id, StageId::kWeights, m, serial), cell);
      if (r.row >= 0) hover_h = h, hover_i = r.row, hover_j = r.col;
      maps[row].push_back(r);
      ImGui::EndGroup();
    }
  }
  if (hover_h >= H || hover_i >= t.n_q - t.first_row || hover_j >= t.n_k) hover_h = -1;
  const Matrix& mixed0 = t.head(StageId::kWeights, 0);
  if (hover_h < 0 && mixed0.rows() > 0) {
    // Until the mouse comes: the first query's strongest mixed weight.
    hover_h = 0;
    hover_i = 0;
    Eigen::Index jj = 0;
    mixed0.row(0).maxCoeff(&jj);
    hover_j = static_cast<int>(jj);
  }
  if (hover_h < 0) return;
  // The blend for the hovered cell: mixed head g·c + a = Σ_b M[g, a, b] · head g·c + b.
  const int g = hover_h / c, a = hover_h % c;
  const Matrix& M = t.variants.multi_token.head_mix[static_cast<size_t>(g)];
  const ImU32 frame = IM_COL32(230, 20, 60, 255), target = ui.settings.light_theme
                                                               ? IM_COL32(0, 0, 0, 255)
                                                               : IM_COL32(255, 255, 255, 255);
  std::string terms;
  double total = 0;
  for (int b = 0; b < c; ++b) {
    const int hb = g * c + b;
    const double w = t.head(StageId::kPreMix, hb)(hover_i, hover_j);
    cell_box(maps[0][static_cast<size_t>(hb)], hover_i, hover_j, frame, std::max(1.5f, fs * 0.1f));
    total += double(M(a, b)) * w;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%.2f×%.3f", terms.empty() ? "" : " + ",
                  static_cast<double>(M(a, b)), w);
    terms += buf;
  }
  cell_box(maps[1][static_cast<size_t>(hover_h)], hover_i, hover_j, target,
           std::max(2.0f, fs * 0.12f));
  const std::string qn = hover_i < static_cast<int>(t.query_tokens.size())
                             ? t.query_tokens[static_cast<size_t>(hover_i)]
                             : std::to_string(hover_i);
  const std::string kn = hover_j < static_cast<int>(t.key_tokens.size())
                             ? t.key_tokens[static_cast<size_t>(hover_j)]
                             : std::to_string(hover_j);
  ImGui::PushTextWrapPos(0);
  ImGui::Text("mixed %d [%s, %s] = %s", hover_h, qn.c_str(), kn.c_str(), terms.c_str());
  ImGui::Text("= %.3f   (the engine: %.3f)", total,
              static_cast<double>(t.head(StageId::kWeights, hover_h)(hover_i, hover_j)));
  std::string m_row;
  for (int b = 0; b < c; ++b) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.2f", b ? ", " : "", static_cast<double>(M(a, b)));
    m_row += buf;
  }
  ImGui::TextDisabled("groups of %d heads; M of group %d: row %d = (%s)", c, g, a, m_row.c_str());
  ImGui::PopTextWrapPos();
}

}  // namespace

void draw_variant_views_panel(Ui& ui) {
  AppState& st = ui.state;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float top = ImGui::GetFrameHeight();
  ImGui::SetNextWindowPos({vp->Pos.x + vp->Size.x * 0.04f, vp->Pos.y + top + vp->Size.y * 0.04f},
                          ImGuiCond_Appearing);
  ImGui::SetNextWindowSize({vp->Size.x * 0.92f, vp->Size.y * 0.9f - top * 2}, ImGuiCond_Appearing);
  if (!ImGui::Begin("Linformer and Multi-Token Attention###variant-views", &ui.variant_views.open,
                    ImGuiWindowFlags_NoCollapse)) {
    ImGui::End();
    return;
  }
  if (!st.has_trace()) {
    ImGui::TextUnformatted("No trace yet.");
    ImGui::End();
    return;
  }
  const AttentionTrace& t = st.trace();
  const bool lin = t.variants.linformer.enabled() && t.find(StageId::kKProj);
  const bool conv = t.find(StageId::kPreConv) != nullptr, mix = t.find(StageId::kPreMix) != nullptr;
  if (!lin && !conv && !mix) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(
        "Turn on Linformer, the key–query convolution or head mixing in the Variants tab, or open "
        "a built-in example:");
    ImGui::PopTextWrapPos();
    for (const char* name : {"linformer", "multi-token", "head-mixing"}) {
      if (ImGui::Button(name)) ui.defer([&st, n = std::string(name)] { st.load_example(n); });
      ImGui::SameLine();
    }
    ImGui::NewLine();
  }
  if (lin) linformer_views(ui);
  if (conv) convolution_views(ui);
  if (mix) mixing_views(ui);
  ImGui::End();
}

}  // namespace attn
