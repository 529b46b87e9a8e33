// The only file that touches GLFW and the OpenGL window: creates the window and the ImGui
// backends, runs the frame loop, handles full screen, font rebuilds, closing with unsaved edits,
// the recovery file, and --screenshot / --frame-stats.
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>
#include <stb_image.h>
#include <stb_image_write.h>

#include <algorithm>
#include <array>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <vector>

#include "attention/format.h"
#include "gui/files/imgui_ini.h"
#include "gui/gui.h"
#include "gui/gui_setup.h"
#include "gui/heatmap_texture.h"
#include "gui/ui.h"
#include "io/atomic_file.h"
#include "io/embedded_assets.h"

namespace attn {
namespace {

std::string glfw_error_text;
void on_glfw_error(int, const char* text) { glfw_error_text = text ? text : ""; }

// The window's own icon (taskbars, Alt+Tab) from the PNGs compiled into the program, so it shows
// even where no desktop entry is installed.
void set_window_icon(GLFWwindow* window) {
  std::vector<GLFWimage> images;
  for (const char* size : {"16x16", "32x32", "48x48", "64x64"}) {
    const unsigned char* png = nullptr;
    size_t bytes = 0;
    GLFWimage image{};
    int channels = 0;
    if (!embedded_icon_png(size, png, bytes)) continue;
    image.pixels = stbi_load_from_memory(png, static_cast<int>(bytes), &image.width, &image.height,
                                         &channels, 4);
    if (image.pixels) images.push_back(image);
  }
  if (!images.empty()) glfwSetWindowIcon(window, static_cast<int>(images.size()), images.data());
  for (GLFWimage& image : images) stbi_image_free(image.pixels);
}

void png_to_string(void* ctx, void* data, int size) {
  static_cast<std::string*>(ctx)->append(static_cast<const char*>(data), size);
}

// The font atlas as a one-channel texture that reads as white with the glyphs' coverage as
// alpha: what the backend's RGBA texture shows, in a quarter of the memory (17 MB → 4 MB at
// 2048 × 2048; a software renderer keeps textures in the process). Replaces `old`, and drops the
// atlas's CPU copy once it is uploaded.
GLuint upload_font_atlas(GLuint old) {
  ImGuiIO& io = ImGui::GetIO();
  unsigned char* pixels = nullptr;
  int w = 0, h = 0;
  io.Fonts->GetTexDataAsAlpha8(&pixels, &w, &h);
  if (old) glDeleteTextures(1, &old);
  GLuint id = 0;
  glGenTextures(1, &id);
  GLint bound = 0;
  glGetIntegerv(GL_TEXTURE_BINDING_2D, &bound);
  glBindTexture(GL_TEXTURE_2D, id);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  const GLint swizzle[] = {GL_ONE, GL_ONE, GL_ONE, GL_RED};
  glTexParameteriv(GL_TEXTURE_2D, GL_TEXTURE_SWIZZLE_RGBA, swizzle);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_R8, w, h, 0, GL_RED, GL_UNSIGNED_BYTE, pixels);
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(bound));
  io.Fonts->SetTexID(reinterpret_cast<ImTextureID>(static_cast<intptr_t>(id)));
  io.Fonts->ClearTexData();
  return id;
}

// Reads the back buffer just rendered, flips it (GL's origin is bottom-left) and encodes it as
// PNG into `png`.
bool screenshot_png(int w, int h, std::string& png, std::string& error) {
  std::vector<unsigned char> px(static_cast<size_t>(w) * h * 3), flipped(px.size());
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, w, h, GL_RGB, GL_UNSIGNED_BYTE, px.data());
  for (int y = 0; y < h; ++y)
    std::copy_n(&px[static_cast<size_t>(h - 1 - y) * w * 3], static_cast<size_t>(w) * 3,
                &flipped[static_cast<size_t>(y) * w * 3]);
  png.clear();
  if (!stbi_write_png_to_func(png_to_string, &png, w, h, 3, flipped.data(), w * 3)) {
    error = "--screenshot: PNG encoding failed";
    return false;
  }
  return true;
}

