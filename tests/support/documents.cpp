// Reads exported PDFs and SVGs back for the tests (see documents.h).
#include "documents.h"

#include <glib.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "reference.h"

namespace attn::test {

std::string run_tool(const std::string& command, int* status) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (!p) {
    if (status) *status = -1;
    return out;
  }
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int raw = ::pclose(p);
  if (status) *status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return out;
}

std::string pdf_text(const std::string& pdf) {
  return run_tool("pdftotext -enc UTF-8 '" + pdf + "' - 2>/dev/null");
}

int pdf_pages(const std::string& pdf) {
  const std::string info = run_tool("pdfinfo '" + pdf + "' 2>/dev/null");
  const size_t at = info.find("Pages:");
  return at == std::string::npos ? -1 : std::atoi(info.c_str() + at + 6);
}

bool pdf_page_size(const std::string& pdf, double& width, double& height) {
  const std::string info = run_tool("pdfinfo '" + pdf + "' 2>/dev/null");
  const size_t at = info.find("Page size:");
  return at != std::string::npos &&
         std::sscanf(info.c_str() + at + 10, " %lf x %lf", &width, &height) == 2;
}

RgbImage pdf_page_pixels(const std::string& pdf, int page, int dpi) {
  const std::string stem = temp_path("pdf-page");
  run_tool("pdftoppm -png -singlefile -r " + std::to_string(dpi) + " -f " + std::to_string(page) +
           " -l " + std::to_string(page) + " '" + pdf + "' '" + stem + "' 2>/dev/null");
  RgbImage img = load_png_rgb(stem + ".png");
  std::remove((stem + ".png").c_str());
  return img;
}

std::vector<std::string> pdf_fonts(const std::string& pdf) {
  std::istringstream lines(run_tool("pdffonts '" + pdf + "' 2>/dev/null"));
  std::vector<std::string> names;
  int n = 0;
  for (std::string line; std::getline(lines, line); ++n)
    if (n >= 2 && !line.empty()) names.push_back(line.substr(0, line.find(' ')));
  return names;
}

RgbImage svg_pixels(const std::string& svg_path) {
  const std::string png = temp_path("svg-pixels.png");
  run_tool("rsvg-convert -b white -o '" + png + "' '" + svg_path + "' 2>/dev/null");
  RgbImage img = load_png_rgb(png);
  std::remove(png.c_str());
  return img;
}

namespace {

struct SvgParse {
  std::vector<SvgText>* texts;
  std::string width, height;
  bool in_text = false;
};

void start_element(GMarkupParseContext*, const gchar* name, const gchar** attrs,
                   const gchar** values, gpointer data, GError**) {
  auto* p = static_cast<SvgParse*>(data);
  if (std::strcmp(name, "svg") == 0) {
    for (int k = 0; attrs[k]; ++k) {
      if (std::strcmp(attrs[k], "width") == 0) p->width = values[k];
      if (std::strcmp(attrs[k], "height") == 0) p->height = values[k];
    }
  }
  if (std::strcmp(name, "text") != 0) return;
  SvgText t;
  for (int k = 0; attrs[k]; ++k) {
    const std::string a = attrs[k];
    if (a == "class") t.cls = values[k];
    if (a == "data-row") t.row = std::atoi(values[k]);
    if (a == "data-col") t.col = std::atoi(values[k]);
    if (a == "x") t.x = std::atof(values[k]);
    if (a == "y") t.y = std::atof(values[k]);
  }
  p->texts->push_back(t);
  p->in_text = true;
}

void end_element(GMarkupParseContext*, const gchar* name, gpointer data, GError**) {
  if (std::strcmp(name, "text") == 0) static_cast<SvgParse*>(data)->in_text = false;
}

void text(GMarkupParseContext*, const gchar* s, gsize n, gpointer data, GError**) {
  auto* p = static_cast<SvgParse*>(data);
  if (p->in_text) p->texts->back().text.append(s, n);
}

}  // namespace

bool parse_svg(const std::string& svg, std::vector<SvgText>& texts, std::string& width,
               std::string& height, std::string& error) {
  texts.clear();
  // GMarkup parses XML without a DTD; the prolog is not part of its subset.
  std::string body = svg;
  if (body.rfind("<?xml", 0) == 0) body.erase(0, body.find("?>") + 2);
  SvgParse p{&texts, "", "", false};
  GMarkupParser parser{start_element, end_element, text, nullptr, nullptr};
  GMarkupParseContext* ctx =
      g_markup_parse_context_new(&parser, G_MARKUP_TREAT_CDATA_AS_TEXT, &p, nullptr);
  GError* e = nullptr;
  const bool ok =
      g_markup_parse_context_parse(ctx, body.data(), static_cast<gssize>(body.size()), &e) &&
      g_markup_parse_context_end_parse(ctx, &e);
  if (!ok) error = e ? e->message : "not well-formed";
  if (e) g_error_free(e);
  g_markup_parse_context_free(ctx);
  width = p.width;
  height = p.height;
  return ok;
}

std::vector<std::string> texts_of(const std::vector<SvgText>& texts, const std::string& cls) {
  std::vector<std::string> out;
  for (const auto& t : texts)
    if (t.cls == cls) out.push_back(t.text);
  return out;
}

}  // namespace attn::test
