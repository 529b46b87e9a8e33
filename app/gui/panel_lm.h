// The language-model window (View → Language model, File → Open model folder…): the state its
// panels share, kept in Ui::lm, and the panels, one file each: panel_lm.cpp (the window, the
// model and sentence bar, opening a head in the stepper), panel_lm_model.cpp (layers × heads
// thumbnails), panel_lm_heads.cpp (BertViz-style head view), panel_lm_next.cpp (next-token
// chart), panel_lm_roles.cpp (what each head does), panel_lm_kv.cpp (the KV cache),
// panel_lm_circuit.cpp (how a previous-token head and an induction head compose),
// panel_lm_rollout.cpp (attention rollout across layers), panel_lm_block.cpp (one token's path
// through one block, and GPT-2's block against Llama's).
#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

#include "gui/gui.h"
#include "gui/model/lm_session.h"
#include "gui/ui.h"
#include "lm/sinks.h"

namespace attn {

struct LmPanel {
  LmSession session;
  bool default_offered = false;  // open_default_lm_model has run (it acts once)
  // The Shipped models list: each model's model-card summary, read when the list first shows it.
  std::map<std::string, std::string> shipped_summaries;
  // The Shipped models list as drawn last frame (tests click it): its button, and each model in
  // the open list with the summary shown and the item's rectangle (screen coordinates).
  struct ShippedDrawn {
    std::string name, summary;
    ImVec2 min, max;
  };
  ImVec2 shipped_button_min{0, 0}, shipped_button_max{0, 0};
  std::vector<ShippedDrawn> shipped_drawn;
  std::string text_buffer;  // the sentence field (applied as the user types)
  bool text_initialised = false;
  std::string select_tab;  // "model", "heads", "block", "next", "roles", "circuit", "rollout" or
                           // "kv": bring it forward once
  std::string shown_tab;   // the tab drawn last frame
  bool model_view_tab = false;  // the window is too narrow for the model view beside the tabs
  int role = 0;  // the score the roles tab shows: 0 previous, 1 first, 2 self, 3 induction
  // The roles tab's attention-sink box (first-token score): the run's strongest sink and its
  // explanation, for the run with session serial sink_serial.
  lm::SinkExample sink;
  std::string sink_text;
  uint64_t sink_serial = ~0ull;
  bool all_heads = false;     // head view: every head of the layer at once
  int hover_token = -1;       // head view: the token under the mouse (-1 none)
  bool hover_is_key = false;  // … on the right (keys) side
  int pinned_token = -1;      // head view: a clicked token stays isolated
  bool pinned_is_key = false;
  // The head view as drawn last frame (tests point at its tokens): the top-left of the query
  // column, the row height, where the key column starts and ends, the lines drawn as (head,
  // query, key), and the tokens whose labels were faded because an isolated token does not
  // connect them (queries, then keys).
  struct HeadViewDrawn {
    ImVec2 origin{0, 0};
    float row_h = 0, queries_x1 = 0, keys_x0 = 0, keys_x1 = 0;
    std::vector<std::array<int, 3>> lines;
    std::vector<int> faded_queries, faded_keys;
    int first = 0, rows = 0;  // the window of tokens in view (presentation: every one labelled)
    int label_every = 1;      // a label every so many rows (1: every token)
    float label_px = 0;       // the labels' size
    // An isolated query's strongest weights in words, when they are drawn above the columns
    // (no room right of them); "" otherwise.
    std::string words_above;
  } head_view;
  // Presentation's head view shows a window of the tokens at the presentation font: its first
  // row (moved by the wheel or the ▲/▼ buttons), re-centred when the token in focus changes.
  int head_first = 0, head_anchor = -1;
  int kv_tokens = 1024;  // KV cache table: context length
  // Live generation: how many tokens "Generate" adds, and whether it samples at the Next tab's
  // temperature (else the most likely token each time).
  int generate_tokens = 10;
  bool generate_sample = false;
  size_t generated_shown = 0;  // the generated tokens the sentence field shows
  // The rollout tab: the token followed (-1: the last); its rows are the session's.
  int rollout_token = -1;
  // The induction-circuit tab: the query token (-1: the last one seen before), the guide's step,
  // the two heads (-1: the best of their kind). The score parts are the session's (circuit()).
  int circuit_query = -1, circuit_step = 0, circuit_prev = -1, circuit_ind = -1;
  std::string circuit_why_text;            // step 3's words under its table (not drawn on a slide)
  ImVec4 block_attention_box{0, 0, 0, 0};  // where its attention box was drawn (x0, y0, x1, y1)
  bool block_scroll_to_compare = false;    // its "GPT-2 against Llama ↓" was pressed
  bool block_slide_compare = false;        // on a slide: the comparison in the flow's place
  int block_compare_drawn = 0;  // and the GPT-2 / Llama table: 0 not, 1 below the flow, 2 beside
  int opened_layer = -1, opened_head = -1;  // the head last opened in the stepper
  // The query to select in the stepper once the head opened there has its trace (a long
  // sentence's is computed off the UI thread); -1: none.
  int stepper_query = -1;
  // A lesson step opened the window: it closes when the lesson moves on.
  bool opened_by_lesson = false;
  bool place_beside_lesson = false;  // a lesson step opened it: left of the lesson window, once
  // A lesson step's head to open in the stepper at `stage` once the model has run (layer -1:
  // none pending).
  struct StepperRequest {
    int layer = -1, head = 0;
    StageId stage = StageId::kWeights;
    int rope_view = -1;  // the rope stage's view to bring forward (RopeView), -1 = the user's
  } lesson_stepper;
  ImVec4 placed_for{0, 0, 0, 0};  // window width, height and font when the window was placed
  // Every head's weights as matrices for the thumbnails, rebuilt when the run changes.
  std::vector<Matrix> weights;
  uint64_t weights_serial = 0;
  const Matrix& head_weights(int l, int h);
};

// The window (draw_app draws it while Ui::lm.open).
void draw_lm_panel(Ui& ui);
// Picks up the model's background work every frame, whether or not its window is open.
void poll_lm_panel(Ui& ui);
// Each tab's contents (inside the window).
void draw_lm_model_view(Ui& ui, LmPanel& p);
void draw_lm_head_view(Ui& ui, LmPanel& p);
void draw_lm_next_tokens(Ui& ui, LmPanel& p);
void draw_lm_head_roles(Ui& ui, LmPanel& p);
// The roles tab's box on attention sinks: the run's strongest, with its numbers (lm/sinks.h).
void draw_lm_sink_box(Ui& ui, LmPanel& p);
void draw_lm_kv_cache(Ui& ui, LmPanel& p);
void draw_lm_circuit(Ui& ui, LmPanel& p);
void draw_lm_rollout(Ui& ui, LmPanel& p);  // attention rollout across layers
void draw_lm_block(Ui& ui, LmPanel& p);    // one token's path through one block

// Opens head (l, h) of the current run in the stepper: its scenario replaces the app's, and the
// window steps aside so the pipeline shows. With `query` ≥ 0 that query's row is selected, so
// the narration works through it.
void open_lm_head_in_stepper(Ui& ui, int l, int h, int query = -1);

// --model, --text, --layer and --head (GuiOptions::model_head): loads the model and runs the
// text (waiting for both), opens the language-model window on that head, and with --step opens
// the head in the stepper instead. False with an error naming the flag.
bool setup_lm_from_options(Ui& ui, const GuiOptions& options, std::string& error);

// The window's first sight with no model (nothing chose one: a lesson, --model, a folder opened)
// starts loading the shipped English model, kDefaultLmModel, once. True when it started.
bool open_default_lm_model(LmPanel& p);

// In the stepper's inputs panel when a real head is open: which head, and what an edit recomputes.
void draw_lm_head_note(Ui& ui);
// For a head of a grouped-query model open in the stepper, the K/V head it reads and the other
// query heads that read it too (lm::kv_head_text); "" for anything else.
std::string lm_open_head_kv_text(const Ui& ui);

// A distinct colour per head (BertViz uses one colour per head too).
ImU32 lm_head_color(int h, float alpha = 1.0f);
// The name of each head score and its one-line definition.
const char* lm_role_name(int role);
const char* lm_role_definition(int role);
double lm_role_value(const lm::HeadScores& s, int role);

}  // namespace attn
