// Parses a tokenizer.json document with its BPE model's vocabulary and
// merges taken out as they are read: as members of a JSON tree, Gemma 3's
// 262,144 tokens and 514,847 merges cost seconds (a std::map node per
// token) and hundreds of MB. The rest of the document is the usual tree,
// model.vocab left as {} and model.merges as [] where they were taken.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvscope::tok {

struct StreamedBpe {
  // model.vocab's members in document order (a key listed twice: both, the
  // later last); nothing when the document has no object there.
  std::optional<std::vector<std::pair<std::string, nlohmann::json>>> vocab;
  // model.merges' elements; nothing when the document has no array there.
  std::optional<std::vector<nlohmann::json>> merges;
};

// Throws nlohmann::json::exception for text that is not JSON.
nlohmann::json parse_streaming_bpe(const std::string& text, StreamedBpe& taken);

}  // namespace kvscope::tok
