// Where each panel of the main window goes, as a pure function of the window size, the font size
// and the mode (normal or presentation), so F11, Ctrl+= and a resized window re-lay the panels out
// at once and a test can check every size without a window. No ImGui here.
#pragma once

#include <functional>

namespace attn {

struct LayoutRect {
  float x = 0, y = 0, w = 0, h = 0;
  bool shown = false;
  float right() const { return x + w; }
  float bottom() const { return y + h; }
};

struct LayoutInput {
  float x = 0, y = 0, width = 1600, height = 1000;  // the window (main viewport)
  float font = 20;                                  // font size in pixels
  float menu_h = 30, status_h = 36;                 // heights of the menu bar and the status bar
  float pipeline_h = 100;  // the stage strip's height (measured by the strip)
  float heads_h = 200;     // what the heads panel needs (0 = nothing to show)
  bool presentation = false;
  bool panels_shown = false;  // presentation mode with the side panels brought back (Tab)
  bool lesson = false;        // a lesson is open: its text and question take the side column
  bool model_stage = false;   // a model's stage (seq2seq, language model) in the stepper's place:
                              // beside a lesson's column, or the whole body without one
  // Presentation with a lesson is a slide: the lesson's column is as narrow as lets its words,
  // question and buttons stand whole (the height they need at a width), and no narrower than
  // leaves the figure `figure_min_w`. Unset: the column's share is fixed.
  std::function<float(float width)> lesson_height;
  float figure_min_w = 0;
};

// Three columns (scenario | heatmap | narration over heads) when the window is wide enough for
// them at this font size; otherwise the heatmap beside one column whose tabs hold the narration,
// the heads, the inputs and the variants. Presentation mode folds the side panels away: the
// heatmap fills the room beside the narration in large type.
struct PanelLayout {
  LayoutRect pipeline, scenario, heatmap, narration, heads, status;
  bool tabbed =
      false;  // narration, heads, inputs and variants share one tabbed column (`narration`)
  bool slide = false;       // presentation with a lesson: the column holds the whole step
  bool slide_fits = false;  // and its words, question and buttons fit it without scrolling
};

PanelLayout compute_layout(const LayoutInput& in);

// The slide's lesson column width for a window: the narrowest of the candidate widths (a third of
// the window up to 62 %) at which the step stands whole in `room` height, widened to the usual
// 38 % when the figure can spare it; never leaving the figure less than `figure_min_w`. `fits`
// says whether any width held it.
float slide_column_width(const LayoutInput& in, float room, bool* fits);

// The font size presentation mode uses for a base size and window: larger than the base, and
// larger still on a big screen, so text reads from the back of a room; but no larger than leaves
// the heatmap room on a small screen (about 26 lines and 36 wide letters), never below the base.
float presentation_font(float base_px, float window_w, float window_h);

}  // namespace attn
