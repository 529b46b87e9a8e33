// Records ImGui's items as they are added and checks a frame's layout (see layout_check.h).
#include "layout_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

namespace {
std::vector<attn::test::ItemBox>* g_items = nullptr;
}  // namespace

// The real ImGui::ItemAdd, and the wrapper every call from another object file reaches.
extern "C" bool __real__ZN5ImGui7ItemAddERK6ImRectjPS1_i(const ImRect& bb, ImGuiID id,
                                                         const ImRect* nav_bb, ImGuiItemFlags f);
extern "C" bool __wrap__ZN5ImGui7ItemAddERK6ImRectjPS1_i(const ImRect& bb, ImGuiID id,
                                                         const ImRect* nav_bb, ImGuiItemFlags f) {
  if (g_items) {
    ImGuiContext& g = *GImGui;
    attn::test::ItemBox box;
    box.window = g.CurrentWindow;
    box.bb = bb;
    box.clip = g.CurrentWindow->ClipRect;
    if (ImGuiTable* t = g.CurrentTable; t && t->InnerWindow == g.CurrentWindow &&
                                        t->CurrentColumn >= 0 &&
                                        t->CurrentColumn < t->ColumnsCount) {
      const ImGuiTableColumn& c = t->Columns[t->CurrentColumn];
      // The table itself (added by EndTable) and a row-wide selectable span every column.
      box.table_itself =
          (bb.Min.x <= t->OuterRect.Min.x + 1 && bb.Max.x >= t->OuterRect.Max.x - 1) ||
          (bb.Min.x <= t->Columns[0].MinX + 1 &&
           bb.Max.x >= t->Columns[t->ColumnsCount - 1].MaxX - 1);
      box.in_column = !box.table_itself;
      box.col_min = c.MinX;
      box.col_max = c.MaxX;
    }
    g_items->push_back(box);
  }
  return __real__ZN5ImGui7ItemAddERK6ImRectjPS1_i(bb, id, nav_bb, f);
}

