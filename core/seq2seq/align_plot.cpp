// Alignment plot rendering to SVG and PNG (see align_plot.h).
#include "align_plot.h"

#include <stb_image_write.h>
#include <stb_truetype.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "atomic_file.h"

namespace attn::s2s {

namespace {

constexpr int kCell = 24;
constexpr int kLeft = 56;  // room for "</s>"
constexpr int kTop = 64;   // title line + input characters
constexpr int kPad = 12;

std::string display(const std::string& s) { return s == " " ? "\xE2\x90\xA3" : s; }  // ␣

std::string xml_escape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    if (ch == '<')
      o += "&lt;";
    else if (ch == '>')
      o += "&gt;";
    else if (ch == '&')
      o += "&amp;";
    else if (ch == '"')
      o += "&quot;";
    else if (ch == '\'')
      o += "&apos;";
    else
      o += ch;
  }
  return o;
}

int grey(float w) { return static_cast<int>(std::lround(255.0 * std::clamp(w, 0.0f, 1.0f))); }

std::vector<int> codepoints(const std::string& s);

// Cell colour: grey by weight, dark blue where a local window hides the position.
void cell_rgb(const AlignmentPlot& p, int i, int j, int rgb[3]) {
  if (p.visible.size() > 0 && p.visible(i, j) == 0.0f) {
    rgb[0] = 28, rgb[1] = 40, rgb[2] = 96;
    return;
  }
  rgb[0] = rgb[1] = rgb[2] = grey(p.weights(i, j));
}

std::string full_title(const AlignmentPlot& p) {
  const bool hidden = p.visible.size() > 0 && p.visible.minCoeff() == 0.0f;
  return p.title + (hidden ? "   (blue: outside the local window)" : "");
}

// Wide enough for the grid and for the title (about 9 px per monospace character at 15 px).
int plot_width(const AlignmentPlot& p) {
  const int grid = kLeft + static_cast<int>(p.cols.size()) * kCell + kPad;
  return std::max(grid, 2 * kPad + 9 * static_cast<int>(codepoints(full_title(p)).size()));
}

// Decodes UTF-8 into code points (labels are ASCII plus ␣).
std::vector<int> codepoints(const std::string& s) {
  std::vector<int> out;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    int cp = c, n = 1;
    if (c >= 0xE0 && i + 2 < s.size()) {
      cp = ((c & 0x0F) << 12) | ((s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F);
      n = 3;
    } else if (c >= 0xC0 && i + 1 < s.size()) {
      cp = ((c & 0x1F) << 6) | (s[i + 1] & 0x3F);
      n = 2;
    }
    out.push_back(cp);
    i += static_cast<size_t>(n);
  }
  return out;
}

struct Canvas {
  int w, h;
  std::vector<unsigned char> rgb;
  Canvas(int w_, int h_) : w(w_), h(h_), rgb(static_cast<size_t>(w_) * h_ * 3, 255) {}
  void fill(int x0, int y0, int x1, int y1, int r, int g, int b) {
    for (int y = std::max(0, y0); y < std::min(h, y1); ++y)
      for (int x = std::max(0, x0); x < std::min(w, x1); ++x) {
        unsigned char* p = &rgb[(static_cast<size_t>(y) * w + x) * 3];
        p[0] = static_cast<unsigned char>(r);
        p[1] = static_cast<unsigned char>(g);
        p[2] = static_cast<unsigned char>(b);
      }
  }
};

