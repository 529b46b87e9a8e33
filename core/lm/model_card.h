// A model folder's README.md (its model card, as on Hugging Face): the first paragraph of prose,
// which the app shows beside a shipped model's name so a teacher can tell the models apart.
#pragma once

#include <string>

namespace attn::lm {

// The first paragraph of FOLDER/README.md as one line: YAML front matter, headings, images, HTML
// and blank lines before it skipped, its lines joined with spaces. "" when there is no README or
// no prose in it. At most max_bytes, cut at a space with "…" when longer.
std::string model_card_summary(const std::string& folder, size_t max_bytes = 400);

}  // namespace attn::lm
