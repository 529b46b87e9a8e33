// OpenGL side of the heatmaps: one R32F texture per heatmap (re-uploaded only when the trace
// changes), a 256-entry colour-map table per map, and the shader program of shaders/heatmap.*,
// bound through ImDrawList callbacks so the quad sits in ImGui's draw order and clipping.
#define GL_GLEXT_PROTOTYPES 1
#include "gui/heatmap_texture.h"

#include <GL/gl.h>
#include <GL/glext.h>

#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <vector>

#include "embedded_shaders.h"
#include "gui/heatmap_widget.h"
#include "gui/ui.h"
#include "render/colormap.h"

namespace attn {
namespace {

GLuint compile(GLenum type, const char* src, std::string& error) {
  GLuint s = glCreateShader(type);
  glShaderSource(s, 1, &src, nullptr);
  glCompileShader(s);
  GLint ok = 0;
  glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    char log[1024] = {0};
    glGetShaderInfoLog(s, sizeof log, nullptr, log);
    error = std::string("heatmap shader: ") + log;
    glDeleteShader(s);
    return 0;
  }
  return s;
}

struct DrawParams {
  class GlHeatmapRenderer* self;
  GLuint values, lut;
  float vmin, vmax;
  ImVec4 hatch_a, hatch_b;
};

class GlHeatmapRenderer : public HeatmapRenderer {
 public:
  bool init(std::string& error) {
    const char* vs = embedded_shader("heatmap.vert");
    const char* fs = embedded_shader("heatmap.frag");
    if (!vs || !fs) {
      error = "heatmap shaders are not embedded in this build";
      return false;
    }
    GLuint v = compile(GL_VERTEX_SHADER, vs, error);
    if (!v) return false;
    GLuint f = compile(GL_FRAGMENT_SHADER, fs, error);
    if (!f) return false;
    program_ = glCreateProgram();
    glAttachShader(program_, v);
    glAttachShader(program_, f);
    glLinkProgram(program_);
    glDeleteShader(v);
    glDeleteShader(f);
    GLint ok = 0;
    glGetProgramiv(program_, GL_LINK_STATUS, &ok);
    if (!ok) {
      error = "heatmap shader: link failed";
      return false;
    }
    loc_proj_ = glGetUniformLocation(program_, "ProjMtx");
    loc_values_ = glGetUniformLocation(program_, "Values");
    loc_lut_ = glGetUniformLocation(program_, "Lut");
    loc_vmin_ = glGetUniformLocation(program_, "VMin");
    loc_vmax_ = glGetUniformLocation(program_, "VMax");
    loc_hatch_a_ = glGetUniformLocation(program_, "HatchA");
    loc_hatch_b_ = glGetUniformLocation(program_, "HatchB");
    glGetIntegerv(GL_MAX_TEXTURE_SIZE, &max_texture_);
    return true;
  }

  ~GlHeatmapRenderer() override {
    for (auto& [k, t] : textures_) glDeleteTextures(1, &t.id);
    for (auto& [k, t] : luts_) glDeleteTextures(1, &t);
    if (program_) glDeleteProgram(program_);
  }

  void new_frame() override { params_.clear(); }

  bool draw(ImDrawList* dl, const std::string& key, uint64_t serial, const Matrix& m,
            const ReasonMatrix* hidden, const ColorScale& scale, bool light, ImVec2 p0,
            ImVec2 p1) override {
    if (m.rows() > max_texture_ || m.cols() > max_texture_ || m.size() == 0) return false;
    Texture& t = textures_[key];
    if (!t.id || t.serial != serial || t.rows != m.rows() || t.cols != m.cols() ||
        t.hidden != (hidden != nullptr))
      upload(t, serial, m, hidden);
    params_.push_back({this, t.id, lut(scale.map), static_cast<float>(scale.lo),
                       static_cast<float>(scale.hi),
                       ImGui::ColorConvertU32ToFloat4(hatch_color(light, 0)),
                       ImGui::ColorConvertU32ToFloat4(hatch_color(light, 1))});
    dl->AddCallback(&GlHeatmapRenderer::bind, &params_.back());
    dl->AddImage(reinterpret_cast<ImTextureID>(static_cast<intptr_t>(t.id)), p0, p1);
    dl->AddCallback(ImDrawCallback_ResetRenderState, nullptr);
    return true;
  }

 private:
  struct Texture {
    GLuint id = 0;
    uint64_t serial = 0;
    Eigen::Index rows = 0, cols = 0;
    bool hidden = false;
  };