struct Font {
  std::string data;
  stbtt_fontinfo info{};
  bool load(std::string& error) {
    for (const char* path : {"/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",
                             "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"}) {
      std::string e;
      if (read_text_file(path, data, e) &&
          stbtt_InitFont(&info, reinterpret_cast<const unsigned char*>(data.data()), 0))
        return true;
    }
    error =
        "no font for PNG labels: /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf is "
        "missing (install fonts-dejavu-core, or write an .svg)";
    return false;
  }
  // Draws text in black with its left edge at x (or centred on x) and baseline at y.
  void draw(Canvas& c, const std::string& text, float px, int x, int y, bool centre) {
    const float scale = stbtt_ScaleForPixelHeight(&info, px);
    const auto cps = codepoints(text);
    float width = 0;
    for (int cp : cps) {
      int adv = 0, lsb = 0;
      stbtt_GetCodepointHMetrics(&info, cp, &adv, &lsb);
      width += adv * scale;
    }
    float pen = centre ? x - width / 2 : static_cast<float>(x);
    for (int cp : cps) {
      int adv = 0, lsb = 0, x0 = 0, y0 = 0, x1 = 0, y1 = 0;
      stbtt_GetCodepointHMetrics(&info, cp, &adv, &lsb);
      stbtt_GetCodepointBitmapBox(&info, cp, scale, scale, &x0, &y0, &x1, &y1);
      const int bw = x1 - x0, bh = y1 - y0;
      if (bw > 0 && bh > 0) {
        std::vector<unsigned char> bmp(static_cast<size_t>(bw) * bh);
        stbtt_MakeCodepointBitmap(&info, bmp.data(), bw, bh, bw, scale, scale, cp);
        const int ox = static_cast<int>(std::lround(pen)) + x0, oy = y + y0;
        for (int yy = 0; yy < bh; ++yy)
          for (int xx = 0; xx < bw; ++xx) {
            const int X = ox + xx, Y = oy + yy;
            if (X < 0 || Y < 0 || X >= c.w || Y >= c.h) continue;
            const int a = bmp[static_cast<size_t>(yy) * bw + xx];
            unsigned char* p = &c.rgb[(static_cast<size_t>(Y) * c.w + X) * 3];
            for (int k = 0; k < 3; ++k) p[k] = static_cast<unsigned char>(p[k] * (255 - a) / 255);
          }
      }
      pen += adv * scale;
    }
  }
};

void png_sink(void* ctx, void* data, int size) {
  static_cast<std::string*>(ctx)->append(static_cast<const char*>(data), static_cast<size_t>(size));
}

}  // namespace

std::string alignment_svg(const AlignmentPlot& p) {
  const int R = static_cast<int>(p.rows.size()), C = static_cast<int>(p.cols.size());
  const int W = plot_width(p), H = kTop + R * kCell + kPad;
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
    << "\" viewBox=\"0 0 " << W << " " << H << "\" font-family=\"DejaVu Sans Mono, monospace\">\n";
  s << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s << "<text x=\"" << kPad << "\" y=\"22\" font-size=\"14\">" << xml_escape(full_title(p))
    << "</text>\n";
  for (int j = 0; j < C; ++j)
    s << "<text x=\"" << kLeft + j * kCell + kCell / 2 << "\" y=\"" << kTop - 8
      << "\" font-size=\"15\" text-anchor=\"middle\">" << xml_escape(display(p.cols[j]))
      << "</text>\n";
  for (int i = 0; i < R; ++i) {
    s << "<text x=\"" << kLeft - 6 << "\" y=\"" << kTop + i * kCell + kCell / 2 + 5
      << "\" font-size=\"15\" text-anchor=\"end\">" << xml_escape(display(p.rows[i]))
      << "</text>\n";
    for (int j = 0; j < C; ++j) {
      int g[3];
      cell_rgb(p, i, j, g);
      char w[32];
      std::snprintf(w, sizeof w, "%.3f", static_cast<double>(p.weights(i, j)));
      s << "<rect x=\"" << kLeft + j * kCell << "\" y=\"" << kTop + i * kCell << "\" width=\""
        << kCell << "\" height=\"" << kCell << "\" fill=\"rgb(" << g[0] << "," << g[1] << ","
        << g[2] << ")\"><title>" << xml_escape(p.rows[i]) << " / " << xml_escape(p.cols[j]) << ": "
        << w << "</title></rect>\n";
    }
  }
  s << "</svg>\n";
  return s.str();
}

