#include "session/gguf_tokenizer.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

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

std::size_t code_points(const std::string& s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size();) {
    tok::utf8::decode(s, i);
    ++n;
  }
  return n;
}

// Merges recovered from a SentencePiece vocabulary's scores, the way
// transformers' generate_merges does it: every split of every token into two
// tokens of the vocabulary, ordered within a token by the pieces' ids, then
// all of them by (score, left length, right length) descending, ties kept
// in that order. Lengths count code points, as Python's len.
nlohmann::json merges_from_scores(const std::vector<std::string>& tokens, const std::vector<double>& scores,
                                  const std::unordered_map<std::string, int64_t>& id_of) {
  // dict(zip(tokens, scores)): first occurrence sets the order, the last the score.
  std::vector<std::size_t> order;
  std::unordered_map<std::string, double> score_of;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (!score_of.count(tokens[i])) order.push_back(i);
    score_of[tokens[i]] = scores[i];
  }
  struct Merge {
    std::string left, right;
    double score;
    std::size_t left_len, right_len;
  };
  std::vector<Merge> all;
  std::vector<Merge> local;
  for (std::size_t i : order) {
    const std::string& t = tokens[i];
    local.clear();
    std::size_t at = 0;
    tok::utf8::decode(t, at);  // splits start after the first character
    for (; at < t.size();) {
      const std::string l = t.substr(0, at), r = t.substr(at);
      if (id_of.count(l) && id_of.count(r)) local.push_back({l, r, score_of[t], code_points(l), code_points(r)});
      tok::utf8::decode(t, at);
    }
    std::stable_sort(local.begin(), local.end(), [&](const Merge& a, const Merge& b) {
      const int64_t al = id_of.at(a.left), bl = id_of.at(b.left);
      return al != bl ? al < bl : id_of.at(a.right) < id_of.at(b.right);
    });
    all.insert(all.end(), local.begin(), local.end());
  }
  std::stable_sort(all.begin(), all.end(), [](const Merge& a, const Merge& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.left_len != b.left_len) return a.left_len > b.left_len;
    return a.right_len > b.right_len;
  });
  nlohmann::json out = nlohmann::json::array();
  for (const Merge& m : all) out.push_back({m.left, m.right});
  return out;
}

nlohmann::json merges_from_metadata(const GgufFile& f, const std::vector<std::string>& merges) {
  nlohmann::json merge_list = nlohmann::json::array();
  for (std::size_t i = 0; i < merges.size(); ++i) {
    const std::string& m = merges[i];
    const auto sp = m.find(' ');
    if (sp == std::string::npos || m.find(' ', sp + 1) != std::string::npos)
      throw Error(f.source(), "tokenizer.ggml.merges[" + std::to_string(i) + "]",
                  "expected two tokens separated by one space");
    merge_list.push_back({m.substr(0, sp), m.substr(sp + 1)});
  }
  return merge_list;
}

nlohmann::json added_token(int64_t id, const std::string& content, bool special) {
  return {{"id", id},          {"content", content}, {"single_word", false}, {"lstrip", false},
          {"rstrip", false},   {"normalized", false}, {"special", special}};
}

// The pre-tokenizer transformers puts on a vocabulary whose tokenizer.ggml.pre
// it knows: its split pattern, then bytes mapped (whatever the kind).
std::optional<nlohmann::json> named_split(const GgufFile& f) {
  const std::string pre_name = f.get_string_if("tokenizer.ggml.pre").value_or("");
  const char* split = split_for(pre_name);
  if (!split) return std::nullopt;
  nlohmann::json bl = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}};
  return nlohmann::json{
      {"type", "Sequence"},
      {"pretokenizers",
       {{{"type", "Split"}, {"pattern", {{"Regex", split}}}, {"behavior", "Isolated"}, {"invert", false}}, bl}}};
}

