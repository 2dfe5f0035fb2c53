// Builds small tokenizer.json documents by hand for the unit tests.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tokenizer/tokenizer.h"

namespace kvscope::test {

// A tokenizer.json with every stage null and a BPE model made of `vocab`
// and `merges`; `model_extra` adds or overrides model fields.
inline nlohmann::json tiny_doc(const nlohmann::json& vocab, const nlohmann::json& merges,
                               const nlohmann::json& model_extra = nlohmann::json::object()) {
  nlohmann::json model = {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}};
  for (const auto& [k, v] : model_extra.items()) model[k] = v;
  return {{"version", "1.0"},      {"added_tokens", nlohmann::json::array()},
          {"normalizer", nullptr}, {"pre_tokenizer", nullptr},
          {"post_processor", nullptr}, {"decoder", nullptr},
          {"model", model}};
}

inline Tokenizer from_doc(const nlohmann::json& doc, const std::string& name = "tiny/tokenizer.json") {
  return Tokenizer::from_json_string(doc.dump(), name);
}

// Token strings of an encoding without special tokens.
inline std::vector<std::string> pieces(const Tokenizer& t, const std::string& text) {
  return t.encode_with_tokens(text, false).tokens;
}

using Strings = std::vector<std::string>;

}  // namespace kvscope::test
