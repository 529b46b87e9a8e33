// Reading exported documents back in tests: the text of a PDF (poppler's pdftotext), a PDF page or
// an SVG as pixels (pdftoppm, rsvg-convert), and the text layer of an SVG through a real XML
// parser (GLib's GMarkup), so tests check what a viewer would show.
#pragma once

#include <string>
#include <vector>

#include "png_image.h"

namespace attn::test {

// Runs a shell command; its stdout, and its exit status in *status when given.
std::string run_tool(const std::string& command, int* status = nullptr);

// pdftotext's UTF-8 text of the whole PDF (pages separated by form feeds); "" on failure.
std::string pdf_text(const std::string& pdf);
// The number of pages (pdfinfo), and the size of page 1 in points.
int pdf_pages(const std::string& pdf);
bool pdf_page_size(const std::string& pdf, double& width, double& height);
// Page `page` (1-based) as pixels at `dpi` (72 = one pixel per point); empty on failure.
RgbImage pdf_page_pixels(const std::string& pdf, int page = 1, int dpi = 72);
// The fonts a PDF embeds, one name per entry (pdffonts).
std::vector<std::string> pdf_fonts(const std::string& pdf);
// An SVG rendered by librsvg at its own size; empty on failure.
RgbImage svg_pixels(const std::string& svg_path);

// One <text> element of an SVG: its class, data-row/data-col (−1 when absent), content.
struct SvgText {
  std::string cls, text;
  int row = -1, col = -1;
  double x = 0, y = 0;
};
// Parses the whole document as XML (false with `error` when it is not well-formed) and collects
// every <text> element, and the root's width and height attributes.
bool parse_svg(const std::string& svg, std::vector<SvgText>& texts, std::string& width,
               std::string& height, std::string& error);

// The texts of a class.
std::vector<std::string> texts_of(const std::vector<SvgText>& texts, const std::string& cls);

}  // namespace attn::test