// TemplateProcessing with BOS in front when add_bos.
nlohmann::json post_processor(const GgufFile& f, const std::vector<std::string>& tokens, bool add_bos) {
  nlohmann::json single = nlohmann::json::array({{{"Sequence", {{"id", "A"}, {"type_id", 0}}}}});
  nlohmann::json pair = nlohmann::json::array(
      {{{"Sequence", {{"id", "A"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "B"}, {"type_id", 1}}}}});
  nlohmann::json special_tokens = nlohmann::json::object();
  if (add_bos) {
    const auto bos = f.get_int_if("tokenizer.ggml.bos_token_id");
    if (!bos || *bos < 0 || static_cast<std::size_t>(*bos) >= tokens.size())
      throw Error(f.source(), "tokenizer.ggml.bos_token_id", "BOS is to be added but its id is missing or out of range");
    const std::string& b = tokens[static_cast<std::size_t>(*bos)];
    nlohmann::json bos_piece = {{"SpecialToken", {{"id", b}, {"type_id", 0}}}};
    single.insert(single.begin(), bos_piece);
    pair = nlohmann::json::array({bos_piece, pair[0], {{"SpecialToken", {{"id", b}, {"type_id", 1}}}}, pair[1]});
    special_tokens[b] = {{"id", b}, {"ids", {*bos}}, {"tokens", {b}}};
  }
  return {{"type", "TemplateProcessing"}, {"single", single}, {"pair", pair}, {"special_tokens", special_tokens}};
}

std::vector<int64_t> token_types(const GgufFile& f, std::size_t n_tokens) {
  const GgufValue* t = f.find("tokenizer.ggml.token_type");
  if (!t) return {};
  if (!t->is_array() || t->integers.size() != n_tokens)
    throw Error(f.source(), "tokenizer.ggml.token_type", "expected one integer per token (" + std::to_string(n_tokens) + ")");
  return t->integers;
}

// A tokenizer.json document with no normalizer, truncation or padding (what
// transformers builds from any GGUF vocabulary); the parts that differ are
// given.
std::string tokenizer_document(nlohmann::json added, nlohmann::json pre, nlohmann::json post, nlohmann::json decoder,
                               nlohmann::json model) {
  const nlohmann::json doc = {
      {"version", "1.0"},        {"truncation", nullptr},     {"padding", nullptr},
      {"added_tokens", added},   {"normalizer", nullptr},     {"pre_tokenizer", pre},
      {"post_processor", post},  {"decoder", decoder},        {"model", model},
  };
  return doc.dump();
}

