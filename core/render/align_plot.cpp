// Alignment plot rendering to SVG and PNG (see align_plot.h).
#include "render/align_plot.h"

#include <stb_image_write.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "render/raster_text.h"

namespace attn {

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
  return std::max(grid, 2 * kPad + 9 * static_cast<int>(decode_utf8(full_title(p)).size()));
}

void png_sink(void* ctx, void* data, int size) {
  static_cast<std::string*>(ctx)->append(static_cast<const char*>(data), static_cast<size_t>(size));
}

}  // namespace

namespace {

int plot_height(const AlignmentPlot& p) {
  return kTop + static_cast<int>(p.rows.size()) * kCell + kPad;
}

void svg_body(const AlignmentPlot& p, int y0, std::ostringstream& s) {
  const int R = static_cast<int>(p.rows.size()), C = static_cast<int>(p.cols.size());
  s << "<text x=\"" << kPad << "\" y=\"" << y0 + 22 << "\" font-size=\"14\">"
    << xml_escape(full_title(p)) << "</text>\n";
  for (int j = 0; j < C; ++j)
    s << "<text x=\"" << kLeft + j * kCell + kCell / 2 << "\" y=\"" << y0 + kTop - 8
      << "\" font-size=\"15\" text-anchor=\"middle\">" << xml_escape(display(p.cols[j]))
      << "</text>\n";
  for (int i = 0; i < R; ++i) {
    const int y = y0 + kTop + i * kCell;
    s << "<text x=\"" << kLeft - 6 << "\" y=\"" << y + kCell / 2 + 5
      << "\" font-size=\"15\" text-anchor=\"end\">" << xml_escape(display(p.rows[i]))
      << "</text>\n";
    for (int j = 0; j < C; ++j) {
      int g[3];
      cell_rgb(p, i, j, g);
      char w[32];
      std::snprintf(w, sizeof w, "%.3f", static_cast<double>(p.weights(i, j)));
      s << "<rect x=\"" << kLeft + j * kCell << "\" y=\"" << y << "\" width=\"" << kCell
        << "\" height=\"" << kCell << "\" fill=\"rgb(" << g[0] << "," << g[1] << "," << g[2]
        << ")\"><title>" << xml_escape(p.rows[i]) << " / " << xml_escape(p.cols[j]) << ": " << w
        << "</title></rect>\n";
    }
  }
  // A frame, so white cells (weight 1) at the edge stay visible against the page.
  s << "<rect x=\"" << kLeft - 0.5 << "\" y=\"" << y0 + kTop - 0.5 << "\" width=\"" << C * kCell + 1
    << "\" height=\"" << R * kCell + 1 << "\" fill=\"none\" stroke=\"rgb(128,128,128)\"/>\n";
}

void png_body(const AlignmentPlot& p, int y0, const Fonts& fonts, Canvas& c) {
  const int R = static_cast<int>(p.rows.size()), C = static_cast<int>(p.cols.size());
  const Rgb black{0, 0, 0};
  fonts.draw(c, full_title(p), kPad, y0 + 22, 14, false, TextAnchor::kStart, 0, black);
  for (int j = 0; j < C; ++j)
    fonts.draw(c, display(p.cols[j]), kLeft + j * kCell + kCell / 2.0, y0 + kTop - 8, 15, false,
               TextAnchor::kMiddle, 0, black);
  for (int i = 0; i < R; ++i) {
    const int y = y0 + kTop + i * kCell;
    fonts.draw(c, display(p.rows[i]), kLeft - 6, y + kCell / 2.0 + 5, 15, false, TextAnchor::kEnd,
               0, black);
    for (int j = 0; j < C; ++j) {
      int g[3];
      cell_rgb(p, i, j, g);
      c.fill_rect(
          kLeft + j * kCell, y, kCell, kCell,
          Rgb{static_cast<uint8_t>(g[0]), static_cast<uint8_t>(g[1]), static_cast<uint8_t>(g[2])});
    }
  }
  // A frame, so white cells (weight 1) at the edge stay visible against the page.
  const Rgb frame{128, 128, 128};
  c.fill_rect(kLeft - 1, y0 + kTop - 1, C * kCell + 2, 1, frame);
  c.fill_rect(kLeft - 1, y0 + kTop + R * kCell, C * kCell + 2, 1, frame);
  c.fill_rect(kLeft - 1, y0 + kTop - 1, 1, R * kCell + 2, frame);
  c.fill_rect(kLeft + C * kCell, y0 + kTop - 1, 1, R * kCell + 2, frame);
}

}  // namespace