bool alignment_png(const AlignmentPlot& p, std::string& png, std::string& error) {
  Font font;
  if (!font.load(error)) return false;
  const int R = static_cast<int>(p.rows.size()), C = static_cast<int>(p.cols.size());
  Canvas c(plot_width(p), kTop + R * kCell + kPad);
  font.draw(c, full_title(p), 15, kPad, 22, false);
  for (int j = 0; j < C; ++j)
    font.draw(c, display(p.cols[j]), 17, kLeft + j * kCell + kCell / 2, kTop - 8, true);
  for (int i = 0; i < R; ++i) {
    const std::string label = display(p.rows[i]);
    font.draw(c, label, 17, kLeft - 6 - static_cast<int>(label.size() > 1 ? 9 * label.size() : 10),
              kTop + i * kCell + kCell / 2 + 6, false);
    for (int j = 0; j < C; ++j) {
      int g[3];
      cell_rgb(p, i, j, g);
      c.fill(kLeft + j * kCell, kTop + i * kCell, kLeft + (j + 1) * kCell, kTop + (i + 1) * kCell,
             g[0], g[1], g[2]);
    }
  }
  png.clear();
  if (!stbi_write_png_to_func(png_sink, &png, c.w, c.h, 3, c.rgb.data(), c.w * 3)) {
    error = "PNG encoding failed";
    return false;
  }
  return true;
}

namespace {

bool ends_with(const std::string& path, const std::string& e) {
  if (path.size() < e.size()) return false;
  std::string tail = path.substr(path.size() - e.size());
  std::transform(tail.begin(), tail.end(), tail.begin(), ::tolower);
  return tail == e;
}

template <typename Svg, typename Png>
bool write_by_extension(const std::string& path, const std::string& flag, Svg svg, Png png,
                        std::string& error) {
  std::string data;
  if (ends_with(path, ".svg")) {
    data = svg();
  } else if (ends_with(path, ".png")) {
    if (!png(data, error)) return false;
  } else {
    error = flag + ": '" + path + "' must end in .png or .svg";
    return false;
  }
  return write_file_atomically(path, data, error);
}

// Colour-blind-safe line colours (Okabe–Ito).
const int kLineColours[][3] = {{0, 0, 0},    {230, 159, 0}, {86, 180, 233},  {0, 158, 115},
                               {213, 94, 0}, {0, 114, 178}, {204, 121, 167}, {240, 228, 66}};

constexpr int kChartW = 640, kChartH = 400, kPlotL = 60, kPlotR = 150, kPlotT = 40, kPlotB = 60;

double chart_x(const AccuracyChart& c, size_t i) {
  const double w = kChartW - kPlotL - kPlotR;
  return kPlotL +
         (c.buckets.size() > 1 ? w * static_cast<double>(i) / (c.buckets.size() - 1) : w / 2);
}
double chart_y(double acc) {
  return kPlotT + (kChartH - kPlotT - kPlotB) * (1.0 - std::clamp(acc, 0.0, 1.0));
}

}  // namespace

bool write_alignment_plot(const AlignmentPlot& p, const std::string& path, std::string& error) {
  return write_by_extension(
      path, "--out", [&p] { return alignment_svg(p); },
      [&p](std::string& d, std::string& e) { return alignment_png(p, d, e); }, error);
}

