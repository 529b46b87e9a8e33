// Heatmap exports: option checks, one stage as a picture, every stage as the pages of a PDF.
#include "render/heatmap_export.h"

#include <algorithm>
#include <cmath>

#include "render/heatmap_view.h"

namespace attn {

namespace {

constexpr int kMinWidth = 200, kMaxWidth = 8192;
// The margin around a stage page and the room its footer takes.
constexpr double kPageMargin = 36, kFooter = 22;
// A page or picture of a given size: each side in this range (units: pixels or points).
constexpr int kMinPage = 100, kMaxPage = 8192;
// Numbers in the cells: 128 × 128 on the widest picture (8192) gives cells of 64 units.
constexpr long kMaxNumbered = 128 * 128;

std::string colormap_error(const std::string& name) {
  std::string names;
  for (const auto& n : colormap_names()) names += (names.empty() ? "" : ", ") + n;
  return "colormap: unknown colour map '" + name + "'; expected one of " + names;
}

}  // namespace

std::string check_heatmap_options(const AttentionTrace& trace, const HeatmapOptions& o) {
  const TraceStep* step = trace.find(o.step);
  const std::string name = stage_name(o.step);
  if (!step)
    return "step: no stage '" + name + "' in this trace; expected one of " +
           stage_names(trace, false);
  if (o.head < 0 || o.head >= std::max(1, trace.num_heads)) {
    const int h = std::max(1, trace.num_heads);
    return "head: head " + std::to_string(o.head) + " is out of range; this trace has " +
           std::to_string(h) + (h == 1 ? " head (0)" : " heads (0.." + std::to_string(h - 1) + ")");
  }
  if (!is_colormap(o.maps.sequential)) return colormap_error(o.maps.sequential);
  if (!is_colormap(o.maps.diverging)) return colormap_error(o.maps.diverging);
  if (o.width != 0 && (o.width < kMinWidth || o.width > kMaxWidth))
    return "width: " + std::to_string(o.width) + " pixels is out of range; expected " +
           std::to_string(kMinWidth) + " to " + std::to_string(kMaxWidth);
  if (step->num_heads() == 0 || trace.head(*step, 0).size() == 0)
    return "step: stage '" + name + "' is empty in this trace";
  const Matrix& m = trace.head(*step, 0);
  if (m.rows() > 16384 || m.cols() > 16384 || m.rows() * m.cols() > 16 * 1024 * 1024)
    return "step: stage '" + name + "' is too large to draw (" + std::to_string(m.rows()) + " × " +
           std::to_string(m.cols()) + ")";
  if (o.annotate.value_or(false) && m.rows() * m.cols() > kMaxNumbered)
    return "annotate: stage '" + name + "' has " + std::to_string(m.rows()) + " × " +
           std::to_string(m.cols()) + " cells, too many to number (at most " +
           std::to_string(kMaxNumbered) + "); draw it without numbers";
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
    const int n = st.num_heads();
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
      c.stem = stage_name(st.id) + (n <= 1 ? "" : (per_kv ? "-kv" : "-h") + std::to_string(index));
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

// Lays m out as large as fits room_w × room_h: as wide as the room, then narrower until it is
// also short enough. `k` is the factor its items are to be scaled by: 1 unless the matrix has more
// rows (or columns) than the room has units.
MatrixScene fit_labelled_matrix(const LabelledMatrix& m, MatrixStyle style, double room_w,
                                double room_h, const TextEngine& text, double& k) {
  style.layout_only = true;  // the cells come once the size is settled
  MatrixScene sc = compose_matrix(m, style, text);
  double w = std::min(room_w, sc.layout.width * room_h / sc.layout.height);
  for (int iter = 0; iter < 6; ++iter) {
    style.width = std::max(200, static_cast<int>(std::floor(w)));
    sc = compose_matrix(m, style, text);
    if (sc.layout.height <= room_h || style.width == 200) break;
    w *= room_h / sc.layout.height * 0.99;
  }
  k = 1;
  if (sc.layout.width > room_w || sc.layout.height > room_h) {
    // Cells are whole units, so no width fits such a matrix, and narrowing it only shrank the
    // text. Instead it is laid out magnified by `mag` with one-unit cells, text and all, and
    // shrunk back: the text keeps its print size (0.75 of the natural one) and the cells go
    // under a unit (in a PDF the viewer's zoom brings them back).
    constexpr double kTextScale = 0.75;
    style.width = 0;
    style.cell = 1;
    style.scale = kTextScale;
    sc = compose_matrix(m, style, text);
    const double text_w = sc.layout.width - sc.layout.grid.w;
    const double text_h = sc.layout.height - sc.layout.grid.h;
    double mag = std::max({1.0, sc.layout.grid.w / std::max(1.0, room_w - text_w),
                           sc.layout.grid.h / std::max(1.0, room_h - text_h)});
    for (int pass = 0; pass < 4; ++pass) {
      style.scale = kTextScale * mag;
      sc = compose_matrix(m, style, text);
      const double fit =
          std::min({1.0, room_w * mag / sc.layout.width, room_h * mag / sc.layout.height});
      if (fit >= 1) break;
      mag /= fit;
    }
    k = std::min(room_w / sc.layout.width, room_h / sc.layout.height);
  }
  style.layout_only = false;
  return compose_matrix(m, style, text);
}

bool stage_page(const AttentionTrace& trace, const HeatmapOptions& o, Paper paper, int p, int count,
                const TextEngine& text, ScenePage& page, std::string& error) {
  const auto [page_w, page_h] = paper_size(paper, true);
  return stage_page_sized(trace, o, page_w, page_h, p, count, text, page, error);
}

bool stage_page_sized(const AttentionTrace& trace, const HeatmapOptions& o, double page_w,
                      double page_h, int p, int count, const TextEngine& text, ScenePage& page,
                      std::string& error) {
  error = check_heatmap_options(trace, o);
  if (!error.empty()) return false;
  if (!(page_w >= kMinPage && page_h >= kMinPage && page_w <= kMaxPage && page_h <= kMaxPage)) {
    error = "size: " + std::to_string(static_cast<int>(page_w)) + " × " +
            std::to_string(static_cast<int>(page_h)) + " is out of range; each side " +
            std::to_string(kMinPage) + " to " + std::to_string(kMaxPage);
    return false;
  }
  // Margins and footer grow with the page (a 1920 × 1080 picture is a 960 × 540 slide at twice
  // the resolution), so the heatmap fills the same share of any size.
  const double u = std::min(page_w / 960, page_h / 540);
  const double margin = std::round(kPageMargin * u);
  const double footer = count > 0 ? std::round(kFooter * u) : 0;
  LabelledMatrix m = stage_matrix(trace, o);
  m.caption = stage_caption(o.step);
  const double room_w = page_w - 2 * margin, room_h = page_h - 2 * margin - footer;
  MatrixStyle style;
  style.annotate = o.annotate;
  style.max_cell = 120;
  style.margin = 0;  // the page's margin is the picture's
  double k = 1;
  MatrixScene sc = fit_labelled_matrix(m, style, room_w, room_h, text, k);
  page.width = page_w;
  page.height = page_h;
  page.items = std::move(sc.page.items);
  if (k < 1) scale_items(page.items, k);
  shift_items(page.items, std::floor((page_w - k * sc.layout.width) / 2),
              std::floor(margin + std::max(0.0, (room_h - k * sc.layout.height) / 2)));
  if (count <= 0) return true;  // a single picture: no page numbers
  const Font small{std::max(10.0, 10 * u), false, false, false};
  const Rgb grey{120, 120, 120};
  const double rule_y = page_h - margin - footer + 4 * u;
  page.items.push_back(
      line_item(margin, rule_y, page_w - margin, rule_y, {215, 215, 215}, 0.75 * u, "rule"));
  page.items.push_back(
      text_item(trace.name, margin, page_h - margin, small, TextAnchor::kStart, grey, "footer"));
  page.items.push_back(text_item("page " + std::to_string(p + 1) + " of " + std::to_string(count),
                                 page_w - margin, page_h - margin, small, TextAnchor::kEnd, grey,
                                 "footer"));
  return true;
}

bool render_heatmap_sized(const AttentionTrace& trace, const HeatmapOptions& options, int width,
                          int height, ImageFormat format, std::string& bytes, std::string& error,
                          std::vector<std::string>* warnings) {
  std::unique_ptr<TextEngine> text = TextEngine::create(error);
  if (!text) return false;
  ScenePage page;
  if (!stage_page_sized(trace, options, width, height, 0, 0, *text, page, error)) return false;
  RenderOptions ro;
  ro.title = trace.name + " — " + trace.find(options.step)->title;
  ro.warnings = warnings;
  return render_pages({page}, format, bytes, error, ro);
}

bool render_stage_pages(const AttentionTrace& trace, const HeatmapOptions& base, Paper paper,
                        std::string& bytes, std::string& error,
                        std::vector<std::string>* warnings) {
  const auto [w, h] = paper_size(paper, true);
  return render_stage_pages_sized(trace, base, w, h, bytes, error, warnings);
}

bool render_stage_pages_sized(const AttentionTrace& trace, const HeatmapOptions& base,
                              double page_w, double page_h, std::string& bytes, std::string& error,
                              std::vector<std::string>* warnings) {
  std::unique_ptr<TextEngine> text = TextEngine::create(error);
  if (!text) return false;
  const std::vector<StageChoice> stages = every_stage(trace, base);
  const int count = static_cast<int>(stages.size());
  // Each page is laid out just before it is drawn: a long trace's pages do not all fit in memory.
  auto page_at = [&](int p, ScenePage& page, std::string& e) {
    return stage_page_sized(trace, stages[p].options, page_w, page_h, p, count, *text, page, e);
  };
  RenderOptions ro;
  ro.title = trace.name + " — every stage of attention";
  ro.warnings = warnings;
  return render_pdf_pages(count, page_at, bytes, error, ro);
}

}  // namespace attn
