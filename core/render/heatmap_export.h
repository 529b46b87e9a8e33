// Draws stages of a trace as heatmaps for slides and handouts: title with formula, query tokens
// down the side, key tokens along the top, colour bar with its scale, numbers in the cells,
// masked cells marked −∞. One stage as a PNG, SVG or PDF picture, or every stage (every head)
// as the pages of one PDF. The CLI's `export` and the app's File → Export use this code; they
// write the bytes with io/atomic_file.h.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attention/attention.h"
#include "render/color_scale.h"
#include "render/image_format.h"
#include "render/labelled_matrix.h"

namespace attn {

struct HeatmapOptions {
  StageId step = StageId::kWeights;
  int head = 0;                  // query head (k and v: the key/value head it reads)
  ColormapChoice maps;           // --colormap NAME sets both to NAME
  std::optional<bool> annotate;  // numbers in cells; default on up to 16×16
  int width = 0;                 // picture width in pixels (points in a PDF); 0 = automatic
  int precision = 2;             // decimals in the cells
};

// "" when the options suit the trace, else an error naming the flag (--step, --head,
// --colormap, --width) that lists what is valid.
std::string check_heatmap_options(const AttentionTrace& trace, const HeatmapOptions& options);

// Lays the stage out (false with `error` for bad options or missing fonts).
bool build_heatmap_scene(const AttentionTrace& trace, const HeatmapOptions& options,
                         MatrixScene& scene, std::string& error);
bool layout_heatmap(const AttentionTrace& trace, const HeatmapOptions& options,
                    MatrixLayout& layout, std::string& error);

// Encodes one stage as PNG, SVG or PDF file bytes. Returns false with `error` naming the option
// when it cannot, or when the fonts are missing. Text no installed font can draw is reported in
// `warnings` when given.
bool render_heatmap(const AttentionTrace& trace, const HeatmapOptions& options, ImageFormat format,
                    std::string& bytes, std::string& error,
                    std::vector<std::string>* warnings = nullptr);

// Every stage of the trace and every head of it, in order: one HeatmapOptions each (based on
// `base`), with a file-name stem ("weights", "weights-h2", "k-kv1").
struct StageChoice {
  HeatmapOptions options;
  std::string stem;
};
std::vector<StageChoice> every_stage(const AttentionTrace& trace, const HeatmapOptions& base);

// Page sizes: a 16:9 slide (960 × 540 pt, 13.33 × 7.5 in), A4 or US Letter.
enum class Paper { kSlide, kA4, kLetter };
// "slide", "a4", "letter"; nullopt for anything else.
std::optional<Paper> paper_of(const std::string& name);
const char* paper_name(Paper paper);
// Width and height in points; `landscape` for the slide-like orientation.
std::pair<double, double> paper_size(Paper paper, bool landscape);

// Every stage (every head) on its own landscape page: title and formula, the heatmap as large as
// the page allows, a caption saying what the stage computes, and a footer with the scenario's
// name and the page number. `base` gives the colour maps, numbers and precision.
bool render_stage_pages(const AttentionTrace& trace, const HeatmapOptions& base, Paper paper,
                        std::string& bytes, std::string& error,
                        std::vector<std::string>* warnings = nullptr);
// The same at any page size in page units (a PDF's points): 1920 × 1080 is a 16:9 slide at full
// HD, 1600 × 1200 a 4:3 one. Each side 100 to 8192, else false with `error` naming "size".
bool render_stage_pages_sized(const AttentionTrace& trace, const HeatmapOptions& base,
                              double page_w, double page_h, std::string& bytes, std::string& error,
                              std::vector<std::string>* warnings = nullptr);
// Page p (0-based) of `count` of those: the stage `o` names, inside the page's margins however
// many rows it has, the heatmap filling the page's body.
bool stage_page(const AttentionTrace& trace, const HeatmapOptions& o, Paper paper, int p, int count,
                const TextEngine& text, ScenePage& page, std::string& error);
// The same on a page of page_w × page_h units; `count` 0 leaves the footer out (one picture).
bool stage_page_sized(const AttentionTrace& trace, const HeatmapOptions& o, double page_w,
                      double page_h, int p, int count, const TextEngine& text, ScenePage& page,
                      std::string& error);
// One stage as a picture of exactly width × height (PNG pixels, SVG units, PDF points): the
// heatmap as large as the picture allows, centred, for a slide of that size.
bool render_heatmap_sized(const AttentionTrace& trace, const HeatmapOptions& options, int width,
                          int height, ImageFormat format, std::string& bytes, std::string& error,
                          std::vector<std::string>* warnings = nullptr);

// Lays `m` out as large as fits room_w × room_h (title, labels, grid, colour bar): as wide as the
// room, then narrower until it is also short enough. Its items are to be scaled by `k` (1 unless
// the matrix has more rows or columns than the room has units).
MatrixScene fit_labelled_matrix(const LabelledMatrix& m, MatrixStyle style, double room_w,
                                double room_h, const TextEngine& text, double& k);

}  // namespace attn
