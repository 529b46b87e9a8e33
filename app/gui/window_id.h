// The windows the View, Help and Debug menus open over the stepper, by id. Everything about each
// one — its name, title, menu entry, state, drawing, polling and the frames it asks for — is in
// one row of the registry (window_registry.h); no window is named by a string anywhere else.
#pragma once

namespace attn {

enum class WindowId {
  kSeq2seq,
  kLm,
  kLmTrain,
  kVariantViews,
  kFlash,
  kScores,
  kSqrtDk,
  kClassMode,
  kTour,
  kShortcuts,
  kGhost,
  kAbout,
  kImguiDemo,
  kImguiMetrics,
  kCount
};

// What the registry needs of every window's slot in Ui: whether it is open, and what its
// background work asks of the frame loop (set by the window's draw or poll each frame).
struct WindowFlags {
  bool open = false;
  bool busy = false;      // working in the background: draw every frame until it lands
  bool training = false;  // training: wake a few times a second for the new figures
};

}  // namespace attn