// Beside the PNG: where the main heatmap's cells are and what they hold, so tests can check the
// pixels against the colour map of known values.
std::string sidecar_json(const Ui& ui, int fb_w, int fb_h, float scale_x, float scale_y) {
  nlohmann::json j;
  const AppState& st = ui.state;
  j["framebuffer"] = {fb_w, fb_h};
  j["stage"] = stage_name(st.current_stage().id);
  j["head"] = st.head();
  j["colormap"] = ui.probes.main_scale.map;
  j["vmin"] = ui.probes.main_scale.lo;
  j["vmax"] = ui.probes.main_scale.hi;
  j["theme"] = ui.settings.light_theme ? "light" : "dark";
  j["presentation"] = ui.presentation;
  j["font_px"] = ui.fonts.built_px;
  auto it = ui.views.find("main");
  if (it != ui.views.end() && it->second.drawn && ui.probes.main_step == st.current_stage().id) {
    const HeatmapViewport& v = it->second;
    j["rows"] = v.rows;
    j["cols"] = v.cols;
    j["cell_w"] = v.cell_w * scale_x;
    j["cell_h"] = v.cell_h * scale_y;
    j["origin"] = {v.origin.x * scale_x, v.origin.y * scale_y};
    j["clip"] = {v.clip.x * scale_x, v.clip.y * scale_y, v.clip.z * scale_x, v.clip.w * scale_y};
    // How the labels and numbers were laid out (tests check none were left out while room).
    j["numbers_shown"] = v.numbers_shown;
    j["number_px"] = v.number_px * scale_y;
    j["labels_dropped"] = v.labels_dropped;
    j["labels_abbreviated"] = v.labels_abbreviated;
    j["col_labels_vertical"] = v.col_labels_vertical;
  }
  return j.dump(2) + "\n";
}

void set_fullscreen(GLFWwindow* w, bool on, int& saved_x, int& saved_y, int& saved_w,
                    int& saved_h) {
  GLFWmonitor* mon = glfwGetPrimaryMonitor();
  if (on && mon) {
    glfwGetWindowPos(w, &saved_x, &saved_y);
    glfwGetWindowSize(w, &saved_w, &saved_h);
    const GLFWvidmode* mode = glfwGetVideoMode(mon);
    glfwSetWindowMonitor(w, mon, 0, 0, mode->width, mode->height, mode->refreshRate);
  } else if (!on) {
    glfwSetWindowMonitor(w, nullptr, saved_x, saved_y, saved_w, saved_h, 0);
  }
}

// Dear ImGui 1.86 reads the keys' state once a frame, so a key pressed and released between two
// frames (a quick tap, a presentation clicker, a busy computer) would never be seen pressed. The
// release of a key pressed since the last frame began waits for the next frame.
struct KeyTaps {
  std::vector<int> pressed;                  // keys pressed since this frame's events began
  std::vector<std::array<int, 3>> released;  // key, scancode, mods: releases held back
};
KeyTaps g_taps;

void on_key(GLFWwindow* window, int key, int scancode, int action, int mods) {
  if (action == GLFW_RELEASE &&
      std::find(g_taps.pressed.begin(), g_taps.pressed.end(), key) != g_taps.pressed.end()) {
    g_taps.released.push_back({key, scancode, mods});
    return;
  }
  if (action == GLFW_PRESS) g_taps.pressed.push_back(key);
  ImGui_ImplGlfw_KeyCallback(window, key, scancode, action, mods);
}

// Before a frame's events: the releases held back last frame reach ImGui now that it has seen
// the keys down.
void release_held_keys(GLFWwindow* window) {
  std::vector<std::array<int, 3>> held;
  held.swap(g_taps.released);
  g_taps.pressed.clear();
  for (const auto& [key, scancode, mods] : held)
    ImGui_ImplGlfw_KeyCallback(window, key, scancode, GLFW_RELEASE, mods);
}

}  // namespace