namespace attn::test {
namespace {

constexpr float kSlack = 1.0f;  // layouts are in float pixels

// A window, or a window it sits in, scrolls to bring a cut item into view.
// Across only with a scrollbar to show it: ImGui computes a scroll range for text wider than a
// window without a horizontal scrollbar, but nobody scrolls there.
bool scrolls_x(const ImGuiWindow* w) {
  for (; w; w = (w->Flags & ImGuiWindowFlags_ChildWindow) ? w->ParentWindow : nullptr)
    if (w->ScrollbarX) return true;
  return false;
}
bool scrolls_y(const ImGuiWindow* w) {
  for (; w; w = (w->Flags & ImGuiWindowFlags_ChildWindow) ? w->ParentWindow : nullptr)
    if (w->ScrollbarY || w->ScrollMax.y > 0.5f) return true;
  return false;
}

// Why an item is cut by its column or clip rectangle where nothing scrolls to it ("" if not).
std::string cut_item(const ItemBox& b) {
  const float e = kSlack;
  std::string why;
  if (b.in_column && (b.bb.Min.x < b.col_min - e || b.bb.Max.x > b.col_max + e))
    why = "wider than its table column [" + std::to_string(b.col_min) + ", " +
          std::to_string(b.col_max) + "]";
  // Outside the clip rectangle is fine only where the window scrolls to it (and the clip is the
  // window's own, not a narrower one pushed inside it).
  const ImRect& inner = b.window->InnerClipRect;
  const bool own_x =
      std::fabs(b.clip.Min.x - inner.Min.x) <= e && std::fabs(b.clip.Max.x - inner.Max.x) <= e;
  const bool own_y =
      std::fabs(b.clip.Min.y - inner.Min.y) <= e && std::fabs(b.clip.Max.y - inner.Max.y) <= e;
  const bool cut_x = b.bb.Min.x < b.clip.Min.x - e || b.bb.Max.x > b.clip.Max.x + e;
  const bool cut_y = b.bb.Min.y < b.clip.Min.y - e || b.bb.Max.y > b.clip.Max.y + e;
  if (cut_x && !(scrolls_x(b.window) && (own_x || b.in_column)))
    why = "cut on the left or right by " + box_text(b.clip);
  if (cut_y && !(scrolls_y(b.window) && (own_y || b.in_column)))
    why = "cut at the top or bottom by " + box_text(b.clip);
  return why;
}

// Text drawn into a draw list, cut on a side that is not a scrolling window's own edge.
bool cut_text(const PlacedText& t) {
  const float e = kSlack;
  // Under an empty clip rectangle (a band scrolled out of view) nothing of it is drawn.
  if (t.clip_max.x <= t.clip_min.x || t.clip_max.y <= t.clip_min.y) return false;
  // Text reaching past the window's edge in a window that scrolls is reachable there; its clip
  // rectangle (cut by the window) says nothing more.
  auto cut = [&](float lo, float hi, float clo, float chi, float wlo, float whi, bool scrolls) {
    if (scrolls && (lo < wlo - e || hi > whi + e)) return false;
    const bool low = lo < clo - e && !(scrolls && std::fabs(clo - wlo) <= e);
    const bool high = hi > chi + e && !(scrolls && std::fabs(chi - whi) <= e);
    return low || high;
  };
  return cut(t.min.x, t.max.x, t.clip_min.x, t.clip_max.x, t.window_min.x, t.window_max.x,
             t.scrolls_x) ||
         cut(t.min.y, t.max.y, t.clip_min.y, t.clip_max.y, t.window_min.y, t.window_max.y,
             t.scrolls_y);
}

bool contains(const ImRect& outer, const ImRect& inner) {
  const float e = kSlack;
  return inner.Min.x >= outer.Min.x - e && inner.Min.y >= outer.Min.y - e &&
         inner.Max.x <= outer.Max.x + e && inner.Max.y <= outer.Max.y + e;
}

// Two widgets of one window that partly cover each other, in the part of them that is shown.
bool overlap(const ItemBox& a, const ItemBox& b) {
  if (a.window != b.window || a.table_itself || b.table_itself) return false;
  ImRect va = a.bb, vb = b.bb;
  va.ClipWith(a.clip);
  vb.ClipWith(b.clip);
  const float w = std::min(va.Max.x, vb.Max.x) - std::max(va.Min.x, vb.Min.x);
  const float h = std::min(va.Max.y, vb.Max.y) - std::max(va.Min.y, vb.Min.y);
  if (w <= 2 * kSlack || h <= 2 * kSlack) return false;
  return !contains(a.bb, b.bb) && !contains(b.bb, a.bb);
}

}  // namespace

void record_items(std::vector<ItemBox>* into) { g_items = into; }

std::string box_text(const ImRect& r) {
  std::ostringstream s;
  s << "[" << r.Min.x << ", " << r.Min.y << " .. " << r.Max.x << ", " << r.Max.y << "]";
  return s.str();
}

int check_layout(const std::vector<ItemBox>& items, const std::vector<PlacedText>& texts,
                 const LayoutCheck& how) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const ImRect screen(vp->Pos, {vp->Pos.x + vp->Size.x, vp->Pos.y + vp->Size.y});
  int failures = 0;
  auto report = [&]() { return failures++ < how.max_reports; };
  for (ImGuiWindow* w : GImGui->Windows) {
    if (!w->WasActive || w->Hidden || (w->Flags & ImGuiWindowFlags_Tooltip) || w->ParentWindow)
      continue;
    if (!screen.Contains(ImRect(w->Pos, {w->Pos.x + w->Size.x - 1, w->Pos.y + w->Size.y - 1})) &&
        report())
      ADD_FAILURE() << "window '" << w->Name << "' " << box_text(w->Rect())
                    << " is not inside the screen " << box_text(screen);
  }
  std::vector<const ItemBox*> shown;
  for (const ItemBox& b : items) {
    if (!b.window || (b.window->Flags & ImGuiWindowFlags_Tooltip)) continue;
    // Separators are one pixel high and span the whole window by design.
    if (b.bb.GetWidth() <= 0 || b.bb.GetHeight() < 2) continue;
    shown.push_back(&b);
    const std::string why = cut_item(b);
    if (!why.empty() && report())
      ADD_FAILURE() << "item " << box_text(b.bb) << " in window '" << b.window->Name << "' " << why
                    << " (window scroll max " << b.window->ScrollMax.x << ", "
                    << b.window->ScrollMax.y << ", content " << b.window->ContentSize.y << ", size "
                    << b.window->Size.y << ", ideal " << b.window->ContentSizeIdeal.y << ")";
  }
  // Widgets, not the boxes that hold them: a group, a table or a child window's place in its
  // parent holds items of its own (and may reach a little past them, as a table's last column
  // does), so only boxes that hold no other item are compared.
  std::vector<const ItemBox*> leaves;
  for (const ItemBox* a : shown) {
    bool holds = false;
    for (const ItemBox* b : shown)
      holds = holds || (a != b && a->window == b->window && contains(a->bb, b->bb) &&
                        !contains(b->bb, a->bb));
    if (!holds) leaves.push_back(a);
  }
  if (how.overlap)
    for (size_t i = 0; i < leaves.size(); ++i)
      for (size_t j = i + 1; j < leaves.size(); ++j)
        if (overlap(*leaves[i], *leaves[j]) && report())
          ADD_FAILURE() << "items " << box_text(leaves[i]->bb) << " and " << box_text(leaves[j]->bb)
                        << " overlap in window '" << leaves[i]->window->Name << "'";
  for (const PlacedText& t : texts)
    if (t.max.x > t.min.x && cut_text(t) && report())
      ADD_FAILURE() << "text '" << t.text << "' " << box_text(ImRect(t.min, t.max))
                    << " is cut by its clip rectangle " << box_text(ImRect(t.clip_min, t.clip_max))
                    << " in a window clipped to " << box_text(ImRect(t.window_min, t.window_max))
                    << (t.scrolls_x ? " that scrolls across" : "")
                    << (t.scrolls_y ? " that scrolls down" : "");
  return failures;
}

}  // namespace attn::test
