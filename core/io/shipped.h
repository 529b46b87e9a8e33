// Shipped data named by short name, so a user can type `--model bahdanau` instead of a path:
// seq2seq models (data_dir()/models/**/NAME.s2s) and GPT-2-format folders (models/lm/NAME/).
// The CLI and the app resolve every model they take through here.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace attn {

// One kind of shipped item: where the items live under data_dir() and what one looks like.
struct ShippedKind {
  const char* folder;     // under data_dir(): "models", "models/lm"
  const char* extension;  // the items are files ending in this (".s2s") …
  const char* marker;     // … or, when extension is "", folders holding this file ("config.json")
  const char* what;       // for messages, singular: "seq2seq model"
};

// Seq2seq date models: "bahdanau" is models/bahdanau.s2s, "bottleneck/none-max40" is
// models/bottleneck/none-max40.s2s.
inline constexpr ShippedKind kSeq2seqModels{"models", ".s2s", "", "seq2seq model"};
// GPT-2-format models: "NAME" is the folder models/lm/NAME/ holding config.json (cli.md, `lm`).
inline constexpr ShippedKind kLmModels{"models/lm", "", "config.json", "language model"};

// Lessons of the built-in course: "03-softmax" is lessons/03-softmax.json (docs/lessons.md).
inline constexpr ShippedKind kLessons{"lessons", ".json", "", "lesson"};

struct ShippedItem {
  std::string name;  // the path under the kind's folder, without the extension
  std::string path;  // data_dir()/folder/name[extension]
};

// Every item of a kind under data_dir(), sorted by name; empty when there is none.
std::vector<ShippedItem> list_shipped(const ShippedKind& kind);

// Why list_shipped(kind) is empty, for messages: "no shipped seq2seq models in DIR/models", or,
// when the data folder itself is missing, where it was looked for and how to name another.
std::string no_shipped_message(const ShippedKind& kind);

// What a user typed for a model: anything that exists at that path is taken as the path;
// otherwise it is the short name of a shipped item (its extension may be written). Returns the
// path, or nullopt with `error` naming what was typed and listing the shipped names.
std::optional<std::string> resolve_shipped(const ShippedKind& kind, const std::string& name_or_path,
                                           std::string& error);

}  // namespace attn