namespace {

// --edit-stats: the edit waiting to be drawn, and how long each took.
struct EditProbe {
  int made = 0;
  bool waiting = false, shown_this_frame = false;
  uint64_t serial = 0;
  std::chrono::steady_clock::time_point at;
  std::vector<double> ms;
};

// Opens the main window (OpenGL 3.3) where `at` says, or reports why not; null on failure.
GLFWwindow* open_main_window(const GuiOptions& o, bool scripted, WindowPlacement& at) {
  const char* display = std::getenv("DISPLAY");
  const char* wayland = std::getenv("WAYLAND_DISPLAY");
  if ((!display || !*display) && (!wayland || !*wayland)) {
    std::cerr << "error: cannot open a window: no display (set DISPLAY or run under xvfb-run)\n";
    return nullptr;
  }
  glfwSetErrorCallback(on_glfw_error);
  if (!glfwInit()) {
    std::cerr << "error: cannot open a window: " << glfw_error_text << "\n";
    return nullptr;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GL_TRUE);
  if (scripted) glfwWindowHint(GLFW_RESIZABLE, GLFW_FALSE);
  // WM_CLASS matches the desktop entry's StartupWMClass, so docks show the app's icon and name.
  glfwWindowHintString(GLFW_X11_CLASS_NAME, "attention-lab");
  glfwWindowHintString(GLFW_X11_INSTANCE_NAME, "attention-lab");
  // Without --size the window fills the monitor's work area: a default larger than a 1280 × 720
  // projector would put the narration and the status bar off screen.
  int area_x = 0, area_y = 0, area_w = 0, area_h = 0;
  if (GLFWmonitor* mon = glfwGetPrimaryMonitor())
    glfwGetMonitorWorkarea(mon, &area_x, &area_y, &area_w, &area_h);
  at = first_window_placement(o, area_x, area_y, area_w, area_h);
  if (at.place) glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);  // shown once it is in place
  GLFWwindow* window = glfwCreateWindow(at.w, at.h, "Attention Lab", nullptr, nullptr);
  if (!window) {
    std::cerr << "error: cannot open a window: " << glfw_error_text
              << " (OpenGL 3.3 is required)\n";
    glfwTerminate();
    return nullptr;
  }
  if (at.place) {
    // The window manager's title bar and borders come out of the work area too.
    int left = 0, top = 0, right = 0, bottom = 0;
    glfwGetWindowFrameSize(window, &left, &top, &right, &bottom);
    if (left + right + top + bottom > 0 && at.w - left - right >= 320 && at.h - top - bottom >= 240)
      glfwSetWindowSize(window, at.w - left - right, at.h - top - bottom);
    glfwSetWindowPos(window, at.x + left, at.y + top);
    glfwShowWindow(window);
  }
  set_window_icon(window);
  glfwMakeContextCurrent(window);
  glfwSwapInterval(scripted ? 0 : 1);

  return window;
}

// Waits for the next frame: at once when scripted, about 60 a second while something moves,
// else asleep until an event or the next thing due (the recovery file, a cursor's blink, new
// training figures); a few frames follow every wake-up because ImGui settles hover and clicks
// over two or three frames.
void wait_for_frame(Ui& ui, bool poll_now, std::chrono::steady_clock::time_point t0,
                    std::chrono::steady_clock::time_point frame_start) {
  const ImGuiIO& io = ImGui::GetIO();
  const AppState& state = ui.state;
  if (poll_now) {
    glfwPollEvents();
  } else if (ui.wants_frames()) {
    // Moving: about 60 frames a second, whatever the display's vsync does (Xvfb has none).
    const double since = std::chrono::duration<double>(t0 - frame_start).count();
    if (since < 1.0 / 60)
      glfwWaitEventsTimeout(1.0 / 60 - since);
    else
      glfwPollEvents();
  } else {
    double timeout = 30.0;
    if (io.WantTextInput) timeout = 0.5;                   // the cursor blinks
    if (state.dirty()) timeout = std::min(timeout, 1.0);   // the recovery file is due
    if (ui.training()) timeout = std::min(timeout, 0.25);  // new training figures
    glfwWaitEventsTimeout(timeout);
    ui.frames_wanted = std::max(ui.frames_wanted, 3);
  }
}

