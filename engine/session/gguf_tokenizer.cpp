#include "session/gguf_tokenizer.h"

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "tokenizer/byte_level_alphabet.h"
#include "tokenizer/utf8.h"

namespace kvscope {

namespace {

// The split patterns transformers attaches to named llama.cpp pre-tokenizers
// (facts from transformers' GGUF tokenizer mapping); any other name keeps
// the GPT-2 split of the plain ByteLevel pre-tokenizer, as transformers does.
const char* const kLlama3Split =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kQwen2Split =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kQwen35Split =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kTekkenSplit =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+)"
    R"(|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*)"
    R"(|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kGpt4oSplit =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

const char* split_for(const std::string& pre) {
  static const std::pair<const char*, const char*> table[] = {
      {"llama3", kLlama3Split},     {"llama-v3", kLlama3Split}, {"llama-bpe", kLlama3Split},
      {"falcon3", kLlama3Split},    {"falcon-h1", kLlama3Split}, {"pixtral", kLlama3Split},
      {"midm-2.0", kLlama3Split},   {"lfm2", kLlama3Split},     {"jina-v5-nano", kLlama3Split},
      {"dbrx", kLlama3Split},       {"smaug-bpe", kLlama3Split}, {"tekken", kTekkenSplit},
      {"qwen2", kQwen2Split},       {"deepseek-r1-qwen", kQwen2Split}, {"kormo", kQwen2Split},
      {"f2llmv2", kQwen2Split},     {"megrez", kQwen2Split},    {"qwen35", kQwen35Split},
      {"gpt-4o", kGpt4oSplit},      {"llama4", kGpt4oSplit},    {"kanana2", kGpt4oSplit},
      {"talkie", kGpt4oSplit},      {"minimax-m2", kGpt4oSplit},
  };
  for (const auto& [name, split] : table)
    if (pre == name) return split;
  return nullptr;
}

bool in_byte_alphabet(const std::string& token) {
  for (std::size_t i = 0; i < token.size();)
    if (!tok::byte_level::byte_of(tok::utf8::decode(token, i))) return false;
  return true;
}

const std::vector<std::string>& string_array(const GgufFile& f, const std::string& key) {
  const GgufValue* v = f.find(key);
  if (!v) throw Error(f.source(), key, "missing (kvscope builds the tokenizer from it)");
  if (!v->is_array() || v->element_type != GgufValueType::String)
    throw Error(f.source(), key, "expected an array of strings");
  return v->strings;
}

}  // namespace

std::string gguf_tokenizer_json(const GgufFile& f) {
  const std::string kind = f.get_string_if("tokenizer.ggml.model").value_or("");
  if (kind != "gpt2")
    throw Error(f.source(), "tokenizer.ggml.model",
                kind.empty() ? "missing (kvscope builds the tokenizer from it)"
                             : "tokenizer kind \"" + kind + "\" is not supported in GGUF files (\"gpt2\", byte-level BPE, is)");
  const auto& tokens = string_array(f, "tokenizer.ggml.tokens");
  const auto& merges = string_array(f, "tokenizer.ggml.merges");
  std::vector<int64_t> types;
  if (const GgufValue* t = f.find("tokenizer.ggml.token_type")) {
    if (!t->is_array() || t->integers.size() != tokens.size())
      throw Error(f.source(), "tokenizer.ggml.token_type",
                  "expected one integer per token (" + std::to_string(tokens.size()) + ")");
    types = t->integers;
  }

  // The vocabulary in the byte alphabet: a token written with other
  // characters is respelled byte by byte, as transformers does. A token that
  // appears twice keeps its last id (a dict built in order).
  nlohmann::json vocab = nlohmann::json::object();
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (!tok::utf8::is_valid(t))
      throw Error(f.source(), "tokenizer.ggml.tokens[" + std::to_string(i) + "]", "not valid UTF-8");
    vocab[in_byte_alphabet(t) ? t : tok::byte_level::encode(t)] = i;
  }
  nlohmann::json merge_list = nlohmann::json::array();
  for (std::size_t i = 0; i < merges.size(); ++i) {
    const std::string& m = merges[i];
    const auto sp = m.find(' ');
    if (sp == std::string::npos || m.find(' ', sp + 1) != std::string::npos)
      throw Error(f.source(), "tokenizer.ggml.merges[" + std::to_string(i) + "]",
                  "expected two tokens separated by one space");
    merge_list.push_back({m.substr(0, sp), m.substr(sp + 1)});
  }

  nlohmann::json added = nlohmann::json::array();
  for (std::size_t i = 0; i < types.size(); ++i) {
    // 3 = control (special, e.g. <|endoftext|>), 4 = user-defined (added,
    // not special). A control token outside the byte alphabet is a llama.cpp
    // mislabel that transformers skips.
    const bool control = types[i] == 3 && in_byte_alphabet(tokens[i]);
    const bool user = types[i] == 4 && vocab.contains(tokens[i]);
    if (!control && !user) continue;
    added.push_back({{"id", vocab[tokens[i]]}, {"content", tokens[i]}, {"single_word", false}, {"lstrip", false},
                     {"rstrip", false}, {"normalized", false}, {"special", control}});
  }

  nlohmann::json byte_level = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true},
                               {"use_regex", true}};
  nlohmann::json pre = byte_level;
  const std::string pre_name = f.get_string_if("tokenizer.ggml.pre").value_or("");
  if (const char* split = split_for(pre_name)) {
    nlohmann::json bl = byte_level;
    bl["use_regex"] = false;
    pre = {{"type", "Sequence"},
           {"pretokenizers",
            {{{"type", "Split"}, {"pattern", {{"Regex", split}}}, {"behavior", "Isolated"}, {"invert", false}}, bl}}};
  }

  // BOS in front when the file asks for it (tokenizer.ggml.add_bos_token).
  nlohmann::json single = nlohmann::json::array({{{"Sequence", {{"id", "A"}, {"type_id", 0}}}}});
  nlohmann::json pair = nlohmann::json::array(
      {{{"Sequence", {{"id", "A"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "B"}, {"type_id", 1}}}}});
  nlohmann::json special_tokens = nlohmann::json::object();
  if (f.get_bool_if("tokenizer.ggml.add_bos_token").value_or(false)) {
    const auto bos = f.get_int_if("tokenizer.ggml.bos_token_id");
    if (!bos || *bos < 0 || static_cast<std::size_t>(*bos) >= tokens.size())
      throw Error(f.source(), "tokenizer.ggml.bos_token_id", "add_bos_token is set but the BOS id is missing or out of range");
    const std::string& b = tokens[static_cast<std::size_t>(*bos)];
    nlohmann::json bos_piece = {{"SpecialToken", {{"id", b}, {"type_id", 0}}}};
    single.insert(single.begin(), bos_piece);
    pair = nlohmann::json::array({bos_piece, pair[0], {{"SpecialToken", {{"id", b}, {"type_id", 1}}}}, pair[1]});
    special_tokens[b] = {{"id", b}, {"ids", {*bos}}, {"tokens", {b}}};
  }

  nlohmann::json doc = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", added},
      {"normalizer", nullptr},
      {"pre_tokenizer", pre},
      {"post_processor", {{"type", "TemplateProcessing"}, {"single", single}, {"pair", pair}, {"special_tokens", special_tokens}}},
      {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}}},
      {"model",
       {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"continuing_subword_prefix", ""},
        {"end_of_word_suffix", ""}, {"fuse_unk", false}, {"byte_fallback", false}, {"ignore_merges", false},
        {"vocab", vocab}, {"merges", merge_list}}},
  };
  return doc.dump();
}

}  // namespace kvscope
