// Runs one tokenizer component (normalizer, pre-tokenizer, decoder) built
// from a JSON config on a string, for the component tests.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tokenizer/decoders.h"
#include "tokenizer/json_field.h"
#include "tokenizer/normalizers.h"
#include "tokenizer/pre_tokenizers.h"

namespace kvscope::test {

using Strings = std::vector<std::string>;

inline std::string normalize(const nlohmann::json& cfg, std::string text) {
  const std::string source = "components.json";
  auto n = tok::parse_normalizer(tok::JsonField(cfg, source, "normalizer"));
  n->normalize(text);
  return text;
}

inline Strings pre_tokenize(const nlohmann::json& cfg, const std::string& text) {
  const std::string source = "components.json";
  auto p = tok::parse_pre_tokenizer(tok::JsonField(cfg, source, "pre_tokenizer"));
  tok::Pieces pieces{tok::Piece{text, text.empty() ? 0u : 1u, -1}};
  p->pre_tokenize(pieces);
  Strings out;
  for (const tok::Piece& piece : pieces) out.push_back(piece.text);
  return out;
}

inline std::string decode(const nlohmann::json& cfg, Strings tokens) {
  const std::string source = "components.json";
  auto d = tok::parse_decoder(tok::JsonField(cfg, source, "decoder"));
  d->decode_chain(tokens);
  std::string out;
  for (const auto& t : tokens) out += t;
  return out;
}

}  // namespace kvscope::test
