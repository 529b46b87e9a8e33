// Class mode's window and state (panel_class.cpp): the server students' browsers talk to, the
// join screen (the address, its QR code and the session code, large enough for the back of the
// room), and what the app hands the room each frame — the step on screen, its picture with the
// question's answer hidden, and the reveal. The room and server themselves are app/gui/model's.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "gui/model/class_qr.h"
#include "gui/model/class_room.h"
#include "gui/model/class_server.h"
#include "gui/ui.h"
#include "train/background_job.h"

namespace attn {

// Where class mode listens unless the teacher says otherwise (cli.md, "Class mode").
inline constexpr const char* kClassDefaultBind = "0.0.0.0";
inline constexpr int kClassDefaultPort = 8765;
// The picture students see, in SVG units: a phone scales it to its width.
inline constexpr int kClassPictureW = 960, kClassPictureH = 600;

struct ClassModePanel {
  // The room outlives the server that serves it: declared first, destroyed last.
  std::unique_ptr<ClassRoom> room;
  std::unique_ptr<ClassServer> server;
  std::string bind = kClassDefaultBind;
  int port = kClassDefaultPort;
  std::string error;  // why class mode could not start (shown in its window)
  // What the join screen shows: the address students type (this computer's, when listening on
  // every interface), the page's URL with the code, and the URL's QR code.
  std::string host, url;
  std::vector<std::string> other_hosts;  // further addresses of this computer, smaller
  std::optional<QrMatrix> qr;
  // What the room was last handed: the step (lesson path, step, trace serial, precision) and
  // whether its answer was shown.
  std::string published_key;
  bool published_revealed = false;
  // The picture of the published step, drawn on a worker thread (a model step runs its model).
  BackgroundJob<std::string> picture_job;
  std::string picture_error;
  // Where the teacher's results were last saved ("" before any).
  std::string saved_path;
  // Measured last frame (tests): the join screen's QR side and code height in pixels.
  float qr_px = 0, code_px = 0;
  bool distribution_drawn = false;
  bool local_only = false;
  ImVec4 placed_for{0, 0, 0, 0};  // the screen's size and font the window was placed for  // the
                                  // start form's choice: listen on 127.0.0.1 only
  ClassCounts counts;             // last frame's
  bool running() const { return server && server->running(); }
};

// Starts class mode: a room with `code` ("" = four random digits) served on bind:port. false
// with `error` (the port taken, the address not this computer's, the code not 4–12 digits);
// the window then says why and offers another port.
bool start_class_mode(Ui& ui, const std::string& bind, int port, const std::string& code,
                      std::string& error);
// Stops the server (nothing listens afterwards); the answers so far stay until class mode starts
// again, so they can still be saved.
void stop_class_mode(Ui& ui);
bool class_mode_on(const Ui& ui);
// Each frame: hands the room the step on screen and its picture, and the reveal when the
// lesson's answer is shown.
void poll_class_mode(Ui& ui);
// The join screen (View → Class mode): address, QR code, session code, counts.
void draw_class_window(Ui& ui);
// Beside a lesson question in class mode: how many joined and answered, and after the reveal the
// distribution of their answers.
void draw_class_question(Ui& ui);
// The status bar's part: the code and how many joined (a click shows the join screen).
void draw_class_status(Ui& ui);
// Writes the lesson's results as CSV to `path` (atomically); "" or the error.
std::string save_class_results(Ui& ui, const std::string& path);

}  // namespace attn
