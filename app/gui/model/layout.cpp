// The main window's panel rectangles for a window size, font size and mode (see layout.h).
#include "gui/model/layout.h"

#include <algorithm>
#include <cmath>

namespace attn {
namespace {

LayoutRect rect(float x, float y, float w, float h) {
  return {std::round(x), std::round(y), std::round(std::max(w, 1.0f)),
          std::round(std::max(h, 1.0f)), true};
}

}  // namespace

float presentation_font(float base_px, float window_w, float window_h) {
  const float wanted = std::max(base_px * 1.4f, window_h / 40.0f);
  const float fits = std::min(window_h / 26.0f, window_w / 36.0f);
  return std::clamp(std::round(std::max(std::min(wanted, fits), base_px)), 12.0f, 64.0f);
}

float slide_column_width(const LayoutInput& in, float room, bool* fits) {
  const float W = in.width;
  const float most = std::max(W * 0.62f, std::min(W, 18 * in.font));
  const float widest = std::max(W * 0.3f, std::min(most, W - in.figure_min_w));
  const float usual = std::min(W * 0.38f, widest);
  for (int k = 0; k <= 32; ++k) {
    const float w = W * 0.3f + (widest - W * 0.3f) * static_cast<float>(k) / 32.0f;
    if (in.lesson_height(std::round(w)) <= room) {
      *fits = true;
      return std::round(std::max(w, usual));
    }
  }
  *fits = false;
  return std::round(widest);
}

PanelLayout compute_layout(const LayoutInput& in) {
  PanelLayout L;
  const float fs = in.font, W = in.width;
  const float top = in.y + in.menu_h;
  const float body_y = top + in.pipeline_h;
  const float body_h = in.height - in.menu_h - in.pipeline_h - in.status_h;
  L.pipeline = rect(in.x, top, W, in.pipeline_h);
  L.status = rect(in.x, in.y + in.height - in.status_h, W, in.status_h);

  if (in.model_stage && !in.lesson) {
    // A model's stage with no lesson beside it takes the whole body: the stepper's narration
    // would describe the example behind the stage, not the model on it.
    L.heatmap = rect(in.x, body_y, W, body_h);
    return L;
  }

  if (in.presentation && !in.panels_shown && in.lesson && in.lesson_height) {
    // A slide: the lesson's column runs from the menu bar to the foot of the window beside the
    // stage strip and the figure, as wide as its words need.
    L.slide = true;
    const float room = in.height - in.menu_h - in.status_h;
    const float col_w = slide_column_width(in, room, &L.slide_fits);
    const float fig_w = W - col_w;
    L.pipeline = rect(in.x, top, fig_w, in.pipeline_h);
    L.heatmap = rect(in.x, body_y, fig_w, body_h);
    L.narration = rect(in.x + fig_w, top, col_w, room);
    return L;
  }
  if (in.presentation && !in.panels_shown) {
    // The heatmap and its formula take the room; the narration stands beside it in large type.
    // A lesson's text, question, answer box and feedback need a wider column than the narration:
    // 20 letters of large type at least, up to half a small screen.
    const float narr_w = in.lesson ? std::clamp(W * 0.38f, std::min(20 * fs, W * 0.5f), W * 0.5f)
                                   : std::clamp(W * 0.33f, std::min(16 * fs, W * 0.42f), W * 0.42f);
    L.heatmap = rect(in.x, body_y, W - narr_w, body_h);
    L.narration = rect(in.x + W - narr_w, body_y, narr_w, body_h);
    return L;
  }
  if (W >= 60 * fs) {
    const float left_w = std::clamp(W * 0.25f, 16 * fs, W * 0.3f);
    const float right_w = std::clamp(W * 0.31f, 16 * fs, W * 0.36f);
    L.scenario = rect(in.x, body_y, left_w, body_h);
    L.heatmap = rect(in.x + left_w, body_y, W - left_w - right_w, body_h);
    const float heads_h = in.heads_h > 0 ? std::min(in.heads_h, body_h * 0.6f) : 0.0f;
    L.narration = rect(in.x + W - right_w, body_y, right_w, body_h - heads_h);
    if (heads_h > 0)
      L.heads = rect(in.x + W - right_w, body_y + body_h - heads_h, right_w, heads_h);
    return L;
  }
  // Too narrow for three columns at this font size: one tabbed column beside the heatmap.
  const float side_w = std::clamp(W * 0.4f, std::min(18 * fs, W * 0.55f), W * 0.55f);
  L.tabbed = true;
  L.heatmap = rect(in.x, body_y, W - side_w, body_h);
  L.narration = rect(in.x + W - side_w, body_y, side_w, body_h);
  return L;
}

}  // namespace attn