// A scripted run's last frame waits until the windows' work has landed (a view computed off the
// UI thread, a recompute, an export) and ImGui has had the frames it takes to settle after it
// (tables fit their columns on the frame after their rows arrive); at most kSeconds, so a window
// that never goes idle still gets its screenshot.
struct ScreenshotWait {
  static constexpr double kSeconds = 60;
  std::optional<std::chrono::steady_clock::time_point> since;  // the last frame's wait began

  // Whether the screenshot is taken this frame, the scripted frames being done.
  bool due(const Ui& ui, std::chrono::steady_clock::time_point now) {
    if (!ui.working() && ui.frames_wanted == 0) return true;
    if (!since) since = now;
    if (std::chrono::duration<double>(now - *since).count() > kSeconds) {
      std::cerr << "warning: --screenshot: the windows were still working after " << kSeconds
                << " s\n";
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return false;
  }
};

// An edit once the trace is up (and the last edit's result has been drawn), as a user's
// keystroke would: its recompute runs as the app runs it, on a worker for a long sequence.
void drive_edit_probe(EditProbe& probe, AppState& state, int edit_stats, int frame) {
  // An edit once the trace is up (and the last edit's result has been drawn), as a user's
  // keystroke would: its recompute runs as the app runs it, on a worker for a long sequence.
  probe.shown_this_frame = false;
  if (!probe.waiting && probe.made < edit_stats && frame >= 2 && !state.computing()) {
    const Scenario& sc = state.scenario();
    if (!sc.use_projection && !sc.qkv.q.empty() && sc.qkv.q[0].size() > 0) {
      probe.serial = state.trace_serial();
      probe.at = std::chrono::steady_clock::now();
      const float x = sc.qkv.q[0](0, 0) + (probe.made % 2 ? -0.25f : 0.25f);
      state.set_value(Tensor::kQ, 0, 0, 0, x);
      probe.waiting = true;
      ++probe.made;
    }
  }
  if (probe.waiting && state.trace_serial() != probe.serial) probe.shown_this_frame = true;
}

// --frame-stats and --edit-stats: what the run measured.
void print_stats(const std::vector<double>& frame_ms, const EditProbe& probe,
                 const WindowPlacement& at, bool shader, const AppState& state) {
  if (frame_ms.size() > 1) {
    // The first frame builds fonts and uploads textures; it is reported apart.
    double sum = 0, mx = 0;
    size_t at_frame = 1;
    for (size_t i = 1; i < frame_ms.size(); ++i) {
      sum += frame_ms[i];
      if (frame_ms[i] > mx) mx = frame_ms[i], at_frame = i;
    }
    std::vector<double> sorted(frame_ms.begin() + 1, frame_ms.end());
    std::sort(sorted.begin(), sorted.end());
    std::printf(
        "frames %zu  first %.2f ms  mean %.2f ms  median %.2f ms  max %.2f ms (frame %zu)  "
        "(%dx%d, %s heatmap %dx%d)\n",
        frame_ms.size(), frame_ms[0], sum / (frame_ms.size() - 1), sorted[sorted.size() / 2], mx,
        at_frame, at.w, at.h, shader ? "shader" : "rectangle", state.trace().n_q,
        state.trace().n_k);
  }
  if (!probe.ms.empty()) {
    std::vector<double> sorted = probe.ms;
    std::sort(sorted.begin(), sorted.end());
    double sum = 0;
    for (double x : sorted) sum += x;
    std::printf(
        "edits %zu  shown after: mean %.1f ms  median %.1f ms  min %.1f ms  max %.1f ms  (edit "
        "to the end of the first frame that draws the recomputed stages; %d heads, %dx%d)\n",
        sorted.size(), sum / sorted.size(), sorted[sorted.size() / 2], sorted.front(),
        sorted.back(), state.trace().num_heads, state.trace().n_q, state.trace().n_k);
  }
}

}  // namespace

