// State of the seq2seq window (panel_seq2seq.cpp), kept in Ui::seq2seq; tests read and set it.
#pragma once

#include <imgui.h>

#include <map>
#include <string>
#include <vector>

#include "gui/model/background_job.h"
#include "seq2seq/live_trainer.h"

namespace attn {

struct Seq2seqPanel {
  bool scanned = false;            // files looked up (on the first frame)
  std::vector<std::string> files;  // model paths: the shipped models (io/shipped.h), sorted …
  std::vector<std::string> names;  // … and the names the window shows ("bahdanau")
  std::string open_model;          // a model to add to the list and select (gui --model)
  std::map<std::string, s2s::Model> models;
  std::map<std::string, std::string> load_errors;
  int model_a = 0, model_b = -1;  // indices into files; model_b -1: no second model
  char input[256] = "please note that the meeting moved to 11/03/1987 at 10:30";
  int step = 0, position = -1;  // position -1: the position with the largest weight
  // Predict, then reveal: the step's row stays hidden until the class has picked a position.
  bool predicting = false, revealed = false;
  int guess = -1;
  std::string last_output;        // model_a's translation of input, as drawn last frame
  std::string select_tab;         // "translate", "live" or "bottleneck": bring it forward once
  std::string shown_tab;          // the tab drawn last frame
  ImVec4 placed_for{0, 0, 0, 0};  // the main window's size and font when this one was placed

  s2s::LiveTrainer live;
  int live_score = 1, live_hidden = 32, live_epochs = 4;
  char live_example[128] = "sunday the 22nd of november, 2026";
  std::string live_error;
  std::string reported_failure;  // the live run's failure already put in the status bar
  bool autostart = false;        // press Train on the first frame the live tab shows (gui --tab)
  bool place_beside_lesson = false;  // a lesson opened the window: put it beside the lesson, once

  // The bottleneck tab's evaluation: accuracy by length of each model, or why it failed.
  BackgroundJob<std::vector<std::vector<s2s::LengthBucket>>> compare_job;
  std::vector<std::string> compare_names;
  std::vector<std::vector<s2s::LengthBucket>> compare_rows;
  std::string compare_error;
};

}  // namespace attn
