// The state the ImGui panels share besides the model (AppState): view settings, heatmap views,
// pending dialogs; and the panel entry points, one file per panel.
#pragma once

#include <imgui.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gui/model/app_state.h"
#include "gui/model/predict.h"
#include "gui/model/stage_motion.h"
#include "gui/widget_context.h"
#include "gui/window_id.h"
#include "lessons/lesson.h"
#include "lessons/question_secret.h"
#include "render/color_scale.h"
#include "render/image_format.h"
#include "train/background_job.h"

namespace attn {

class HeatmapRenderer;
class LessonPlayer;

// A colour scale as color_scale_cached computed it, with what it was computed from.
struct CachedColorScale {
  uint64_t serial = 0;
  StageId step = StageId::kWeights;
  ColormapChoice maps;
  Eigen::Index rows = -1, cols = -1;
  ColorScale scale;
};

// The entropy of each row of one head's weights (the Variants tab), computed row by row as the
// line needs them and kept until that head's stages change: a 4096-key row costs 4096 logs.
struct RowEntropyCache {
  uint64_t serial = 0;
  int head = -1;
  Eigen::Index rows = -1, cols = -1;
  std::vector<double> bits;  // rows 0 .. size()-1 so far
};

struct UiSettings {
  bool light_theme = true;
  std::string colormap = "viridis";           // weights and other non-negative data
  std::string signed_colormap = "diverging";  // scores and other signed data
  float font_px = 20.0f;                      // base font size; Ctrl+= / Ctrl+- change it
  int decimals = 2;                           // numbers in heatmap cells
  bool animate = true;                        // animate stage changes and highlight edits
  // The first-start hint ("New here? …") has done its work: a lesson was opened or the tour seen.
  bool welcomed = false;
};

// Key codes of the GLFW backend, which Dear ImGui 1.86 uses as its key indices.
constexpr int kKeyEqual = 61, kKeyMinus = 45, kKeyKpAdd = 334, kKeyKpSubtract = 333;
constexpr int kKeyF11 = 300, kKeyO = 79, kKeyS = 83, kKeyP = 80, kKeyR = 82;

// A window the View or Help menu opens over the stepper (window_registry.h): its flags and its
// state, defined with its panel and made the first time anything asks for it (get()).
template <typename State>
struct Window : WindowFlags {
  std::shared_ptr<State> state;
  State& get() {
    if (!state) state = std::make_shared<State>();
    return *state;
  }
};

// The state of a window that has none of its own (a help page).
struct NoState {};

// The FlashAttention window (panel_flash.cpp): its query, block size and how many blocks have
// been read; `follow` is the selected query it last followed, `viewport` the main window's size
// when it was last placed.
struct FlashWindow : WindowFlags {
  int query = 0, block = 2, done = 0, follow = -1;
  ImVec2 viewport{0, 0};
};

// The size of an exported picture or slide, in pixels; 0 × 0: the heatmap's natural size.
struct ExportSize {
  int w = 0, h = 0;
};
// The export dialog's size choices: the heatmap's natural size (pictures only), a 16:9 slide
// 1920 × 1080, a 4:3 slide 1600 × 1200, or the typed W × H.
enum class ExportSizeChoice { kNatural, kWide, kFourThree, kCustom };
// The size a choice gives (custom: w × h); 0 × 0 for the natural size.
ExportSize export_size_of(ExportSizeChoice choice, int w, int h);
constexpr int kMinExportSide = 200, kMaxExportSide = 8192;

// The path dialogs (panel_dialogs.cpp, one row each: its title, its file list, what OK does).
enum class PathDialog {
  kNone,
  kOpen,          // a scenario
  kSave,          // the scenario, as
  kOpenLesson,    // a lesson file or a built-in lesson's name
  kRecordStep,    // the current view as a step of a lesson file
  kClassResults,  // class mode's answers as CSV
  kOpenModel,     // a language model's folder
  kExportPng,     // this heatmap
  kExportSvg,
  kExportPdf,
  kExportAllPng,  // every stage into a folder
  kExportAllSvg,
  kExportAllPdf,  // every stage, one slide per page
  kWorksheet,     // a worksheet to print (PDF)
  kLessonHtml,    // the open lesson as one web page
  kCount
};

// The fonts, built for one size (ui_style.cpp).
struct UiFonts {
  ImFont* regular = nullptr;
  ImFont* bold = nullptr;
  ImFont* mono = nullptr;
  ImFont* title = nullptr;
  ImFont* narration = nullptr;  // monospace, a little smaller: long arithmetic lines
  ImFont* cells = nullptr;      // large digits for cell numbers, drawn scaled to the cells
  float built_px = 0;           // the size the fonts were last built at
};

// The Q/K/V editor and the Variants tab (panel_editor.cpp, panel_variants.cpp).
struct EditorView {
  bool custom_mask = false;  // clicking a cell toggles the custom mask
  bool drag = false;         // editor tables: drag values instead of typing
  int tensor_head = 0;
  unsigned random_seed = 42;
  std::string positions_text;  // the variants panel's field for many positions
  // Per-cell text editing (the buffer of the cell being typed into), and where each visible text
  // cell was drawn last frame (tests click into them).
  std::string editing_key, buffer;
  std::map<std::string, ImVec4> cell_rects;
};

// The rope stage's view (panel_rope.cpp): kRopeAngles, kRopeTurned or kRopeDistance; a request
// (gui --tab rope-…, tests) brings that tab forward once.
struct RopeViewState {
  int view = 0, request = -1;
};

// Where draw_app placed the panels (model/layout.h), and what the panels measured for it.
struct LayoutState {
  float pipeline_h = 0, heads_h = 0;  // the stage strip's and heads' heights, measured
  std::string applied;                // the layout last placed; another one re-places the panels
  bool reset = true;                  // place every panel afresh next frame
  // The model window showing as the main window's stage instead of the stepper (none: the
  // stepper), and the room it takes: the strip's, the scenario's and the heatmap's, beside the
  // narration or lesson column.
  std::optional<WindowId> model_stage;
  ImVec4 stage_rect{0, 0, 0, 0};  // x, y, w, h
  bool status_shown = true;       // the status bar this frame (a slide shows it only with news)
};

// Predict, then reveal: the form's choices and typed guess (panel_predict.cpp).
struct PredictForm {
  PredictKind kind = PredictKind::kValue;
  PredictScope scope = PredictScope::kCell;
  std::string buffer, error;
};

// Stage changes and edits that move (stage_motion.h).
struct MotionView {
  StageTransition transition;
  std::optional<StageId> shown_stage;  // the stage drawn last frame (a change starts a transition)
  std::string caption;                 // what the stage change on screen is doing, in words
  ChangeTracker changes;
  uint64_t loads_seen = 0;  // AppState::load_serial() when the tracker last saw a trace
};

// What tests and --screenshot read about the last frame.
struct UiProbes {
  std::vector<PlacedText>* text_log = nullptr;  // tests: record text drawn into draw lists
  ColorScale main_scale;                        // the main heatmap's colour scale
  StageId main_step = StageId::kInputs;
};

// Presentation with a lesson open is a slide (model/layout.h): the step's words, question and
// buttons in one column beside the figure, sized so that nothing scrolls. What the last frame
// laid out and drew, for the projector audit (tests/gui_lesson_steps.cpp).
struct SlideRecord {
  bool on = false;             // this frame is a slide
  bool fits = false;           // the layout found a column width that holds the step whole
  float needed = 0;            // the height the step needs at the column's width (measured)
  float room = 0;              // the column's height
  float body = 0;              // the height the step's body (under the bar, over the buttons) needs
  float drawn = 0;             // and as drawn
  float scroll_max = 0;        // the column's scroll range as drawn (0: nothing scrolls)
  float scroll_max_x = 0;      // and sideways
  bool choices_whole = false;  // every choice's last line inside the column
};

// The lesson window (panel_lesson.cpp): the course the Lessons menu lists, and what the window
// measured and drew last frame (the layout keeps the question in view; tests check it).
struct LessonView {
  bool select_tab = false;  // bring the Lesson tab forward once
  // The Lessons menu's built-in course, listed the first time the menu opens.
  std::vector<LessonInfo> course;
  std::string course_error;
  bool course_listed = false;
  bool opened_seq2seq = false;  // the seq2seq window is open because a step asked for it
  // A step's own cell decimals on screen (-1: none), and the user's setting they replace.
  int decimals_shown = -1, decimals_user = -1;
  ImVec4 rect{0, 0, 0, 0};          // where the lesson window was drawn (x, y, w, h)
  float question_h = 0;             // the question's height last frame (it stays in view)
  float text_h = 0;                 // the step text's height last frame
  std::vector<float> line_bottoms;  // where its lines ended last frame (content y)
  float question_room = 0;          // the height the step's text and question share (tests)
  bool titled = false;              // the lesson window's title names the lesson this frame
  // Where the question's area and its Check button were drawn last frame (x0, y0, x1, y1): tests
  // check the button is in view.
  ImVec4 question_rect{0, 0, 0, 0}, answer_box{0, 0, 0, 0};
  bool prompt_shown = false;   // the question's prompt was whole in view (tests)
  bool choices_shown = false;  // and its choices, whole (tests)
  float nav_bottom = 0;        // the bottom of Previous / Next (tests: not cut off)
  SlideRecord slide;
};

// The path dialog and the others (panel_dialogs.cpp).
struct DialogState {
  PathDialog path = PathDialog::kNone;       // the path dialog to open (kNone: none)
  PathDialog open_kind = PathDialog::kNone;  // the one open
  std::string buffer, error;                 // its field and last error
  // The export dialog's size (export-png|svg|pdf, export-all-*): a slide deck's pages default
  // to a 16:9 slide, pictures to their natural size.
  ExportSizeChoice export_size = ExportSizeChoice::kNatural;
  ExportSizeChoice deck_size = ExportSizeChoice::kWide;
  int export_w = 1920, export_h = 1080;  // the custom size
  // The worksheet dialog's choices.
  bool worksheet_letter = false;  // US Letter instead of A4
  bool worksheet_answers = true;  // also write FILE-answers.pdf
  bool worksheet_fresh = false;   // fresh numbers from worksheet_seed
  int worksheet_seed = 1;
  // With a lesson open: print the lesson's questions (else the current scenario's worksheet).
  bool worksheet_lesson = true;
  std::function<void()> after_discard;  // what to do once the user agrees to lose edits
  bool ask_discard = false;
  bool ask_recovery = false;
};

// A running export (on a worker thread): "" when it succeeded, else the error (returned or
// thrown); what it writes, and the full path of the last file or folder an export wrote ("" before
// any): the status bar says it, and tests read it.
struct ExportRun {
  BackgroundJob<std::string> job;
  std::string what, where, written;
};

// The narration (panel_narration.cpp): the text for the current request, and wrapped to the panel
// (explain() is not free for a 1024-key row); in presentation mode the font scale that shows it
// whole, per text and room.
struct NarrationView {
  std::string key, text, error, wrapped_key, wrapped_text;
  std::string fit_key;
  float fit_scale = 1;
  float px = 0;          // the working's font size last frame (tests)
  bool scrolls = false;  // and whether it had to scroll
};

// Help → Getting started, on page `page` (panel_help.cpp).
struct TourWindow : WindowFlags {
  int page = 0;
};

struct Ui {
  explicit Ui(AppState& s) : state(s) {}
  AppState& state;
  UiSettings settings;
  HeatmapRenderer* renderer = nullptr;  // null when headless: cells are drawn as rectangles
  UiFonts fonts;