// tokenizer.ggml.model = "llama": a SentencePiece BPE vocabulary, built as
// transformers' LlamaTokenizer (Metaspace, byte fallback, no normalizer).
std::string sentencepiece_json(const GgufFile& f) {
  const auto& tokens = string_array(f, "tokenizer.ggml.tokens");
  nlohmann::json vocab = nlohmann::json::object();
  std::unordered_map<std::string, int64_t> id_of;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (!tok::utf8::is_valid(tokens[i]))
      throw Error(f.source(), "tokenizer.ggml.tokens[" + std::to_string(i) + "]", "not valid UTF-8");
    vocab[tokens[i]] = i;
    id_of[tokens[i]] = static_cast<int64_t>(i);
  }
  nlohmann::json merges;
  if (f.find("tokenizer.ggml.merges")) {
    merges = merges_from_metadata(f, string_array(f, "tokenizer.ggml.merges"));
  } else {
    const GgufValue* sc = f.find("tokenizer.ggml.scores");
    if (!sc || !sc->is_array() || sc->reals.size() != tokens.size())
      throw Error(f.source(), "tokenizer.ggml.scores",
                  "expected one score per token (a SentencePiece vocabulary without merges needs them)");
    merges = merges_from_scores(tokens, sc->reals, id_of);
  }
  const auto types = token_types(f, tokens.size());
  // Special: the tokens the BOS/EOS/unknown ids name, then every control token.
  nlohmann::json added = nlohmann::json::array();
  std::vector<bool> is_added(tokens.size(), false);
  auto add = [&](int64_t id, bool special) {
    if (id < 0 || static_cast<std::size_t>(id) >= tokens.size() || is_added[id]) return;
    is_added[id] = true;
    added.push_back(added_token(id_of[tokens[id]], tokens[id], special));
  };
  for (const char* key : {"tokenizer.ggml.unknown_token_id", "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id"})
    if (auto id = f.get_int_if(key)) add(*id, true);
  for (std::size_t i = 0; i < types.size(); ++i)
    if (types[i] == 3) add(static_cast<int64_t>(i), true);
  for (std::size_t i = 0; i < types.size(); ++i)
    if (types[i] == 4) add(static_cast<int64_t>(i), false);
  std::sort(added.begin(), added.end(), [](const auto& a, const auto& b) { return a["id"] < b["id"]; });

  nlohmann::json pre = {{"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", "first"}, {"split", false}};
  if (auto split = named_split(f)) pre = *split;
  // llama.cpp adds BOS to a SentencePiece vocabulary unless the file says
  // otherwise, and transformers follows.
  const bool add_bos = f.get_bool_if("tokenizer.ggml.add_bos_token").value_or(true);
  const nlohmann::json decoder = {
      {"type", "Sequence"},
      {"decoders",
       {{{"type", "Replace"}, {"pattern", {{"String", "\u2581"}}}, {"content", " "}},
        {{"type", "ByteFallback"}},
        {{"type", "Fuse"}},
        {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}};
  return tokenizer_document(
      added, pre, post_processor(f, tokens, add_bos), decoder,
      {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"continuing_subword_prefix", nullptr},
       {"end_of_word_suffix", nullptr}, {"fuse_unk", true}, {"byte_fallback", true}, {"ignore_merges", false},
       {"vocab", vocab}, {"merges", merges}});
}

}  // namespace

std::string gguf_tokenizer_json(const GgufFile& f) {
  const std::string kind = f.get_string_if("tokenizer.ggml.model").value_or("");
  if (kind == "llama") return sentencepiece_json(f);
  if (kind != "gpt2")
    throw Error(f.source(), "tokenizer.ggml.model",
                kind.empty() ? "missing (kvscope builds the tokenizer from it)"
                             : "tokenizer kind \"" + kind +
                                   "\" is not supported in GGUF files (\"gpt2\", byte-level BPE, and \"llama\", "
                                   "SentencePiece BPE, are)");
  const auto& tokens = string_array(f, "tokenizer.ggml.tokens");
  const std::vector<int64_t> types = token_types(f, tokens.size());

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
  const nlohmann::json merge_list = merges_from_metadata(f, string_array(f, "tokenizer.ggml.merges"));

  nlohmann::json added = nlohmann::json::array();
  for (std::size_t i = 0; i < types.size(); ++i) {
    // 3 = control (special, e.g. <|endoftext|>), 4 = user-defined (added,
    // not special). A control token outside the byte alphabet is a llama.cpp
    // mislabel that transformers skips.
    const bool control = types[i] == 3 && in_byte_alphabet(tokens[i]);
    const bool user = types[i] == 4 && vocab.contains(tokens[i]);
    if (!control && !user) continue;
    added.push_back(added_token(vocab[tokens[i]], tokens[i], control));
  }

  nlohmann::json pre = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
  if (auto split = named_split(f)) pre = *split;
  return tokenizer_document(
      added, pre, post_processor(f, tokens, f.get_bool_if("tokenizer.ggml.add_bos_token").value_or(false)),
      {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}},
      {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"continuing_subword_prefix", ""},
       {"end_of_word_suffix", ""}, {"fuse_unk", false}, {"byte_fallback", false}, {"ignore_merges", false},
       {"vocab", vocab}, {"merges", merge_list}});
}

}  // namespace kvscope