namespace {

// --screenshot: the PNG and its companion .json are written together or not at all; both paths
// are checked (and their temporary files created) before the window opens. False with the error
// printed.
bool prepare_screenshot(const std::string& p, AtomicOutputs& shots, int& png_index,
                        int& json_index) {
  if (p.empty()) return true;
  std::string error;
  if (p.size() < 5 || p.compare(p.size() - 4, 4, ".png") != 0) {
    std::cerr << "error: --screenshot: expected a .png file name, got '" << printable_text(p)
              << "'\n";
    return false;
  }
  if ((png_index = shots.add(p, error)) < 0 || (json_index = shots.add(p + ".json", error)) < 0) {
    std::cerr << "error: --screenshot: " << printable_text(error) << "\n";
    return false;
  }
  return true;
}

// Fonts are rebuilt at the window's size (not scaled) so text stays crisp on a projector;
// presentation mode's size grows with the screen. The theme follows the size and the choice.
struct BuiltStyle {
  float theme_px = 0;
  bool light = false;
  GLuint font_texture = 0;
};
void rebuild_fonts_and_theme(Ui& ui, GLFWwindow* window, BuiltStyle& built) {
  int win_w = 0, win_h = 0;
  glfwGetWindowSize(window, &win_w, &win_h);
  const float want_px = ui.font_px(static_cast<float>(win_w), static_cast<float>(win_h));
  if (ui.fonts.built_px != want_px) {
    ImGui_ImplOpenGL3_DestroyFontsTexture();  // the backend's, made with its device objects
    load_fonts(ui, want_px);
    built.font_texture = upload_font_atlas(built.font_texture);
  }
  if (built.theme_px != want_px || built.light != ui.settings.light_theme) {
    apply_theme(ui.settings.light_theme, want_px / 20.0f);
    built.theme_px = want_px;
    built.light = ui.settings.light_theme;
  }
}

// Dear ImGui on the window with its GLFW and OpenGL 3 backends, and the layout read from `ini`
// ("" for the default layout).
void init_imgui(GLFWwindow* window, const std::string& ini, Ui& ui) {
  std::string error;
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  // ImGui never opens the file itself: it is read here through the project's bounded reader and
  // saved below when ImGui asks (gui/files/imgui_ini.h).
  io.IniFilename = nullptr;
  if (!ini.empty() && !load_imgui_ini(ini, error)) {
    const std::string note = printable_text(error) + "; starting with the default layout";
    std::cerr << "warning: " << note << "\n";
    ui.state.set_message(note, true);
  }
  ui.layout.reset = ini.empty();
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  glfwSetKeyCallback(window, on_key);  // in front of the backend's: see KeyTaps
  ImGui_ImplOpenGL3_Init("#version 330 core");
  // Now, not on the first NewFrame: the loop below puts its own fonts texture in place of the
  // backend's whenever the font size changes, and a texture the backend created later would
  // replace it (the atlas held twice).
  ImGui_ImplOpenGL3_CreateDeviceObjects();
}

// The framebuffer as the screenshot's PNG and what was on screen as its .json, both or neither.
bool write_screenshot(const Ui& ui, int fb_w, int fb_h, AtomicOutputs& shots, int png_index,
                      int json_index) {
  const ImGuiIO& io = ImGui::GetIO();
  const float sx = io.DisplaySize.x > 0 ? fb_w / io.DisplaySize.x : 1;
  const float sy = io.DisplaySize.y > 0 ? fb_h / io.DisplaySize.y : 1;
  std::string png, error;
  if (!screenshot_png(fb_w, fb_h, png, error) || !shots.write(png_index, png, error) ||
      !shots.write(json_index, sidecar_json(ui, fb_w, fb_h, sx, sy), error) ||
      !shots.commit(error)) {
    std::cerr << "error: --screenshot: " << printable_text(error) << "\n";
    return false;
  }
  return true;
}

// --animate: a scripted zoom and pan of the main heatmap, to measure frame times while it moves.
void animate_main_heatmap(Ui& ui, int frame) {
  HeatmapViewport& v = ui.views["main"];
  v.zoom = 1.0f + 7.0f * (0.5f - 0.5f * std::cos(frame * 0.07f));
  v.pan = {-std::fabs(std::sin(frame * 0.03f)) * 400 * v.zoom,
           -std::fabs(std::sin(frame * 0.05f)) * 300 * v.zoom};
}

// The title says what is open and whether it has unsaved edits, as any editor does.
void update_window_title(GLFWwindow* window, const AppState& state, std::string& shown) {
  const std::string title =
      "Attention Lab — " + state.scenario().name + (state.dirty() ? " *" : "");
  if (title == shown) return;
  shown = title;
  glfwSetWindowTitle(window, title.c_str());
}

// The window's close button asks first when there are unsaved edits (then sets quit_requested).
void handle_close_request(GLFWwindow* window, Ui& ui) {
  if (glfwWindowShouldClose(window) && !ui.quit_requested) {
    glfwSetWindowShouldClose(window, GLFW_FALSE);
    ui.close_requested = true;
  }
  if (ui.close_requested) {
    ui.close_requested = false;
    ui.request_discard_check([&ui] { ui.quit_requested = true; });
  }
}

// At exit: the settings, the layout, and the recovery file gone unless "Recover?" is still asked
// (closing the window then keeps the file for the next start).
void save_at_exit(Ui& ui, const std::string& ini) {
  std::string e;
  write_file_atomically(settings_path(true), settings_text(user_settings(ui)), e);
  save_imgui_ini(ini, e);
  if (ui.state.recovery_removable_at_exit()) ui.state.discard_recovery();
}

}  // namespace

