// State of the seq2seq window (panel_seq2seq.cpp), kept in Ui::seq2seq: the model it draws
// (Seq2seqSession, no ImGui) and what only the window needs. Tests read and set both.
#pragma once

#include <imgui.h>

#include <string>

#include "gui/model/seq2seq_session.h"

namespace attn {

struct Seq2seqPanel {
  Seq2seqSession session;
  std::string select_tab;         // "translate", "live" or "bottleneck": bring it forward once
  std::string shown_tab;          // the tab drawn last frame
  ImVec4 placed_for{0, 0, 0, 0};  // the main window's size and font when this one was placed
  bool autostart = false;         // press Train on the first frame the live tab shows (gui --tab)
  bool place_beside_lesson = false;  // a lesson opened the window: put it beside the lesson, once
};

}  // namespace attn