std::string alignment_svg(const std::vector<AlignmentPlot>& plots) {
  int W = 0, H = 0;
  for (const auto& p : plots) {
    W = std::max(W, plot_width(p));
    H += plot_height(p);
  }
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
    << "\" viewBox=\"0 0 " << W << " " << H << "\" font-family=\"DejaVu Sans, sans-serif\">\n";
  s << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  int y = 0;
  for (const auto& p : plots) {
    svg_body(p, y, s);
    y += plot_height(p);
  }
  s << "</svg>\n";
  return s.str();
}

bool alignment_png(const std::vector<AlignmentPlot>& plots, std::string& png, std::string& error) {
  const Fonts* fonts = Fonts::system(error);
  if (!fonts) return false;
  int W = 0, H = 0;
  for (const auto& p : plots) {
    W = std::max(W, plot_width(p));
    H += plot_height(p);
  }
  Canvas c(std::max(W, 1), std::max(H, 1), Rgb{255, 255, 255});
  int y = 0;
  for (const auto& p : plots) {
    png_body(p, y, *fonts, c);
    y += plot_height(p);
  }
  png.clear();
  if (!stbi_write_png_to_func(png_sink, &png, c.width, c.height, 3, c.rgb.data(), c.width * 3)) {
    error = "PNG encoding failed";
    return false;
  }
  return true;
}

std::string alignment_svg(const AlignmentPlot& p) {
  return alignment_svg(std::vector<AlignmentPlot>{p});
}

bool alignment_png(const AlignmentPlot& p, std::string& png, std::string& error) {
  return alignment_png(std::vector<AlignmentPlot>{p}, png, error);
}

namespace {

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

bool render_alignment_plots(const std::vector<AlignmentPlot>& plots, ImageFormat format,
                            std::string& bytes, std::string& error) {
  if (format == ImageFormat::kSvg) {
    bytes = alignment_svg(plots);
    return true;
  }
  return alignment_png(plots, bytes, error);
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
  const Fonts* fonts = Fonts::system(error);
  if (!fonts) return false;
  Canvas cv(kChartW, kChartH, Rgb{255, 255, 255});
  const Rgb black{0, 0, 0};
  fonts->draw(cv, c.title, kPlotL, 24, 14, false, TextAnchor::kStart, 0, black);
  for (int pct = 0; pct <= 100; pct += 20) {
    const int y = static_cast<int>(std::lround(chart_y(pct / 100.0)));
    cv.fill_rect(kPlotL, y, kChartW - kPlotR - kPlotL, 1, Rgb{221, 221, 221});
    fonts->draw(cv, std::to_string(pct) + "%", kPlotL - 6, y + 4, 11, false, TextAnchor::kEnd, 0,
                black);
  }
  for (size_t i = 0; i < c.buckets.size(); ++i)
    fonts->draw(cv, c.buckets[i], chart_x(c, i), kChartH - kPlotB + 18, 11, false,
                TextAnchor::kMiddle, 0, black);
  fonts->draw(cv, "input length (characters)", (kPlotL + kChartW - kPlotR) / 2.0, kChartH - 16, 12,
              false, TextAnchor::kMiddle, 0, black);
  for (size_t k = 0; k < c.series.size(); ++k) {
    const int* col = kLineColours[k % 8];
    const Rgb rgb{static_cast<uint8_t>(col[0]), static_cast<uint8_t>(col[1]),
                  static_cast<uint8_t>(col[2])};
    // Thick segments drawn as small squares along each line.
    for (size_t i = 0; i + 1 < c.buckets.size(); ++i) {
      const double x0 = chart_x(c, i), y0 = chart_y(c.accuracy[k][i]);
      const double x1 = chart_x(c, i + 1), y1 = chart_y(c.accuracy[k][i + 1]);
      const int steps = static_cast<int>(std::hypot(x1 - x0, y1 - y0)) + 1;
      for (int t = 0; t <= steps; ++t) {
        const int x = static_cast<int>(std::lround(x0 + (x1 - x0) * t / steps));
        const int y = static_cast<int>(std::lround(y0 + (y1 - y0) * t / steps));
        cv.fill_rect(x - 1, y - 1, 3, 3, rgb);
      }
    }
    const int ly = kPlotT + 14 + 18 * static_cast<int>(k);
    cv.fill_rect(kChartW - kPlotR + 10, ly - 5, 20, 3, rgb);
    fonts->draw(cv, c.series[k], kChartW - kPlotR + 36, ly, 12, false, TextAnchor::kStart, 0,
                black);
  }
  png.clear();
  if (!stbi_write_png_to_func(png_sink, &png, cv.width, cv.height, 3, cv.rgb.data(),
                              cv.width * 3)) {
    error = "PNG encoding failed";
    return false;
  }
  return true;
}

bool render_accuracy_chart(const AccuracyChart& c, ImageFormat format, std::string& bytes,
                           std::string& error) {
  if (format == ImageFormat::kSvg) {
    bytes = accuracy_chart_svg(c);
    return true;
  }
  return accuracy_chart_png(c, bytes, error);
}

}  // namespace attn
