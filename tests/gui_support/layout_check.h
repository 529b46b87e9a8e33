// What the GUI layout tests check in a drawn frame: every ImGui item (recorded as it is added,
// through the linker's --wrap of ImGui::ItemAdd, see tests/CMakeLists.txt) and every text drawn
// straight into a draw list must lie inside its window, table column and clip rectangle unless
// the window scrolls to it, and no two widgets may overlap.
#pragma once

#include <imgui.h>
#include <imgui_internal.h>

#include <string>
#include <vector>

#include "gui/ui.h"

namespace attn::test {

// One item as ImGui added it: its box, window, clip rectangle and table column.
struct ItemBox {
  ImGuiWindow* window = nullptr;
  bool table_itself = false;  // the whole table, or a row across all its columns
  ImRect bb, clip;
  bool in_column = false;  // inside a table cell: the column's full extent below
  float col_min = 0, col_max = 0;
};

// Items added from now on go to `into`; nullptr stops recording.
void record_items(std::vector<ItemBox>* into);

struct LayoutCheck {
  bool overlap = true;   // also fail where two widgets of one window partly cover each other
  int max_reports = 12;  // failures added to the test (0: only count them)
};

// Checks the recorded items and texts of the last frame (ADD_FAILURE for each problem, at most
// max_reports of them) and returns how many it found.
int check_layout(const std::vector<ItemBox>& items, const std::vector<PlacedText>& texts,
                 const LayoutCheck& how = {});

std::string box_text(const ImRect& r);

}  // namespace attn::test