std::string accuracy_chart_svg(const AccuracyChart& c) {
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kChartW << "\" height=\"" << kChartH
    << "\" font-family=\"DejaVu Sans, sans-serif\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << kPlotL << "\" y=\"24\" font-size=\"14\">" << xml_escape(c.title)
    << "</text>\n";
  for (int pct = 0; pct <= 100; pct += 20) {
    const double y = chart_y(pct / 100.0);
    s << "<line x1=\"" << kPlotL << "\" x2=\"" << kChartW - kPlotR << "\" y1=\"" << y << "\" y2=\""
      << y << "\" stroke=\"#ddd\"/>\n<text x=\"" << kPlotL - 6 << "\" y=\"" << y + 4
      << "\" font-size=\"11\" text-anchor=\"end\">" << pct << "%</text>\n";
  }
  for (size_t i = 0; i < c.buckets.size(); ++i)
    s << "<text x=\"" << chart_x(c, i) << "\" y=\"" << kChartH - kPlotB + 18
      << "\" font-size=\"11\" text-anchor=\"middle\">" << xml_escape(c.buckets[i]) << "</text>\n";
  s << "<text x=\"" << (kPlotL + kChartW - kPlotR) / 2 << "\" y=\"" << kChartH - 16
    << "\" font-size=\"12\" text-anchor=\"middle\">input length (characters)</text>\n";
  for (size_t k = 0; k < c.series.size(); ++k) {
    const int* col = kLineColours[k % 8];
    std::ostringstream pts;
    for (size_t i = 0; i < c.buckets.size(); ++i)
      pts << (i ? " " : "") << chart_x(c, i) << "," << chart_y(c.accuracy[k][i]);
    s << "<polyline fill=\"none\" stroke-width=\"2.5\" stroke=\"rgb(" << col[0] << "," << col[1]
      << "," << col[2] << ")\" points=\"" << pts.str() << "\"/>\n";
    const int ly = kPlotT + 14 + 18 * static_cast<int>(k);
    s << "<line x1=\"" << kChartW - kPlotR + 10 << "\" x2=\"" << kChartW - kPlotR + 30 << "\" y1=\""
      << ly - 4 << "\" y2=\"" << ly - 4 << "\" stroke-width=\"2.5\" stroke=\"rgb(" << col[0] << ","
      << col[1] << "," << col[2] << ")\"/><text x=\"" << kChartW - kPlotR + 36 << "\" y=\"" << ly
      << "\" font-size=\"12\">" << xml_escape(c.series[k]) << "</text>\n";
  }
  s << "</svg>\n";
  return s.str();
}

bool accuracy_chart_png(const AccuracyChart& c, std::string& png, std::string& error) {
  Font font;
  if (!font.load(error)) return false;
  Canvas cv(kChartW, kChartH);
  font.draw(cv, c.title, 15, kPlotL, 24, false);
  for (int pct = 0; pct <= 100; pct += 20) {
    const int y = static_cast<int>(std::lround(chart_y(pct / 100.0)));
    cv.fill(kPlotL, y, kChartW - kPlotR, y + 1, 221, 221, 221);
    font.draw(cv, std::to_string(pct) + "%", 12, kPlotL - 36, y + 4, false);
  }
  for (size_t i = 0; i < c.buckets.size(); ++i)
    font.draw(cv, c.buckets[i], 12, static_cast<int>(chart_x(c, i)), kChartH - kPlotB + 18, true);
  font.draw(cv, "input length (characters)", 13, (kPlotL + kChartW - kPlotR) / 2, kChartH - 16,
            true);
  for (size_t k = 0; k < c.series.size(); ++k) {
    const int* col = kLineColours[k % 8];
    // Thick segments drawn as small squares along each line.
    for (size_t i = 0; i + 1 < c.buckets.size(); ++i) {
      const double x0 = chart_x(c, i), y0 = chart_y(c.accuracy[k][i]);
      const double x1 = chart_x(c, i + 1), y1 = chart_y(c.accuracy[k][i + 1]);
      const int steps = static_cast<int>(std::hypot(x1 - x0, y1 - y0)) + 1;
      for (int t = 0; t <= steps; ++t) {
        const int x = static_cast<int>(std::lround(x0 + (x1 - x0) * t / steps));
        const int y = static_cast<int>(std::lround(y0 + (y1 - y0) * t / steps));
        cv.fill(x - 1, y - 1, x + 2, y + 2, col[0], col[1], col[2]);
      }
    }
    const int ly = kPlotT + 14 + 18 * static_cast<int>(k);
    cv.fill(kChartW - kPlotR + 10, ly - 5, kChartW - kPlotR + 30, ly - 2, col[0], col[1], col[2]);
    font.draw(cv, c.series[k], 12, kChartW - kPlotR + 36, ly, false);
  }
  png.clear();
  if (!stbi_write_png_to_func(png_sink, &png, cv.w, cv.h, 3, cv.rgb.data(), cv.w * 3)) {
    error = "PNG encoding failed";
    return false;
  }
  return true;
}

bool write_accuracy_chart(const AccuracyChart& c, const std::string& path, std::string& error) {
  return write_by_extension(
      path, "--plot", [&c] { return accuracy_chart_svg(c); },
      [&c](std::string& d, std::string& e) { return accuracy_chart_png(c, d, e); }, error);
}

}  // namespace attn::s2s