  void upload(Texture& t, uint64_t serial, const Matrix& m, const ReasonMatrix* hidden) {
    if (!t.id) glGenTextures(1, &t.id);
    // Hidden cells become -inf so the shader hatches them whatever the stage's value is.
    const float* data = m.data();
    std::vector<float> copy;
    if (hidden) {
      copy.assign(m.data(), m.data() + m.size());
      for (Eigen::Index k = 0; k < m.size() && k < hidden->size(); ++k)
        if (hidden->data()[k]) copy[k] = -std::numeric_limits<float>::infinity();
      data = copy.data();
    }
    glBindTexture(GL_TEXTURE_2D, t.id);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, static_cast<GLsizei>(m.cols()),
                 static_cast<GLsizei>(m.rows()), 0, GL_RED, GL_FLOAT, data);
    t.serial = serial;
    t.rows = m.rows();
    t.cols = m.cols();
    t.hidden = hidden != nullptr;
  }

  GLuint lut(const std::string& name) {
    auto it = luts_.find(name);
    if (it != luts_.end()) return it->second;
    std::vector<unsigned char> rgba(256 * 4);
    for (int i = 0; i < 256; ++i) {
      Rgb c = colormap_color(name, i / 255.0);
      rgba[i * 4 + 0] = c.r;
      rgba[i * 4 + 1] = c.g;
      rgba[i * 4 + 2] = c.b;
      rgba[i * 4 + 3] = 255;
    }
    GLuint id = 0;
    glGenTextures(1, &id);
    glBindTexture(GL_TEXTURE_2D, id);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, 256, 1, 0, GL_RGBA, GL_UNSIGNED_BYTE, rgba.data());
    luts_[name] = id;
    return id;
  }

  // Runs inside ImGui_ImplOpenGL3_RenderDrawData: the vertex buffer of this draw list is bound,
  // so only the program, its uniforms and the attribute layout change.
  static void bind(const ImDrawList*, const ImDrawCmd* cmd) {
    const DrawParams& p = *static_cast<const DrawParams*>(cmd->UserCallbackData);
    GlHeatmapRenderer& r = *p.self;
    const ImDrawData* dd = ImGui::GetDrawData();
    const float L = dd->DisplayPos.x, R = dd->DisplayPos.x + dd->DisplaySize.x;
    const float T = dd->DisplayPos.y, B = dd->DisplayPos.y + dd->DisplaySize.y;
    const float ortho[4][4] = {{2.0f / (R - L), 0, 0, 0},
                               {0, 2.0f / (T - B), 0, 0},
                               {0, 0, -1, 0},
                               {(R + L) / (L - R), (T + B) / (B - T), 0, 1}};
    glUseProgram(r.program_);
    glUniformMatrix4fv(r.loc_proj_, 1, GL_FALSE, &ortho[0][0]);
    glUniform1f(r.loc_vmin_, p.vmin);
    glUniform1f(r.loc_vmax_, p.vmax);
    glUniform4f(r.loc_hatch_a_, p.hatch_a.x, p.hatch_a.y, p.hatch_a.z, p.hatch_a.w);
    glUniform4f(r.loc_hatch_b_, p.hatch_b.x, p.hatch_b.y, p.hatch_b.z, p.hatch_b.w);
    glActiveTexture(GL_TEXTURE1);
    glBindTexture(GL_TEXTURE_2D, p.lut);
    glUniform1i(r.loc_lut_, 1);
    glActiveTexture(GL_TEXTURE0);
    glUniform1i(r.loc_values_, 0);
    // The image command that follows binds the value texture itself (its TextureId) to unit 0.
    glEnableVertexAttribArray(0);
    glEnableVertexAttribArray(1);
    glEnableVertexAttribArray(2);
    glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, sizeof(ImDrawVert),
                          reinterpret_cast<void*>(IM_OFFSETOF(ImDrawVert, pos)));
    glVertexAttribPointer(1, 2, GL_FLOAT, GL_FALSE, sizeof(ImDrawVert),
                          reinterpret_cast<void*>(IM_OFFSETOF(ImDrawVert, uv)));
    glVertexAttribPointer(2, 4, GL_UNSIGNED_BYTE, GL_TRUE, sizeof(ImDrawVert),
                          reinterpret_cast<void*>(IM_OFFSETOF(ImDrawVert, col)));
  }

  GLuint program_ = 0;
  GLint loc_proj_ = -1, loc_values_ = -1, loc_lut_ = -1, loc_vmin_ = -1, loc_vmax_ = -1;
  GLint loc_hatch_a_ = -1, loc_hatch_b_ = -1;
  GLint max_texture_ = 4096;
  std::map<std::string, Texture> textures_;
  std::map<std::string, GLuint> luts_;
  std::deque<DrawParams> params_;  // stable addresses until the frame is rendered
};

}  // namespace

std::unique_ptr<HeatmapRenderer> make_gl_heatmap_renderer(std::string& error) {
  auto r = std::make_unique<GlHeatmapRenderer>();
  if (!r->init(error)) return nullptr;
  return r;
}

}  // namespace attn
