// Heatmap exports: option checks, one stage as a picture, every stage as the pages of a PDF.
#include "render/heatmap_export.h"

#include <algorithm>
#include <cmath>

#include "render/heatmap_view.h"

namespace attn {

namespace {

constexpr int kMinWidth = 200, kMaxWidth = 8192;

std::string colormap_error(const std::string& name) {
  std::string names;
  for (const auto& n : colormap_names()) names += (names.empty() ? "" : ", ") + n;
  return "--colormap: unknown colour map '" + name + "'; expected one of " + names;
}

}  // namespace

std::string check_heatmap_options(const AttentionTrace& trace, const HeatmapOptions& o) {
  const TraceStep* step = trace.find(o.step);
  if (!step) {
    std::string ids;
    for (const auto& s : trace.steps) ids += (ids.empty() ? "" : ", ") + s.id;
    return "--step: no stage '" + o.step + "' in this trace; expected one of " + ids;
  }
  if (o.head < 0 || o.head >= std::max(1, trace.num_heads)) {
    const int h = std::max(1, trace.num_heads);
    return "--head: head " + std::to_string(o.head) + " is out of range; this trace has " +
           std::to_string(h) + (h == 1 ? " head (0)" : " heads (0.." + std::to_string(h - 1) + ")");
  }
  if (!is_colormap(o.maps.sequential)) return colormap_error(o.maps.sequential);
  if (!is_colormap(o.maps.diverging)) return colormap_error(o.maps.diverging);
  if (o.width != 0 && (o.width < kMinWidth || o.width > kMaxWidth))
    return "--width: " + std::to_string(o.width) + " pixels is out of range; expected " +
           std::to_string(kMinWidth) + " to " + std::to_string(kMaxWidth);
  if (step->heads.empty() || step->heads[0].size() == 0)
    return "--step: stage '" + o.step + "' is empty in this trace";
  const Matrix& m = step->heads[0];
  if (m.rows() > 16384 || m.cols() > 16384 || m.rows() * m.cols() > 16 * 1024 * 1024)
    return "--step: stage '" + o.step + "' is too large to draw (" + std::to_string(m.rows()) +
           " × " + std::to_string(m.cols()) + ")";
  return "";
}

bool build_heatmap_scene(const AttentionTrace& trace, const HeatmapOptions& options,
                         MatrixScene& scene, std::string& error) {
  error = check_heatmap_options(trace, options);
  if (!error.empty()) return false;
  std::unique_ptr<TextEngine> text = TextEngine::create(error);
  if (!text) return false;
  MatrixStyle style;
  style.annotate = options.annotate;
  style.width = options.width;
  scene = compose_matrix(stage_matrix(trace, options), style, *text);
  return true;
}

bool layout_heatmap(const AttentionTrace& trace, const HeatmapOptions& options,
                    MatrixLayout& layout, std::string& error) {
  MatrixScene scene;
  if (!build_heatmap_scene(trace, options, scene, error)) return false;
  layout = scene.layout;
  return true;
}

bool render_heatmap(const AttentionTrace& trace, const HeatmapOptions& options, ImageFormat format,
                    std::string& bytes, std::string& error, std::vector<std::string>* warnings) {
  MatrixScene scene;
  if (!build_heatmap_scene(trace, options, scene, error)) return false;
  RenderOptions ro;
  ro.title = trace.name + " — " + trace.find(options.step)->title;
  ro.warnings = warnings;
  return render_pages({scene.page}, format, bytes, error, ro);
}

std::vector<StageChoice> every_stage(const AttentionTrace& trace, const HeatmapOptions& base) {
  std::vector<StageChoice> out;
  for (const TraceStep& st : trace.steps) {
    const int n = static_cast<int>(st.heads.size());
    for (int index = 0; index < n; ++index) {
      // The first query head that reads this entry (k and v hold one per key/value head).
      int head = 0;
      const int heads = std::max(1, trace.num_heads);
      while (head + 1 < heads && matrix_index_for(trace, st, head) != index) ++head;
      if (matrix_index_for(trace, st, head) != index) continue;
      StageChoice c;
      c.options = base;
      c.options.step = st.id;
      c.options.head = head;
      const bool per_kv = n != heads && n == trace.num_kv_heads && n > 1;
      c.stem = st.id + (n <= 1 ? "" : (per_kv ? "-kv" : "-h") + std::to_string(index));
      out.push_back(c);
    }
  }
  return out;
}

std::optional<Paper> paper_of(const std::string& name) {
  if (name == "slide") return Paper::kSlide;
  if (name == "a4") return Paper::kA4;
  if (name == "letter") return Paper::kLetter;
  return std::nullopt;
}

const char* paper_name(Paper paper) {
  switch (paper) {
    case Paper::kSlide:
      return "slide";
    case Paper::kA4:
      return "a4";
    case Paper::kLetter:
      return "letter";
  }
  return "slide";
}

std::pair<double, double> paper_size(Paper paper, bool landscape) {
  double w = 960, h = 540;
  if (paper == Paper::kA4) {
    w = 595.28;  // 210 × 297 mm
    h = 841.89;
  } else if (paper == Paper::kLetter) {
    w = 612;  // 8.5 × 11 in
    h = 792;
  }
  if (landscape != (w > h)) std::swap(w, h);
  return {w, h};
}

bool render_stage_pages(const AttentionTrace& trace, const HeatmapOptions& base, Paper paper,
                        std::string& bytes, std::string& error,
                        std::vector<std::string>* warnings) {
  std::unique_ptr<TextEngine> text = TextEngine::create(error);
  if (!text) return false;
  const auto [page_w, page_h] = paper_size(paper, true);
  const double margin = 36, footer = 22;
  const std::vector<StageChoice> stages = every_stage(trace, base);
  std::vector<ScenePage> pages;
  for (size_t p = 0; p < stages.size(); ++p) {
    const HeatmapOptions& o = stages[p].options;
    error = check_heatmap_options(trace, o);
    if (!error.empty()) return false;
    LabelledMatrix m = stage_matrix(trace, o);
    m.caption = stage_caption(o.step);
    // As wide as the page allows, then narrower until it is also short enough.
    const double room_w = page_w - 2 * margin, room_h = page_h - 2 * margin - footer;
    MatrixStyle style;
    style.annotate = o.annotate;
    style.max_cell = 120;
    MatrixScene sc = compose_matrix(m, style, *text);
    double w = std::min(room_w, sc.layout.width * room_h / sc.layout.height);
    for (int iter = 0; iter < 6; ++iter) {
      style.width = std::max(200, static_cast<int>(std::floor(w)));
      sc = compose_matrix(m, style, *text);
      if (sc.layout.height <= room_h || style.width == 200) break;
      w *= room_h / sc.layout.height * 0.99;
    }
    ScenePage page;
    page.width = page_w;
    page.height = page_h;
    page.items = std::move(sc.page.items);
    shift_items(page.items, std::floor((page_w - sc.layout.width) / 2),
                std::floor(margin + std::max(0.0, (room_h - sc.layout.height) / 2)));
    const Font small{10, false, false, false};
    const Rgb grey{120, 120, 120};
    page.items.push_back(line_item(margin, page_h - margin - footer + 4, page_w - margin,
                                   page_h - margin - footer + 4, {215, 215, 215}, 0.75, "rule"));
    page.items.push_back(
        text_item(trace.name, margin, page_h - margin, small, TextAnchor::kStart, grey, "footer"));
    page.items.push_back(
        text_item("page " + std::to_string(p + 1) + " of " + std::to_string(stages.size()),
                  page_w - margin, page_h - margin, small, TextAnchor::kEnd, grey, "footer"));
    pages.push_back(std::move(page));
  }
  RenderOptions ro;
  ro.title = trace.name + " — every stage of attention";
  ro.warnings = warnings;
  return render_pages(pages, ImageFormat::kPdf, bytes, error, ro);
}

}  // namespace attn
