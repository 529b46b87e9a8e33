// Help → Ghost Attention: Llama 2's recipe (Touvron et al. 2023, GAtt) for keeping a system
// instruction in force over a long dialogue. It changes the fine-tuning data, not the attention
// computation, so this is a page of explanation with a diagram (drawn with the draw list) of which
// tokens carry the instruction when the data is sampled and when the model is trained on it.
#include <imgui.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gui/ui.h"

namespace attn {
namespace {

enum class Seg { kInstruction, kUser, kAssistant };

struct Piece {
  Seg kind;
  std::string text;
  bool trained = false;  // the loss is computed on these tokens
};

// One dialogue as a row of boxes (wrapping onto further rows); returns the row's height. The
// instruction's boxes are orange, users' grey, assistants' blue; tokens that carry no loss are
// drawn faint. Curves from the last assistant turn back to the instruction show where it reads it.
float draw_dialogue(const std::vector<Piece>& pieces, float width, bool arrows) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float fs = ImGui::GetFontSize();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float h = fs * 1.8f, gap = fs * 0.4f, line_gap = fs * 1.6f;
  float x = o.x, y = o.y + (arrows ? fs * 2.4f : 0);
  std::vector<ImVec2> instruction_centres, last_centres;
  for (size_t k = 0; k < pieces.size(); ++k) {
    const Piece& p = pieces[k];
    const float w = ImGui::CalcTextSize(p.text.c_str()).x + fs;
    if (x + w > o.x + width && x > o.x) {
      x = o.x;
      y += h + line_gap;
    }
    ImVec4 c = p.kind == Seg::kInstruction ? ImVec4(0.95f, 0.55f, 0.15f, 1)
               : p.kind == Seg::kUser      ? ImVec4(0.62f, 0.64f, 0.68f, 1)
                                           : ImVec4(0.25f, 0.50f, 0.85f, 1);
    // In the training diagram (the one with the arrow) the turns without loss are faint.
    if (arrows && !p.trained && p.kind == Seg::kAssistant) c.w = 0.35f;
    dl->AddRectFilled({x, y}, {x + w, y + h}, ImGui::GetColorU32(c), 4);
    if (p.trained)
      dl->AddRect({x - 2, y - 2}, {x + w + 2, y + h + 2}, ImGui::GetColorU32(ImGuiCol_Text), 5, 0,
                  2);
    dl->AddText({x + fs * 0.5f, y + (h - fs) * 0.5f}, IM_COL32(20, 20, 25, 255), p.text.c_str());
    if (p.kind == Seg::kInstruction) instruction_centres.push_back({x + w / 2, y});
    if (k + 1 == pieces.size()) last_centres.push_back({x + w / 2, y});
    x += w + gap;
  }
  if (arrows && !instruction_centres.empty() && !last_centres.empty()) {
    const ImVec2 a = last_centres.back(), b = instruction_centres.front();
    const float top = o.y + fs * 0.3f;
    dl->AddBezierCubic(a, {a.x, top}, {b.x, top}, b,
                       ImGui::GetColorU32(ImVec4(0.85f, 0.35f, 0.05f, 1)), 2.5f);
    dl->AddTriangleFilled({b.x - 6, b.y - 10}, {b.x + 6, b.y - 10}, {b.x, b.y},
                          ImGui::GetColorU32(ImVec4(0.85f, 0.35f, 0.05f, 1)));
  }
  const float total = y + h - o.y;
  ImGui::Dummy({width, total + fs * 0.4f});
  return total;
}

}  // namespace

void draw_ghost_help(Ui& ui) {
  if (!ui.ghost.open) return;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float top = ImGui::GetFrameHeight();
  const ImGuiCond cond = ui.layout.reset ? ImGuiCond_Always : ImGuiCond_Appearing;
  ImGui::SetNextWindowPos({vp->Pos.x + vp->Size.x * 0.1f, vp->Pos.y + top + vp->Size.y * 0.05f},
                          cond);
  ImGui::SetNextWindowSize({vp->Size.x * 0.8f, vp->Size.y * 0.86f - top}, cond);
  if (!ImGui::Begin("Ghost Attention (Llama 2)###ghost", &ui.ghost.open,
                    ImGuiWindowFlags_NoCollapse)) {
    ImGui::End();
    return;
  }
  const float w = ImGui::GetContentRegionAvail().x;
  text_wrapped_at_spaces(
      "A chat model given a system instruction (\"Act as Napoleon\", \"answer in French\") tends "
      "to forget it after a few turns. Ghost Attention (GAtt), from the Llama 2 paper, is a "
      "fine-tuning recipe against that: the attention computation is unchanged — what changes is "
      "the data the model is trained on.");
  ImGui::Spacing();
  ImGui::PushFont(ui.fonts.bold);
  ImGui::TextUnformatted("1. Sampling the training dialogues");
  ImGui::PopFont();
  text_wrapped_at_spaces(
      "The instruction is glued to every user message, so every answer the current model samples "
      "follows it.");
  const Piece ins{Seg::kInstruction, "Act as Napoleon", false};
  draw_dialogue({ins,
                 {Seg::kUser, "Where were you born?", false},
                 {Seg::kAssistant, "Corsica, 1769.", false},
                 ins,
                 {Seg::kUser, "Your favourite battle?", false},
                 {Seg::kAssistant, "Austerlitz.", false},
                 ins,
                 {Seg::kUser, "Any regrets?", false},
                 {Seg::kAssistant, "Russia, in winter.", false}},
                w, false);
  ImGui::PushFont(ui.fonts.bold);
  ImGui::TextUnformatted("2. Training on them");
  ImGui::PopFont();
  text_wrapped_at_spaces(
      "The instruction is kept only before the first turn and removed from the others. The loss "
      "is set to zero on every token of the earlier turns (faint) and kept on the last answer "
      "(framed). To produce that answer in character the model must attend from its last turn "
      "all the way back to the first tokens (the arrow): the instruction's tokens are the only "
      "ones that carry it.");
  draw_dialogue({ins,
                 {Seg::kUser, "Where were you born?", false},
                 {Seg::kAssistant, "Corsica, 1769.", false},
                 {Seg::kUser, "Your favourite battle?", false},
                 {Seg::kAssistant, "Austerlitz.", false},
                 {Seg::kUser, "Any regrets?", false},
                 {Seg::kAssistant, "Russia, in winter.", true}},
                w, true);
  ImGui::Spacing();
  ImGui::TextColored(ImVec4(0.95f, 0.55f, 0.15f, 1), "■ instruction");
  ImGui::SameLine();
  ImGui::TextColored(ImVec4(0.45f, 0.47f, 0.52f, 1), "■ user");
  ImGui::SameLine();
  ImGui::TextColored(ImVec4(0.25f, 0.50f, 0.85f, 1), "■ assistant (faint: no loss)");
  ImGui::Spacing();
  text_wrapped_at_spaces(
      "In the app's terms: nothing in Q, K, V, the mask or the softmax changes. After GAtt, a "
      "model's attention maps in later turns show heads that keep looking at the instruction's "
      "tokens (Llama 2's paper shows such maps): the lesson is learned by the weights, not built "
      "into the mechanism. Causal masking is what makes the instruction readable at all: it "
      "comes first, so every later token may attend to it.");
  ImGui::End();
}

}  // namespace attn
