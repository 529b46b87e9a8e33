// OpenGL side of the heatmaps: one R32F texture per heatmap, re-uploaded only when the trace or
// the level of detail changes, whose levels hold the largest value of the cells they cover (so a
// zoomed-out view of thousands of tokens still shows every peak, in a few MB, and zoomed in on
// one, the texture holds the cells on screen and a margin, not the whole matrix), a 256-entry
// colour-map table per map, and the shader program of shaders/heatmap.*, bound through ImDrawList
// callbacks so the quad sits in ImGui's draw order and clipping.
#define GL_GLEXT_PROTOTYPES 1
#include "gui/heatmap_texture.h"

#include <GL/gl.h>
#include <GL/glext.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <vector>

#include "embedded_shaders.h"
#include "gui/heatmap_colors.h"
#include "render/color_scale.h"
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
    if (m.size() == 0) return false;
    // Level of detail: a level-k texel is the largest of 2^k × 2^k cells. The texture is the
    // coarsest level that still has a texel for every pixel of the quad (the whole matrix as
    // drawn, zoomed), so a zoomed-out 4096-token view or a thumbnail holds a few MB instead of
    // 64, and zooming in uploads the finer level once it is needed.
    const double qw = std::max(1.0f, p1.x - p0.x), qh = std::max(1.0f, p1.y - p0.y);
    int level = 0;
    while (level < 30 && (m.cols() >> (level + 1)) >= qw && (m.rows() >> (level + 1)) >= qh)
      ++level;
    auto side = [&](Eigen::Index n) { return (n + (Eigen::Index{1} << level) - 1) >> level; };
    while (level < 30 && (side(m.cols()) > max_texture_ || side(m.rows()) > max_texture_)) ++level;
    // The cells on screen: those under the clip rectangle the widget pushed.
    const ImVec2 k0 = dl->GetClipRectMin(), k1 = dl->GetClipRectMax();
    const double cw = qw / static_cast<double>(m.cols()), ch = qh / static_cast<double>(m.rows());
    // The cell index at `cells` cells from the matrix's edge, within [0, n].
    auto cell = [](double cells, Eigen::Index n) {
      return std::clamp<Eigen::Index>(static_cast<Eigen::Index>(cells), 0, n);
    };
    const Window visible{cell(std::floor((k0.y - p0.y) / ch), m.rows()),
                         cell(std::floor((k0.x - p0.x) / cw), m.cols()),
                         cell(std::ceil((k1.y - p0.y) / ch), m.rows()),
                         cell(std::ceil((k1.x - p0.x) / cw), m.cols())};
    if (visible.r1 <= visible.r0 || visible.c1 <= visible.c0) return true;  // none on screen
    Texture& t = textures_[key];
    if (!t.id || t.serial != serial || t.rows != m.rows() || t.cols != m.cols() ||
        t.hidden != (hidden != nullptr) || t.level != level || !t.window.holds(visible))
      upload(t, serial, m, hidden, level, window_for(visible, m, level));
    params_.push_back({this, t.id, lut(scale.map), static_cast<float>(scale.lo),
                       static_cast<float>(scale.hi),
                       ImGui::ColorConvertU32ToFloat4(hatch_color(light, 0)),
                       ImGui::ColorConvertU32ToFloat4(hatch_color(light, 1))});
    dl->AddCallback(&GlHeatmapRenderer::bind, &params_.back());
    const Window& w = t.window;
    const ImVec2 q0{static_cast<float>(p0.x + w.c0 * cw), static_cast<float>(p0.y + w.r0 * ch)};
    const ImVec2 q1{static_cast<float>(p0.x + w.c1 * cw), static_cast<float>(p0.y + w.r1 * ch)};
    dl->AddImage(reinterpret_cast<ImTextureID>(static_cast<intptr_t>(t.id)), q0, q1);
    dl->AddCallback(ImDrawCallback_ResetRenderState, nullptr);
    return true;
  }

 private:
  // Cells [r0, r1) × [c0, c1) of a matrix.
  struct Window {
    Eigen::Index r0 = 0, c0 = 0, r1 = 0, c1 = 0;
    bool holds(const Window& o) const {
      return o.r0 >= r0 && o.c0 >= c0 && o.r1 <= r1 && o.c1 <= c1;
    }
  };
  struct Texture {
    GLuint id = 0;
    uint64_t serial = 0;
    Eigen::Index rows = 0, cols = 0;
    bool hidden = false;
    int level = 0;  // the texture's level 0 is this level of the matrix
    Window window;  // the cells it holds
  };

  // The whole matrix when its texture at `level` is small (up to 1024 × 1024 texels, 4 MB: a
  // 4096-token matrix zoomed out to fit); else the cells on screen and a quarter more on every
  // side, on the level's texel boundaries. Zoomed in on a 4096-token head, the texture
  // holds what is on screen and around it instead of 64 MB and its levels, and a pan within the
  // margin uploads nothing.
  static Window window_for(const Window& visible, const Matrix& m, int level) {
    const Eigen::Index unit = Eigen::Index{1} << level;
    auto texels = [&](Eigen::Index n) { return (n + unit - 1) / unit; };
    if (texels(m.rows()) * texels(m.cols()) <= Eigen::Index{1024} * 1024)
      return {0, 0, m.rows(), m.cols()};
    auto span = [unit](Eigen::Index a, Eigen::Index b, Eigen::Index n, Eigen::Index& w0,
                       Eigen::Index& w1) {
      const Eigen::Index margin = std::max<Eigen::Index>(16 * unit, (b - a) / 4);
      w0 = std::max<Eigen::Index>(0, a - margin) / unit * unit;
      w1 = std::min(n, (b + margin + unit - 1) / unit * unit);  // whole texels, or the edge
    };
    Window w;
    span(visible.r0, visible.r1, m.rows(), w.r0, w.r1);
    span(visible.c0, visible.c1, m.cols(), w.c0, w.c1);
    return w;
  }

  // Uploads level `level` of the cells of m in `win` (hidden cells as -inf, so the shader hatches
  // them whatever the stage's value is) and the levels above it, each texel the largest of the 2 ×
  // 2 (at an odd edge 2 × 3 or 3 × 3) below it (-inf only where all are): the shader reads the
  // level whose texels match a pixel's cells, so a peak is never skipped however far the view is
  // zoomed out.
  void upload(Texture& t, uint64_t serial, const Matrix& m, const ReasonMatrix* hidden, int level,
              const Window& win) {
    if (!t.id) glGenTextures(1, &t.id);
    constexpr float kNegInf = -std::numeric_limits<float>::infinity();
    if (hidden && (hidden->rows() != m.rows() || hidden->cols() != m.cols())) hidden = nullptr;
    const Eigen::Index rows = win.r1 - win.r0, cols = win.c1 - win.c0;
    int w = static_cast<int>((cols + (Eigen::Index{1} << level) - 1) >> level);
    int h = static_cast<int>((rows + (Eigen::Index{1} << level) - 1) >> level);
    std::vector<float> above, next;
    // The matrix itself is level 0 when nothing needs hatching by reasons: no copy of its n²
    // floats (64 MB at 4096 tokens) on the way to the texture; its rows are `stride` apart.
    const float* base = m.data() + win.r0 * m.cols() + win.c0;
    size_t stride = static_cast<size_t>(m.cols());
    if (level > 0 || hidden) {
      above.assign(static_cast<size_t>(w) * h, kNegInf);
      for (Eigen::Index i = 0; i < rows; ++i) {
        const float* row = base + i * m.cols();
        const uint8_t* hid =
            hidden ? hidden->data() + (win.r0 + i) * hidden->cols() + win.c0 : nullptr;
        float* out = &above[static_cast<size_t>(i >> level) * w];
        for (Eigen::Index j = 0; j < cols; ++j) {
          const float v = hid && hid[j] ? kNegInf : row[j];
          out[j >> level] = std::max(out[j >> level], v);
        }
      }
      base = above.data();
      stride = static_cast<size_t>(w);
    }
    glBindTexture(GL_TEXTURE_2D, t.id);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST_MIPMAP_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, static_cast<GLint>(stride));
    int mip = 0;
    glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, w, h, 0, GL_RED, GL_FLOAT, base);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    while (w > 1 || h > 1) {
      // OpenGL wants each level max(1, ⌊size / 2⌋) on a side, or the texture is incomplete and
      // samples as 0 (every cell of a 3-token matrix drew as the map's first colour): an odd
      // side's last texel joins the last one above it, so no value is dropped.
      const int w2 = std::max(1, w / 2), h2 = std::max(1, h / 2);
      next.assign(static_cast<size_t>(w2) * h2, kNegInf);
      for (int i = 0; i < h; ++i) {
        const float* row = base + static_cast<size_t>(i) * stride;
        float* out = &next[static_cast<size_t>(std::min(i / 2, h2 - 1)) * w2];
        for (int j = 0; j < w; ++j) {
          const int o = std::min(j / 2, w2 - 1);
          out[o] = std::max(out[o], row[j]);
        }
      }
      above.swap(next);
      base = above.data();
      stride = static_cast<size_t>(w2);
      w = w2;
      h = h2;
      glTexImage2D(GL_TEXTURE_2D, ++mip, GL_R32F, w, h, 0, GL_RED, GL_FLOAT, above.data());
    }
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_BASE_LEVEL, 0);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAX_LEVEL, mip);
    t.serial = serial;
    t.rows = m.rows();
    t.cols = m.cols();
    t.hidden = hidden != nullptr;
    t.level = level;
    t.window = win;
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