  std::map<std::string, HeatmapViewport> views;  // by heatmap id ("main", "q", "head-2", ...)
  std::string select_tab;  // "inputs" or "variants": bring that tab of the left panel forward once
  EditorView editor;
  RopeViewState rope;

  // color_scale_cached's scales, by heatmap key: scanning a 4096-token stage is 16 million cells.
  std::map<std::string, CachedColorScale> color_scales;
  RowEntropyCache row_entropies;  // the Variants tab's line of entropies

  // Window requests handled by app_window.cpp (the only file that knows GLFW).
  bool presentation = false;
  bool panels_shown = false;    // presentation mode with the side panels brought back (Tab)
  bool debug_menu = false;      // the Debug menu (ImGui demo, metrics): gui --debug or ATTN_DEBUG=1
  bool quit_requested = false;  // the user confirmed quitting
  bool close_requested = false;  // the window's close button: ask first when dirty
  LayoutState layout;
  double now = 0;         // seconds, one clock for the whole frame
  int frames_wanted = 0;  // frames still to draw before the window may sleep

  // Teaching: predict, then reveal (predict.h); stage changes and edits that move.
  Prediction predict;
  PredictForm predict_form;
  MotionView motion;
  UiProbes probes;

  // The windows over the stepper, each a row of the registry (window_registry.h).
  // The seq2seq window (View menu, or gui --tab seq2seq; panel_seq2seq.cpp).
  Window<struct Seq2seqPanel> seq2seq;
  // The language-model window (View menu, File → Open model folder…, gui --model; panel_lm.h):
  // its model's work is polled whether or not it is open.
  Window<struct LmPanel> lm;
  // The window that trains a transformer live (View menu, gui --tab lm-train; panel_lm_train.h).
  Window<struct LmTrainPanel> lm_train;
  // The variant views window (View menu, gui --tab variant-views): Linformer's charts, the
  // convolution before and after, the mixed heads (panel_variant_views.cpp).
  Window<struct VariantViewsState> variant_views;
  // The FlashAttention window (View menu, the narration's button, gui --tab flash).
  FlashWindow flash;
  // The score-function window (View menu, gui --tab scores; panel_scores.cpp): additive vs dot
  // product, measured on a worker thread.
  Window<struct ScoreComparePanel> scores;
  // The "Why √d_k" experiment window (View menu, gui --tab sqrt-dk; panel_sqrt_dk.cpp).
  Window<struct SqrtDkPanel> sqrt_dk;
  TourWindow tour;            // Help → Getting started (panel_help.cpp)
  Window<NoState> shortcuts;  // Help → Keyboard shortcuts (panel_help.cpp)
  Window<NoState> ghost;      // Help → Ghost Attention (panel_help_ghost.cpp)
  Window<NoState> about;      // Help → About Attention Lab (panel_help.cpp)
  // Class mode (View → Class mode, gui --class-mode; panel_class.h): `open` is its join screen,
  // shown over the stage; the server runs while state->running(), open or not.
  Window<struct ClassModePanel> class_mode;
  // The Debug menu's windows (gui --debug): Dear ImGui's demo and metrics.
  Window<NoState> imgui_demo, imgui_metrics;
  // Whether a window's background work wants frames: every frame until it lands, or a few a
  // second for new training figures (app_window.cpp), so the UI does not take the training
  // threads' cores. Any window's flags (window_registry.cpp).
  bool busy() const;
  bool training() const;

