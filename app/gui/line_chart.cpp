// The training views' line chart (see line_chart.h).
#include "gui/line_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "render/ticks.h"

namespace attn {

namespace {

// A round step for about `n` ticks over [0, span].
float step_for(float span, int n) {
  return static_cast<float>(nice_step(std::max(span / static_cast<float>(std::max(1, n)), 1e-9f)));
}

}  // namespace

void draw_line_chart(const LineChart& c, ImVec2 size) {
  const float fs = ImGui::GetFontSize();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const ImU32 grid = ImGui::GetColorU32(ImGuiCol_Separator, 0.5f);
  const float left = ImGui::CalcTextSize("100 %").x + fs * 0.6f;
  // The title wraps within the chart's width (a narrow window or large text).
  const float top = ImGui::CalcTextSize(c.title.c_str(), nullptr, false, size.x).y +
                    ImGui::GetStyle().ItemSpacing.y;
  const float bottom = ImGui::GetTextLineHeightWithSpacing() * 1.1f;
  float label_w = c.label_room;
  for (const ChartLine& l : c.lines)
    if (!l.label.empty()) label_w = std::max(label_w, ImGui::CalcTextSize(l.label.c_str()).x);
  const float right = label_w > 0 ? label_w + fs * 0.6f : fs * 0.6f;
  const ImVec2 p0{o.x + left, o.y + top};
  const ImVec2 p1{o.x + std::max(size.x - right, left + fs * 4), o.y + size.y - bottom};
  const float w = p1.x - p0.x, h = p1.y - p0.y;
  const float span = std::max(c.y_max - c.y_min, 1e-6f);
  auto at = [&](ImVec2 v) {
    const float x = p0.x + w * std::clamp(v.x / std::max(c.x_max, 1.0f), 0.0f, 1.0f);
    const float y = p1.y - h * std::clamp((v.y - c.y_min) / span, 0.0f, 1.0f);
    return ImVec2{x, y};
  };
  dl->AddText(ImGui::GetFont(), fs, {o.x, o.y}, text, c.title.c_str(), nullptr, size.x);
  if (c.band) {
    const float x0 = at({c.band_from, c.y_min}).x, x1 = at({c.band_to, c.y_min}).x;
    dl->AddRectFilled({x0, p0.y}, {std::max(x1, x0 + 2), p1.y}, IM_COL32(255, 160, 40, 70));
    dl->AddLine({x0, p0.y}, {x0, p1.y}, IM_COL32(230, 120, 0, 200), 1.5f);
    dl->AddLine({x1, p0.y}, {x1, p1.y}, IM_COL32(230, 120, 0, 200), 1.5f);
    if (!c.band_label.empty()) {
      const float tw = ImGui::CalcTextSize(c.band_label.c_str()).x;
      const float tx = std::clamp((x0 + x1 - tw) / 2, p0.x + 2, p1.x - tw - 2);
      dl->AddText({tx, p0.y + 2}, IM_COL32(200, 90, 0, 255), c.band_label.c_str());
    }
  }
  // Value ticks and their grid lines.
  const float vstep = step_for(span, std::max(2, static_cast<int>(h / (fs * 2.2f))));
  for (float v = std::ceil(c.y_min / vstep) * vstep; v <= c.y_max + vstep * 1e-3f; v += vstep) {
    const float y = at({0, v}).y;
    dl->AddLine({p0.x, y}, {p1.x, y}, grid);
    char t[32];
    if (c.percent)
      std::snprintf(t, sizeof t, "%.0f %%", 100 * v);
    else
      std::snprintf(t, sizeof t, vstep < 1 ? "%.1f" : "%.0f", v);
    const ImVec2 ts = ImGui::CalcTextSize(t);
    dl->AddText({p0.x - ts.x - fs * 0.3f, y - ts.y / 2}, dim, t);
  }
  // Step ticks.
  const float xstep =
      step_for(std::max(c.x_max, 1.0f), std::max(2, static_cast<int>(w / (fs * 5))));
  for (float x = 0; x <= c.x_max + xstep * 1e-3f; x += xstep) {
    const float px = at({x, c.y_min}).x;
    dl->AddLine({px, p1.y}, {px, p1.y + fs * 0.25f}, dim);
    char t[32];
    std::snprintf(t, sizeof t, "%.0f", x);
    const float tw = ImGui::CalcTextSize(t).x;
    dl->AddText({std::min(px - tw / 2, p1.x - tw), p1.y + fs * 0.25f}, dim, t);
  }
  dl->AddRect(p0, p1, ImGui::GetColorU32(ImGuiCol_Border));
  dl->PushClipRect(p0, {p1.x + 1, p1.y + 1}, true);
  for (const ChartLine& l : c.lines) {
    if (l.points.empty()) continue;
    std::vector<ImVec2> pts;
    pts.reserve(l.points.size());
    // Many more points than pixels: keep one per pixel column (the last), so the cost stays
    // bounded however long training runs.
    float last_x = -1e9f;
    for (const ImVec2& v : l.points) {
      const ImVec2 p = at(v);
      if (p.x - last_x < 1.0f && !pts.empty()) {
        pts.back() = p;
        continue;
      }
      pts.push_back(p);
      last_x = p.x;
    }
    if (l.dashed) {
      for (size_t i = 0; i + 1 < pts.size(); i += 2)
        dl->AddLine(pts[i], pts[i + 1], l.color, l.thickness);
    } else if (pts.size() == 1) {
      dl->AddCircleFilled(pts[0], l.thickness * 1.5f, l.color);
    } else {
      dl->AddPolyline(pts.data(), static_cast<int>(pts.size()), l.color, 0, l.thickness);
    }
  }
  dl->PopClipRect();
  // Labels at the lines' ends, pushed apart so they do not overlap.
  std::vector<std::pair<float, const ChartLine*>> ends;
  for (const ChartLine& l : c.lines)
    if (!l.label.empty() && !l.points.empty()) ends.push_back({at(l.points.back()).y, &l});
  std::sort(ends.begin(), ends.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  const float lh = ImGui::GetTextLineHeight();
  float next = p0.y - lh / 2;
  for (auto& [y, l] : ends) {
    const float ly = std::max(y - lh / 2, next);
    dl->AddText({p1.x + fs * 0.3f, ly}, l->color, l->label.c_str());
    next = ly + lh;
  }
  ImGui::Dummy(size);
}

}  // namespace attn
