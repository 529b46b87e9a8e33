// The heatmap widget: layout, labels, numbers, selection, hover and zoom/pan. The cells themselves
// go through the GL renderer when there is one, else through ImGui rectangles (headless tests).
#include "gui/heatmap_widget.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "attention/format.h"
#include "gui/heatmap_texture.h"
#include "render/colormap.h"

namespace attn {
namespace {

const std::array<ImU32, 256>& lut(const std::string& map) {
  static std::map<std::string, std::array<ImU32, 256>> cache;
  auto it = cache.find(map);
  if (it != cache.end()) return it->second;
  std::array<ImU32, 256> t{};
  for (int i = 0; i < 256; ++i) {
    Rgb c = colormap_color(map, i / 255.0);
    t[i] = IM_COL32(c.r, c.g, c.b, 255);
  }
  return cache.emplace(map, t).first->second;
}

float luminance(ImU32 c) {
  const float r = (c >> IM_COL32_R_SHIFT) & 255, g = (c >> IM_COL32_G_SHIFT) & 255,
              b = (c >> IM_COL32_B_SHIFT) & 255;
  return (0.299f * r + 0.587f * g + 0.114f * b) / 255.0f;
}

std::string label_or_index(const std::vector<std::string>& labels, int i) {
  return i < static_cast<int>(labels.size()) ? labels[i] : std::to_string(i);
}

void draw_hatch(ImDrawList* dl, ImVec2 a, ImVec2 b, bool light) {
  dl->AddRectFilled(a, b, hatch_color(light, 0));
  const float step = 7.0f;
  dl->PushClipRect(a, b, true);
  for (float x = a.x - (b.y - a.y); x < b.x; x += step)
    dl->AddLine({x, b.y}, {x + (b.y - a.y), a.y}, hatch_color(light, 1), 1.5f);
  dl->PopClipRect();
}

bool is_hidden(const HeatmapSpec& sp, int i, int j) {
  if (sp.hidden && i < sp.hidden->rows() && j < sp.hidden->cols() && (*sp.hidden)(i, j))
    return true;
  const float x = (*sp.m)(i, j);
  return std::isinf(x) && x < 0;
}

// Rectangles for the visible cells; large views are sampled so a frame stays bounded.
void draw_cells_cpu(ImDrawList* dl, const HeatmapSpec& sp, const HeatmapViewport& v, bool light) {
  const int rows = v.rows, cols = v.cols;
  const int i0 = std::max(0, static_cast<int>((v.clip.y - v.origin.y) / v.cell_h));
  const int i1 = std::min(rows, static_cast<int>(std::ceil((v.clip.w - v.origin.y) / v.cell_h)));
  const int j0 = std::max(0, static_cast<int>((v.clip.x - v.origin.x) / v.cell_w));
  const int j1 = std::min(cols, static_cast<int>(std::ceil((v.clip.z - v.origin.x) / v.cell_w)));
  // At most ~8k rectangles (within 16-bit draw indices even headless): sample when zoomed out.
  const double visible = static_cast<double>(std::max(0, i1 - i0)) * std::max(0, j1 - j0);
  const int thin = std::max(1, static_cast<int>(std::ceil(std::sqrt(visible / 8000.0))));
  const int step_i = std::max(thin, static_cast<int>(std::ceil(1.0f / v.cell_h)));
  const int step_j = std::max(thin, static_cast<int>(std::ceil(1.0f / v.cell_w)));
  const auto& table = lut(sp.scale.map);
  const float span = static_cast<float>(sp.scale.hi - sp.scale.lo);
  for (int i = i0; i < i1; i += step_i)
    for (int j = j0; j < j1; j += step_j) {
      ImVec2 a = v.cell_min(i, j);
      ImVec2 b{a.x + v.cell_w * step_j, a.y + v.cell_h * step_i};
      if (is_hidden(sp, i, j)) {
        if (v.cell_w >= 4)
          draw_hatch(dl, a, b, light);
        else
          dl->AddRectFilled(a, b, hatch_color(light, 0));
        continue;
      }
      float t = span > 0 ? ((*sp.m)(i, j) - static_cast<float>(sp.scale.lo)) / span : 0.5f;
      t = std::clamp(t, 0.0f, 1.0f);
      dl->AddRectFilled(a, b, table[static_cast<int>(std::lround(t * 255.0f))]);
    }
}

}  // namespace

ImU32 colormap_u32(const std::string& map, float t) {
  t = std::clamp(t, 0.0f, 1.0f);
  return lut(map)[static_cast<int>(std::lround(t * 255.0f))];
}

ImU32 hatch_color(bool light, int which) {
  if (light) return which == 0 ? IM_COL32(226, 226, 230, 255) : IM_COL32(190, 190, 198, 255);
  return which == 0 ? IM_COL32(48, 48, 54, 255) : IM_COL32(78, 78, 88, 255);
}

HeatmapEvent draw_heatmap(Ui& ui, const HeatmapSpec& sp) {
  HeatmapEvent ev;
  HeatmapViewport& v = ui.views[sp.id];
  const Matrix& m = *sp.m;
  const int rows = static_cast<int>(m.rows()), cols = static_cast<int>(m.cols());
  const bool light = ui.settings.light_theme;
  const float fs = ImGui::GetFontSize();
  const float pad = fs * 0.5f;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 pos = ImGui::GetCursorScreenPos();
  ImVec2 avail = sp.size;
  if (avail.x <= 0) avail.x = ImGui::GetContentRegionAvail().x;
  if (avail.y <= 0) avail.y = ImGui::GetContentRegionAvail().y;
  const float min_side = sp.labels ? fs * 6 : fs * 1.5f;  // thumbnails may be small
  avail.x = std::max(avail.x, min_side);
  avail.y = std::max(avail.y, min_side);
  if (v.rows != rows || v.cols != cols) {  // a new shape starts fitted
    v.zoom = 1;
    v.pan = {0, 0};
  }
  v.rows = rows;
  v.cols = cols;

  // Margins: row labels on the left, key labels on top, row statistics right, colour bar below.
  float label_w = 0;
  for (int i = 0; i < std::min(rows, 4096); ++i)
    label_w = std::max(label_w, ImGui::CalcTextSize(label_or_index(sp.row_labels, i).c_str()).x);
  if (sp.cell <= 0) label_w = std::min(label_w, avail.x * 0.25f);
  label_w = sp.labels && sp.row_labels_shown ? label_w + pad * 2 : sp.labels ? pad : 0;
  const float top_h = sp.labels ? fs * 1.5f : 0;
  // Row statistics only when each row is tall enough to carry its line of text.
  const bool stats_fit = avail.y / std::max(rows, 1) >= fs * 0.9f;
  const float stats_w = sp.row_stats && sp.labels && stats_fit
                            ? ImGui::CalcTextSize("Σ 1.000   H 10.00 bits").x + pad * 3
                            : 0;
  const float bar_h = sp.color_bar ? fs * 3.2f : 0;
  const float grid_w = std::max(avail.x - label_w - stats_w, fs * 2);
  const float grid_h = std::max(avail.y - top_h - bar_h, fs * 2);
  const float max_cell = sp.max_cell * fs / 20.0f;
  float base_w = std::min(grid_w / cols, max_cell), base_h = std::min(grid_h / rows, max_cell);
  base_w = std::min(base_w, base_h * 2.5f);  // wide but not ribbon-like
  base_h = std::min(base_h, base_w);         // never taller than wide
  if (sp.cell > 0) base_w = base_h = sp.cell;
  v.cell_w = base_w * v.zoom;
  v.cell_h = base_h * v.zoom;
  const ImVec2 vp0{pos.x + label_w, pos.y + top_h};
  const ImVec2 vp_size =
      sp.cell > 0 ? ImVec2{base_w * cols, base_h * rows}
                  : ImVec2{std::min(grid_w, base_w * cols), std::min(grid_h, base_h * rows)};
  const ImVec2 vp1{vp0.x + vp_size.x, vp0.y + vp_size.y};
  // Keep the matrix covering the viewport.
  v.pan.x = std::clamp(v.pan.x, vp_size.x - v.cell_w * cols, 0.0f);
  v.pan.y = std::clamp(v.pan.y, vp_size.y - v.cell_h * rows, 0.0f);
  v.origin = {vp0.x + v.pan.x, vp0.y + v.pan.y};
  v.clip = {vp0.x, vp0.y, vp1.x, vp1.y};
  v.drawn = true;

  // Cells.
  dl->PushClipRect(vp0, vp1, true);
  const ImVec2 full1{v.origin.x + v.cell_w * cols, v.origin.y + v.cell_h * rows};
  if (!ui.renderer || !ui.renderer->draw(dl, sp.texture_key.empty() ? sp.id : sp.texture_key,
                                         sp.serial ? sp.serial : ui.state.trace_serial(), m,
                                         sp.hidden, sp.scale, light, v.origin, full1))
    draw_cells_cpu(dl, sp, v, light);

  const int i0 = std::max(0, static_cast<int>((vp0.y - v.origin.y) / v.cell_h));
  const int i1 = std::min(rows, static_cast<int>(std::ceil((vp1.y - v.origin.y) / v.cell_h)));
  const int j0 = std::max(0, static_cast<int>((vp0.x - v.origin.x) / v.cell_w));
  const int j1 = std::min(cols, static_cast<int>(std::ceil((vp1.x - v.origin.x) / v.cell_w)));
  const ImU32 grid_col = light ? IM_COL32(255, 255, 255, 200) : IM_COL32(20, 20, 24, 200);
  if (v.cell_w >= 10 && v.cell_h >= 10) {
    for (int j = j0; j <= j1; ++j)
      dl->AddLine({v.origin.x + j * v.cell_w, vp0.y}, {v.origin.x + j * v.cell_w, vp1.y}, grid_col);
    for (int i = i0; i <= i1; ++i)
      dl->AddLine({vp0.x, v.origin.y + i * v.cell_h}, {vp1.x, v.origin.y + i * v.cell_h}, grid_col);
  }
  // Numbers when they fit.
  const int decimals = ui.settings.decimals;
  float num_w = 1e9f;
  if ((i1 - i0) * (j1 - j0) <= 4096) {  // the widest number on screen decides whether they fit
    num_w = 0;
    for (int i = i0; i < i1; ++i)
      for (int j = j0; j < j1; ++j)
        num_w =
            std::max(num_w, ImGui::CalcTextSize(format_fixed(m(i, j), decimals, true).c_str()).x);
    num_w += 6;
  }
  if (v.cell_w >= num_w && v.cell_h >= fs + 2) {
    const float span = static_cast<float>(sp.scale.hi - sp.scale.lo);
    for (int i = i0; i < i1; ++i)
      for (int j = j0; j < j1; ++j) {
        const bool hid = is_hidden(sp, i, j);
        const float x = m(i, j);
        // A hidden weight is exactly 0 (written as the exporter writes it); a masked score −∞.
        std::string text = hid && std::isfinite(x) ? "0" : format_fixed(x, decimals, true);
        ImU32 col;
        if (hid) {
          col = light ? IM_COL32(60, 60, 70, 255) : IM_COL32(200, 200, 210, 255);
        } else {
          const float t = span > 0 ? (x - static_cast<float>(sp.scale.lo)) / span : 0.5f;
          col = luminance(colormap_u32(sp.scale.map, t)) > 0.55f ? IM_COL32(0, 0, 0, 255)
                                                                 : IM_COL32(255, 255, 255, 255);
        }
        const ImVec2 ts = ImGui::CalcTextSize(text.c_str());
        const ImVec2 c = v.cell_center(i, j);
        dl->AddText({std::floor(c.x - ts.x / 2), std::floor(c.y - ts.y / 2)}, col, text.c_str());
      }
  }
  // Selection.
  const ImU32 sel_col = light ? IM_COL32(230, 60, 20, 255) : IM_COL32(255, 140, 40, 255);
  const float thick = std::max(2.0f, fs * 0.15f);
  if (sp.selected_row >= 0 && sp.selected_row < rows) {
    const int i = sp.selected_row;
    if (sp.selected_col >= 0 && sp.selected_col < cols) {
      ImVec2 a = v.cell_min(i, sp.selected_col);
      dl->AddRect({a.x + 1, a.y + 1}, {a.x + v.cell_w - 1, a.y + v.cell_h - 1}, sel_col, 0, 0,
                  thick);
    } else {
      ImVec2 a = v.cell_min(i, 0);
      dl->AddRect({a.x + 1, a.y + 1}, {a.x + v.cell_w * cols - 1, a.y + v.cell_h - 1}, sel_col, 0,
                  0, thick);
    }
  }
  dl->PopClipRect();

  // Labels: query tokens left, key tokens on top (thinned out when they would overlap).
  const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 dim_col = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  if (sp.labels && sp.row_labels_shown) {
    dl->PushClipRect({pos.x, vp0.y - fs * 0.5f}, {vp0.x, vp1.y + fs * 0.5f}, true);
    const int every = std::max(1, static_cast<int>(std::ceil(fs / v.cell_h)));
    for (int i = i0 - i0 % every; i < i1; i += every) {
      // A row scrolled half out of view keeps no label: a clipped token reads as another word.
      const float centre = v.origin.y + (i + 0.5f) * v.cell_h;
      if (centre < vp0.y || centre > vp1.y) continue;
      std::string t = label_or_index(sp.row_labels, i);
      ImVec2 ts = ImGui::CalcTextSize(t.c_str());
      const float y = centre - ts.y / 2;
      dl->AddText({vp0.x - pad - ts.x, y}, i == sp.selected_row ? sel_col : text_col, t.c_str());
    }
    dl->PopClipRect();
  }
  if (sp.labels) {
    dl->PushClipRect({pos.x + label_w * 0.5f, pos.y}, {vp1.x + std::max(stats_w, pad), vp0.y},
                     true);
    float widest = 0;
    for (int j = j0; j < std::min(j1, j0 + 512); ++j)
      widest = std::max(widest, ImGui::CalcTextSize(label_or_index(sp.col_labels, j).c_str()).x);
    const int every = std::max(1, static_cast<int>(std::ceil((widest + pad) / v.cell_w)));
    for (int j = j0 - j0 % every; j < j1; j += every) {
      const float centre = v.origin.x + (j + 0.5f) * v.cell_w;
      if (centre < vp0.x || centre > vp1.x) continue;
      std::string t = label_or_index(sp.col_labels, j);
      ImVec2 ts = ImGui::CalcTextSize(t.c_str());
      const float x = centre - ts.x / 2;
      dl->AddText({x, pos.y + (top_h - ts.y) / 2}, j == sp.selected_col ? sel_col : text_col,
                  t.c_str());
    }
    dl->PopClipRect();
  }
  // Row sums and entropy beside weights: students see each row sum to 1 and sharpen or flatten.
  if (sp.row_stats && sp.labels && stats_w > 0 && v.cell_h >= fs * 0.9f) {
    // Only the rows on screen: a 1024-key row costs 1024 logs.
    dl->PushClipRect({vp1.x, vp0.y}, {vp1.x + stats_w, vp1.y}, true);
    for (int i = i0; i < i1; ++i) {
      const double sum = m.row(i).cast<double>().sum();
      const double ent = row_entropy_bits(m.row(i))[0];
      char buf[96];
      std::snprintf(buf, sizeof buf, "Σ %.3f   H %.2f bits", sum, ent);
      const float y = v.origin.y + (i + 0.5f) * v.cell_h - fs / 2;
      dl->AddText({vp1.x + pad * 1.5f, y}, dim_col, buf);
    }
    dl->PopClipRect();
  }
  if (sp.row_stats && sp.labels && stats_w > 0) {
    dl->AddText({vp1.x + pad * 1.5f, pos.y + (top_h - fs) / 2}, dim_col, "row sum · entropy");
  }

  // Colour bar with its scale, and the hatch swatch when something is hidden.
  if (sp.color_bar) {
    const float bw =
        sp.cell > 0 ? vp_size.x : std::min(std::max(vp_size.x, fs * 14), avail.x - label_w);
    const float by = vp1.y + fs * 0.6f, bh = fs * 0.8f;
    const int n = 96;
    for (int k = 0; k < n; ++k) {
      const float x0 = vp0.x + bw * k / n, x1 = vp0.x + bw * (k + 1) / n + 1;
      dl->AddRectFilled({x0, by}, {std::min(x1, vp0.x + bw), by + bh},
                        colormap_u32(sp.scale.map, (k + 0.5f) / n));
    }
    dl->AddRect({vp0.x, by}, {vp0.x + bw, by + bh}, dim_col);
    // Ticks from the exporter's rule (render/color_scale.h): both ends with the precision their
    // size needs, and round values between them, as many as the bar has room for.
    const float tick_w = ImGui::CalcTextSize("−0.000").x + pad * 2;
    const int max_ticks = std::clamp(static_cast<int>(bw / tick_w), 2, 6);
    if (bw >= tick_w * 2) {
      const std::vector<ColorTick> ticks = colorbar_ticks(sp.scale, max_ticks);
      for (size_t k = 0; k < ticks.size(); ++k) {
        const ImVec2 ts = ImGui::CalcTextSize(ticks[k].label.c_str());
        const float align = k == 0 ? 0.0f : k + 1 == ticks.size() ? 1.0f : 0.5f;
        const float x = vp0.x + bw * static_cast<float>(sp.scale.t(ticks[k].value));
        dl->AddLine({x, by + bh}, {x, by + bh + 3}, dim_col);
        dl->AddText({x - ts.x * align, by + bh + 3}, dim_col, ticks[k].label.c_str());
      }
    }
    bool any_hidden = false;
    if (sp.hidden) any_hidden = (sp.hidden->array() != 0).any();
    if (any_hidden) {  // legend for the hatch, right of the bar
      const float sx = vp0.x + bw + pad * 2;
      draw_hatch(dl, {sx, by}, {sx + bh * 1.6f, by + bh}, light);
      dl->AddText({sx + bh * 1.6f + pad * 0.6f, by + (bh - fs) / 2}, dim_col,
                  "hidden by the mask (−∞)");
    }
  }

  // Interaction: one invisible button over the cells, one over the row labels.
  ImGuiIO& io = ImGui::GetIO();
  if (!sp.interactive) {
    ImGui::SetCursorScreenPos(pos);
    ImGui::Dummy(avail);
    return ev;
  }
  ImGui::SetCursorScreenPos(vp0);
  ImGui::InvisibleButton((sp.id + "##cells").c_str(),
                         {std::max(vp_size.x, 1.0f), std::max(vp_size.y, 1.0f)},
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight |
                             ImGuiButtonFlags_MouseButtonMiddle);
  const bool hovered = ImGui::IsItemHovered();
  bool& dragged = v.dragged;
  if (ImGui::IsItemActivated()) dragged = false;
  if (ImGui::IsItemActive()) {
    for (int b = 0; b < 3; ++b)
      if (ImGui::IsMouseDragging(b, 4.0f)) {
        dragged = true;
        v.pan.x += io.MouseDelta.x;
        v.pan.y += io.MouseDelta.y;
      }
  }
  if (hovered) {
    const int i = static_cast<int>(std::floor((io.MousePos.y - v.origin.y) / v.cell_h));
    const int j = static_cast<int>(std::floor((io.MousePos.x - v.origin.x) / v.cell_w));
    if (io.MouseWheel != 0) {  // zoom about the cursor
      const float old = v.zoom;
      const float max_zoom = std::max(1.0f, (fs * 4) / std::min(base_w, base_h));
      v.zoom = std::clamp(v.zoom * std::pow(1.2f, io.MouseWheel), 1.0f, max_zoom);
      const float k = v.zoom / old;
      v.pan.x = (io.MousePos.x - vp0.x) - (io.MousePos.x - vp0.x - v.pan.x) * k;
      v.pan.y = (io.MousePos.y - vp0.y) - (io.MousePos.y - vp0.y - v.pan.y) * k;
    }
    if (i >= 0 && i < rows && j >= 0 && j < cols && !ImGui::IsItemActive()) {
      // A thin outline on the cell under the pointer, so the tooltip's indices are easy to place.
      const ImVec2 a = v.cell_min(i, j);
      dl->PushClipRect(vp0, vp1, true);
      dl->AddRect(a, {a.x + v.cell_w, a.y + v.cell_h},
                  light ? IM_COL32(0, 0, 0, 140) : IM_COL32(255, 255, 255, 160));
      dl->PopClipRect();
      ImGui::BeginTooltip();
      const std::string value = is_hidden(sp, i, j) && !(std::isinf(m(i, j)))
                                    ? format_fixed(m(i, j), 4, true) + "  (hidden by the mask)"
                                    : format_fixed(m(i, j), 4, true);
      ImGui::Text("%s[%d, %d] = %s", sp.matrix_name, i, j, value.c_str());
      ImGui::TextDisabled("row %d: %s    column %d: %s", i,
                          label_or_index(sp.row_labels, i).c_str(), j,
                          label_or_index(sp.col_labels, j).c_str());
      ImGui::EndTooltip();
    }
    if (ImGui::IsMouseReleased(ImGuiMouseButton_Left) && !dragged && i >= 0 && i < rows && j >= 0 &&
        j < cols) {
      ev = {i, j, true};
    }
    if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Right)) {
      v.zoom = 1;
      v.pan = {0, 0};
    }
  }
  // Row labels: click selects the whole row.
  ImGui::SetCursorScreenPos({pos.x, vp0.y});
  ImGui::InvisibleButton((sp.id + "##rows").c_str(),
                         {std::max(label_w, 1.0f), std::max(vp_size.y, 1.0f)});
  if (ImGui::IsItemClicked(ImGuiMouseButton_Left)) {
    const int i = static_cast<int>(std::floor((io.MousePos.y - v.origin.y) / v.cell_h));
    if (i >= 0 && i < rows) ev = {i, -1, true};
  }
  ImGui::SetCursorScreenPos(pos);
  ImGui::Dummy(avail);
  return ev;
}

}  // namespace attn