  // The open lesson (Lessons menu, File → Open lesson…, gui --lesson), drawn in the narration's
  // place by panel_lesson.cpp; null when none is open.
  std::shared_ptr<LessonPlayer> lesson;
  // What the open lesson's question hides this frame, until it is answered or its answer shown
  // (set by draw_app): cells and rows of its stage, labels that write its numbers, the working,
  // the head counts. Every panel that could tell the answer asks it.
  QuestionSecret secret;
  LessonView lesson_view;

  DialogState dialogs;
  ExportRun exports;
  NarrationView narration;

  void request_discard_check(std::function<void()> action);
  // Work is under way off the UI thread: a window's (busy()), the trace's recompute or an export.
  bool working() const;
  // Something moves or runs in the background: keep drawing frames instead of sleeping.
  bool wants_frames() const;
  // The font size the UI is drawn at: the user's, or presentation mode's larger one.
  float font_px(float window_w, float window_h) const;

  // Edits made while a panel iterates over the scenario run after the frame's panels are drawn,
  // so no panel ever reads a matrix or token list that an edit has just replaced.
  std::vector<std::function<void()>> deferred;
  void defer(std::function<void()> f) { deferred.push_back(std::move(f)); }
  void run_deferred();
};

// What the drawing widgets use of the app (widget_context.h), for this frame.
WidgetContext widgets(Ui& ui);

// The user's two colour maps, and the scale of a stage's values with them: the same rule as every
// export (render/color_scale.h), so a slide matches the screen.
ColormapChoice colormaps(const UiSettings& s);
ColorScale color_scale_for(const UiSettings& s, StageId step, const Matrix& m);
// color_scale_for once per trace for the heatmap `key` names (its stage and head): the range of
// a 4096-token stage is 16 million cells, too many to scan every frame. `serial`: when the matrix
// changes (0 = whenever the trace does).
const ColorScale& color_scale_cached(Ui& ui, const std::string& key, StageId step, const Matrix& m,
                                     uint64_t serial = 0);

// The whole app, one frame (menu bar, every panel, dialogs, keyboard shortcuts).
void draw_app(Ui& ui);

// Panels (app/gui/panel_*.cpp).
void draw_menu_bar(Ui& ui);
void draw_pipeline_panel(Ui& ui);
void draw_heatmap_panel(Ui& ui);
// The rope stage's views (panel_rope.cpp): its tab bar, returning the view shown, and a view
// other than the angles (which the heatmap panel draws) for query head h and K/V head g.
enum RopeView { kRopeAngles = 0, kRopeTurned = 1, kRopeDistance = 2, kRopeViewCount = 3 };
int draw_rope_tabs(Ui& ui);
void draw_rope_view(Ui& ui, int view, int h, int g, bool room);
void draw_narration_panel(Ui& ui);
void draw_editor_panel(Ui& ui);
void draw_variants_panel(Ui& ui);
void draw_heads_panel(Ui& ui);
void draw_status_bar(Ui& ui);
void draw_dialogs(Ui& ui);
void draw_seq2seq_panel(Ui& ui);
void poll_seq2seq_panel(Ui& ui);  // its training and evaluation, every frame, open or not
// The Variants tab's section for Linformer, the key–query convolution and head mixing
// (panel_variants_beyond.cpp), and the window that shows what they do (panel_variant_views.cpp).
void draw_beyond_masks_controls(Ui& ui);
void draw_variant_views_panel(Ui& ui);
void draw_flash_panel(Ui& ui);       // FlashAttention's online softmax, block by block
void draw_scores_panel(Ui& ui);      // additive vs dot-product scores, timed on this machine
void draw_sqrt_dk_panel(Ui& ui);     // why divide by √d_k: the experiment
void draw_ghost_help(Ui& ui);        // Help → Ghost Attention: which tokens carry the instruction
void draw_shortcuts_window(Ui& ui);  // Help → Keyboard shortcuts, every one the app answers
// Help → Getting started: a few pages on the stage strip, a cell's arithmetic, editing Q/K/V,
// the Lessons menu and presentation mode, with Back and Next (panel_help.cpp).
void draw_tour_window(Ui& ui);
int tour_page_count();
void open_tour(Ui& ui);          // from the first page; the first-start hint has done its work
void draw_about_window(Ui& ui);  // Help → About: version, what it is, libraries and licences
// The first start's pointer to the tour and the Lessons menu, until a lesson is opened or the
// tour seen (UiSettings::welcomed); drawn at the top of the narration when no cell is chosen.
bool first_start_hint_shown(const Ui& ui);
void draw_first_start_hint(Ui& ui);
// The contents of panels that also live as tabs of one column in a narrow window.
void draw_narration_contents(Ui& ui);
void draw_heads_contents(Ui& ui);
// Predict, then reveal: the question, the guess and the verdict (panel_predict.cpp), and the
// toolbar that starts one above the heatmap.
void draw_predict_contents(Ui& ui);
void draw_predict_toolbar(Ui& ui);
// Asks about cell (row, col) of the current stage; −1 = the selection, or a cell worth asking.
void start_prediction(Ui& ui, int row = -1, int col = -1);
// Reveals the answer and points the selection (so the narration) at the question's cell.
void reveal_prediction(Ui& ui);
// Lessons (panel_lesson.cpp): the player in the narration's place, with the narration as its
// second tab; the step's highlighted cells on the main heatmap (called by the heatmap panel).
void draw_lesson_window(Ui& ui);
// The height the lesson's column needs in a slide to show the step whole at `width` (its words,
// formula, question, choices, feedback and buttons), measured with the fonts as drawn.
float lesson_slide_height(Ui& ui, float width);
// Whether the status bar has something a slide must show: an error, work under way, class mode.
bool status_has_news(const Ui& ui);
void draw_lesson_contents(Ui& ui);  // the Lesson tab (also in a narrow window's tabbed column)
std::string lesson_tab_label(const Ui& ui);  // "Lesson · step 2 of 7", with a fixed id
void draw_lesson_highlights(Ui& ui, StageId stage);
// Opens a lesson file or built-in lesson name and shows its first step; false with `error`.
bool open_lesson(Ui& ui, const std::string& name_or_path, std::string& error);
void close_lesson(Ui& ui);
// Puts the lesson's current step on the screen: scenario, stage, head, selection, seq2seq window.
bool apply_lesson_step(Ui& ui);
// The settings as the user chose them (what settings.ini keeps): a step's decimals are not theirs.
UiSettings user_settings(const Ui& ui);
// Page Down / Page Up step through an open lesson; true when the step changed.
bool lesson_shortcuts(Ui& ui);
// Appends the current view as a step of the lesson file `path` (atomically); "" or the error.
std::string record_lesson_step(Ui& ui, const std::string& path);
// The file "Record current view as a step" suggests: the open lesson when it is the teacher's.
std::string suggested_lesson_path(const Ui& ui);
// Picks up a finished export and reports it in the status bar.
void poll_export(Ui& ui);
void handle_shortcuts(Ui& ui);

// The path an export dialog suggests: FOLDER/EXAMPLE-STAGE[-hH].EXT in the scenario's folder (or
// the working folder), or FOLDER/EXAMPLE-stages for every stage when `ext` is "".
std::string suggested_export_path(const AppState& st, const std::string& ext);
// The worksheet's: named after the open lesson when its questions are printed, else the scenario.
std::string suggested_worksheet_path(const Ui& ui);
// The open lesson's web page: LESSON.html in the scenario's folder (or the working folder).
std::string suggested_lesson_html_path(const Ui& ui);

// For a window a lesson step opened (`pending` set): places the next window left of the lesson
// window, once, so the step's text and its Next button stay in view; clears `pending` when done.
void place_beside_lesson(const Ui& ui, bool& pending);
// For the model window `which`: when it is the stage, places it on the stage's room and returns
// the window flags that keep it there; else returns 0 and places nothing.
ImGuiWindowFlags place_as_stage(const Ui& ui, WindowId which);

// Puts the next item on the current line when `width` more pixels fit in the window, else on the
// next line: rows of controls that flow like words instead of running off a narrow panel.
void same_line_if_fits(float width);
// Whether `width` more pixels fit on the current line after the last item.
bool fits_on_line(float width);
float radio_width(const char* label);   // a radio button or checkbox with its label
float button_width(const char* label);  // a button sized to its label
// Sliders whose value is written beside them ("T = 1.50"), never under the grab; `label` is the
// text before the value. The slider is `width` wide.
bool slider_float_beside(const char* id, const char* label, float* v, float lo, float hi,
                         const char* format, float width, ImGuiSliderFlags flags = 0);
bool slider_int_beside(const char* id, const char* label, int* v, int lo, int hi, float width);

// A "(?)" that shows `text` when hovered (as imgui_demo.cpp's HelpMarker).
void help_marker(const char* text);
// Text wrapped at spaces only, to the window's width. ImGui's TextWrapped also breaks after a
// '.', which splits a number such as 0.04 over two lines. `line_bottoms` collects where each
// line ends in the window's content (a box can then end between two lines, never across one).
void text_wrapped_at_spaces(const std::string& text, std::vector<float>* line_bottoms = nullptr);
// A formula that wraps only between its parts: its spaces become no-break spaces (U+00A0, which
// ImGui's wrapping keeps together) except before a binary operator outside brackets (=, ×, +, −,
// ÷, ·, ≈: the next line starts with the operator), after a comma or semicolon outside brackets
// and in a run of spaces (the gap between two formulas). So "head size" never breaks into "head
// s" and "ize", nor "j ≤ i" into "j ≤" and "i". With `inside_brackets`, before an operator
// inside brackets too ("tanh(W s + U h)" may end a line at "s").
std::string formula_for_wrapping(const std::string& formula, bool inside_brackets = false);
// formula_for_wrapping, inside brackets too when a part would be wider than `width` in the
// current font (which ImGui would break between any two characters).
std::string formula_fitting(const std::string& formula, float width);
// The lines text_wrapped_at_spaces draws for `text` at `width` in the current font.
std::vector<std::string> wrapped_lines(const std::string& text, float width);
// The height text_wrapped_at_spaces takes for `text` at `width`, in `font` (null: the current).
float wrapped_height(const std::string& text, float width, ImFont* font = nullptr);
// The bottom of the item just drawn, in its window's content (scrolling does not move it).
float item_content_bottom();
// text_wrapped_at_spaces in the disabled text colour (notes, hints).
void text_disabled_wrapped(const std::string& text);
// `text` cut to `width` pixels in the current font with "…" (whole UTF-8 characters), or whole.
std::string elide_to_width(const std::string& text, float width);

// Exports every stage (every head) of the trace as files of `format` into `folder`, every file or
// none; returns the files written (0 with `error` on failure). `size` w × h > 0: every picture
// exactly that size (a slide's), the heatmap filling it; 0 × 0: each at its natural size.
int export_all_stages(const AttentionTrace& trace, const UiSettings& s, const std::string& folder,
                      ImageFormat format, std::string& error, ExportSize size = {});

// Fonts and themes (app/ui_style.cpp).
void load_fonts(Ui& ui, float px);
void apply_theme(bool light, float scale);

}  // namespace attn