int run_gui(const GuiOptions& o) {
  // Everything about the input is checked before a window opens, so bad input is exit 2 anywhere.
  AppState state;
  Ui ui(state);
  ui.debug_menu = debug_menu_wanted(o.debug, std::getenv("ATTN_DEBUG"));
  const bool scripted = !o.screenshot.empty() || o.frame_stats;
  // Read the saved settings without creating anything: a run that fails early leaves no folder.
  if (!scripted) {
    if (const std::string path = settings_path(false); !path.empty())
      load_settings(ui.settings, path);
  }
  std::string error;
  int code = 2;
  if (!setup_from_options(ui, o, error, &code)) {
    std::cerr << "error: " << printable_text(error) << "\n";
    return code;
  }
  AtomicOutputs shots;
  int png_index = -1, json_index = -1;
  if (!prepare_screenshot(o.screenshot, shots, png_index, json_index)) return 2;

  const std::string cfg = scripted ? "" : config_dir();
  WindowPlacement at;
  GLFWwindow* window = open_main_window(o, scripted, at);
  if (!window) return 1;

  // Layout persists per user; scripted runs use the default layout so screenshots are stable.
  const std::string ini = cfg.empty() ? "" : cfg + "/imgui.ini";
  init_imgui(window, ini, ui);
  ImGuiIO& io = ImGui::GetIO();

  std::unique_ptr<HeatmapRenderer> renderer = make_gl_heatmap_renderer(error);
  if (!renderer) std::cerr << "warning: " << error << "; drawing heatmaps without the shader\n";
  ui.renderer = renderer.get();

  if (!cfg.empty()) {
    state.recovery_path = cfg + "/recovery.json";
    ui.dialogs.ask_recovery = state.check_recovery_at_start();
  }

  BuiltStyle built;
  built.light = !ui.settings.light_theme;
  bool fullscreen = false;
  int saved_x = at.x + 100, saved_y = at.y + 100, saved_w = at.w, saved_h = at.h;
  std::vector<double> frame_ms;
  auto last = std::chrono::steady_clock::now();
  double since_recovery = 0;
  std::string window_title;
  int exit_code = 0;
  auto frame_start = std::chrono::steady_clock::now();
  EditProbe probe;
  const int edit_stats = o.frame_stats ? o.edit_stats : 0;
  ScreenshotWait screenshot_wait;

  for (int frame = 0;; ++frame) {
    const auto t0 = std::chrono::steady_clock::now();
    // A key released in the same frame as it was pressed: its release now, and a frame soon
    // after to see it.
    if (!g_taps.released.empty()) ui.frames_wanted = std::max(ui.frames_wanted, 2);
    release_held_keys(window);
    wait_for_frame(ui, scripted || frame == 0, t0, frame_start);
    frame_start = t0;
    if (ui.frames_wanted > 0) --ui.frames_wanted;
    handle_close_request(window, ui);
    if (ui.quit_requested) break;

    // Presentation mode goes full screen (the layout follows the new size at once).
    if (!scripted && ui.presentation != fullscreen) {
      fullscreen = ui.presentation;
      set_fullscreen(window, fullscreen, saved_x, saved_y, saved_w, saved_h);
    }
    rebuild_fonts_and_theme(ui, window, built);

    const auto now = std::chrono::steady_clock::now();
    const double dt = std::chrono::duration<double>(now - last).count();
    last = now;
    state.poll();
    state.tick(dt);
    if (edit_stats > 0) drive_edit_probe(probe, state, edit_stats, frame);
    if (o.animate) animate_main_heatmap(ui, frame);

    update_window_title(window, state, window_title);
    if (renderer) renderer->new_frame();
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    // Scripted runs ignore wherever the X server left its pointer, so no stray tooltip shows.
    if (scripted) io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
    ImGui::NewFrame();
    draw_app(ui);
    ImGui::Render();
    if (!ini.empty() && io.WantSaveIniSettings) save_imgui_ini(ini, error);
    int fb_w = 0, fb_h = 0;
    glfwGetFramebufferSize(window, &fb_w, &fb_h);
    glViewport(0, 0, fb_w, fb_h);
    const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
    glClearColor(bg.x * 0.92f, bg.y * 0.92f, bg.z * 0.92f, 1);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());

    // --edit-stats runs on until its last edit is drawn (bounded, in case one never lands).
    const bool edits_left = probe.made < edit_stats || probe.waiting;
    const bool last_frame = scripted && frame + 1 >= o.frames && (!edits_left || frame > 100000) &&
                            (o.screenshot.empty() || screenshot_wait.due(ui, now));
    std::chrono::steady_clock::duration saving{};  // not part of the frame time
    if (last_frame && !o.screenshot.empty()) {
      const auto s0 = std::chrono::steady_clock::now();
      if (!write_screenshot(ui, fb_w, fb_h, shots, png_index, json_index)) exit_code = 1;
      saving = std::chrono::steady_clock::now() - s0;
    }
    glfwSwapBuffers(window);
    if (o.frame_stats) {
      glFinish();  // count the GPU's work too, not only the submission
      frame_ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0 - saving)
              .count());
    }
    if (probe.shown_this_frame) {
      glFinish();
      probe.ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - probe.at)
              .count());
      probe.waiting = false;
    }
    if (last_frame) break;

    since_recovery += dt;
    if (since_recovery > 1.0) {  // unsaved edits reach the recovery file within a second
      since_recovery = 0;
      state.write_recovery();
    }
  }

  print_stats(o.frame_stats ? frame_ms : std::vector<double>{}, probe, at, renderer != nullptr,
              state);
  if (!cfg.empty()) save_at_exit(ui, ini);
  renderer.reset();
  if (built.font_texture) glDeleteTextures(1, &built.font_texture);
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return exit_code;
}

}  // namespace attn
