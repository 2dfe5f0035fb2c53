#include "bundle/gguf_tokenizer.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "tokenizer/bpe_model.h"
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

// tokenizer.ggml.tokens, no more of them than a token id can number.
const std::vector<std::string>& token_list(const GgufFile& f) {
  const auto& tokens = string_array(f, "tokenizer.ggml.tokens");
  if (tokens.size() > static_cast<std::size_t>(tok::BpeModel::kMaxId) + 1)
    throw Error(
        f.source(), "tokenizer.ggml.tokens",
        std::to_string(tokens.size()) + " tokens; kvscope reads at most " + std::to_string(tok::BpeModel::kMaxId + 1));
  return tokens;
}

// A BPE vocabulary in id order as transformers builds it from the file (its
// tokens, respelled where the tokenizer class does), and each spelling's id:
// a spelling listed twice keeps its last id, as the Python dict does.
class Vocabulary {
 public:
  explicit Vocabulary(std::vector<std::string> tokens) : tokens_(std::move(tokens)) {
    std::size_t bytes = 0;
    for (const std::string& t : tokens_) bytes += t.size();
    table_.reserve(tokens_.size(), bytes);
    for (std::size_t i = 0; i < tokens_.size(); ++i) table_.add(tokens_[i], static_cast<int>(i));
  }

  const std::vector<std::string>& tokens() const { return tokens_; }
  std::optional<int> id(std::string_view token) const { return table_.find(token); }
  // What the vocabulary maps, without the ids a repeated spelling lost.
  std::size_t distinct() const { return table_.size(); }
  const tok::TokenTable& table() const { return table_; }
  // The table, for the model; the vocabulary is spent.
  tok::TokenTable take_table() { return std::move(table_); }

 private:
  std::vector<std::string> tokens_;
  tok::TokenTable table_;
};

// tokenizer.ggml.merges, each "left right" naming two tokens whose
// concatenation is a token too.
std::vector<tok::BpeMerge> merges_from_metadata(const GgufFile& f, const Vocabulary& vocab) {
  const auto& merges = string_array(f, "tokenizer.ggml.merges");
  std::vector<tok::BpeMerge> out;
  out.reserve(merges.size());
  for (std::size_t i = 0; i < merges.size(); ++i) {
    const std::string_view m = merges[i];
    const std::string field = "tokenizer.ggml.merges[" + std::to_string(i) + "]";
    const auto sp = m.find(' ');
    if (sp == std::string::npos || m.find(' ', sp + 1) != std::string::npos)
      throw Error(f.source(), field, "expected two tokens separated by one space");
    auto merge =
        tok::BpeModel::resolve_merge(vocab.table(), m.substr(0, sp), m.substr(sp + 1), "", "tokenizer.ggml.tokens");
    if (const auto* problem = std::get_if<std::string>(&merge)) throw Error(f.source(), field, *problem);
    out.push_back(std::get<tok::BpeMerge>(merge));
  }
  return out;
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

// The tokenizer transformers builds from a GGUF vocabulary: no truncation
// or padding, the stages that differ given as tokenizer.json parts, and the
// BPE model built from the vocabulary and merges directly (hundreds of
// thousands of entries for a large model: written out as JSON and read back
// they took seconds and hundreds of MB).
Tokenizer build_tokenizer(const GgufFile& f, nlohmann::json added, nlohmann::json normalizer, nlohmann::json pre,
                          nlohmann::json post, nlohmann::json decoder, tok::BpeOptions options, Vocabulary& vocab,
                          tok::BpeMerges merges) {
  nlohmann::json head = nlohmann::json::object();
  head["version"] = "1.0";
  head["truncation"] = nullptr;
  head["padding"] = nullptr;
  head["added_tokens"] = std::move(added);
  head["normalizer"] = std::move(normalizer);
  head["pre_tokenizer"] = std::move(pre);
  head["post_processor"] = std::move(post);
  head["decoder"] = std::move(decoder);
  auto model = std::make_unique<tok::BpeModel>(f.source(), std::move(options), vocab.take_table(), std::move(merges));
  return Tokenizer::with_model(head.dump(), f.source(), std::move(model));
}

// The transformers class a SentencePiece ("llama") vocabulary is handed to:
// LlamaTokenizer, GemmaTokenizer for the Gemma architectures (gemma, gemma2,
// gemma3), or for phi3 a LlamaTokenizer whose prefix space comes from a
// normalizer (transformers 5.23.0's phi3_tokenizer), which transformers picks
// by general.architecture.
enum class SentencePieceClass { Llama, Gemma, Phi3 };

SentencePieceClass sentencepiece_class(const GgufFile& f) {
  const std::string arch = f.get_string_if("general.architecture").value_or("");
  if (arch == "phi3") return SentencePieceClass::Phi3;
  return arch == "gemma" || arch == "gemma2" || arch == "gemma3" ? SentencePieceClass::Gemma
                                                                 : SentencePieceClass::Llama;
}

// Python's str.isspace: Rust's White_Space set plus the separators
// U+001C..U+001F.
bool python_space(char32_t c) { return tok::utf8::is_whitespace(c) || (c >= 0x1C && c <= 0x1F); }

// Gemma files store a token of spaces as real spaces ("  "), which
// GemmaTokenizer's normalizer never leaves in the text; transformers respells
// every token that contains a space and is all whitespace (" " in t and not
// t.strip()) as that many U+2581, one per code point (a tab or newline among
// the spaces becomes one too).
std::string gemma_spelling(const std::string& t) {
  bool has_space = false;
  std::size_t n = 0;
  for (std::size_t i = 0; i < t.size(); ++n) {
    const char32_t c = tok::utf8::decode(t, i);
    if (!python_space(c)) return t;
    has_space |= c == U' ';
  }
  if (!has_space) return t;
  std::string out;
  out.reserve(3 * n);
  for (std::size_t k = 0; k < n; ++k) out += "\u2581";
  return out;
}

// The added tokens transformers ends up with for a SentencePiece vocabulary,
// in the order it adds them, each only when its content is not added yet:
// the tokenizer class's own special tokens (its constructor registers them,
// e.g. "<s>" and "</s>" for LlamaTokenizer even when the vocabulary lacks
// them), control tokens (type 3, special), user-defined tokens (type 4, not
// special) whose file spelling the vocabulary knows, then the special tokens
// the metadata names (bos, eos, unk, pad). Contents are the file's
// spellings; one the vocabulary lacks gets a new id the way tokenizers'
// AddedVocabulary gives it (after the vocabulary and the added ids).
nlohmann::json sentencepiece_added_tokens(const GgufFile& f, const std::vector<std::string>& file_tokens,
                                          const Vocabulary& vocab, std::initializer_list<const char*> class_specials) {
  const std::vector<int64_t> types = token_types(f, file_tokens.size());
  std::unordered_map<std::string, std::pair<int64_t, bool>> added;  // content -> (id, special)
  int64_t max_added = -1;
  auto add = [&](const std::string& content, bool special) {
    if (content.empty() || added.count(content)) return;
    int64_t id;
    if (auto known = vocab.id(content)) {
      id = *known;
    } else {
      const auto n = static_cast<int64_t>(vocab.distinct());
      id = max_added >= n ? max_added + 1 : n;
    }
    added.emplace(content, std::pair{id, special});
    max_added = std::max(max_added, id);
  };
  for (const char* t : class_specials) add(t, true);
  for (std::size_t i = 0; i < types.size(); ++i)
    if (types[i] == 3) add(file_tokens[i], true);
  for (std::size_t i = 0; i < types.size(); ++i)
    if (types[i] == 4 && vocab.id(file_tokens[i])) add(file_tokens[i], false);
  for (const char* key : {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
                          "tokenizer.ggml.unknown_token_id", "tokenizer.ggml.padding_token_id"})
    if (auto id = f.get_int_if(key); id && *id >= 0 && static_cast<std::size_t>(*id) < file_tokens.size())
      add(file_tokens[static_cast<std::size_t>(*id)], true);

  nlohmann::json out = nlohmann::json::array();
  for (const auto& [content, entry] : added) out.push_back(added_token(entry.first, content, entry.second));
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a["id"] < b["id"]; });
  return out;
}

// tokenizer.ggml.model = "llama": a SentencePiece BPE vocabulary, built as
// transformers' LlamaTokenizer (Metaspace, byte fallback, no normalizer,
// merges from the file or its scores) or, for Gemma, GemmaTokenizer: the
// whitespace tokens respelled, merges ordered by the tokens' positions
// instead of the file's scores, spaces turned into U+2581 by a normalizer (so
// its Split on " " finds none left: the text between added tokens is one
// word), "<unk>" as the model's unknown token, no leading space added or
// stripped, and its own special tokens.
Tokenizer sentencepiece_tokenizer(const GgufFile& f, SentencePieceClass cls) {
  const bool gemma = cls == SentencePieceClass::Gemma;
  const auto& file_tokens = token_list(f);
  std::vector<std::string> spelled;
  spelled.reserve(file_tokens.size());
  for (std::size_t i = 0; i < file_tokens.size(); ++i) {
    if (!tok::utf8::is_valid(file_tokens[i]))
      throw Error(f.source(), "tokenizer.ggml.tokens[" + std::to_string(i) + "]", "not valid UTF-8");
    spelled.push_back(gemma ? gemma_spelling(file_tokens[i]) : file_tokens[i]);
  }
  Vocabulary vocab(std::move(spelled));
  // Without listed merges, those transformers' generate_merges recovers from
  // the scores, ranked on demand (tokenizer/score_merges.h).
  tok::BpeMerges merges;
  if (f.find("tokenizer.ggml.merges")) {
    merges = tok::MergeTable(merges_from_metadata(f, vocab));
  } else if (gemma) {
    // Gemma's scores do not follow its merge order; the tokens' positions do.
    merges = tok::ScoreMerges::of_listing(vocab.tokens(), vocab.table(), {});
  } else {
    const GgufValue* sc = f.find("tokenizer.ggml.scores");
    if (!sc || !sc->is_array() || sc->reals.size() != file_tokens.size())
      throw Error(f.source(), "tokenizer.ggml.scores",
                  "expected one score per token (a SentencePiece vocabulary without merges needs them)");
    for (std::size_t i = 0; i < sc->reals.size(); ++i)
      if (std::isnan(sc->reals[i]))
        throw Error(f.source(), "tokenizer.ggml.scores[" + std::to_string(i) + "]",
                    "not a number (the merges are ordered by the scores)");
    merges = tok::ScoreMerges::of_listing(vocab.tokens(), vocab.table(), sc->reals);
  }
  const nlohmann::json added =
      gemma ? sentencepiece_added_tokens(f, file_tokens, vocab, {"<bos>", "<eos>", "<unk>", "<pad>", "<mask>"})
            : sentencepiece_added_tokens(f, file_tokens, vocab, {"<s>", "</s>", "<unk>"});

  const bool phi3 = cls == SentencePieceClass::Phi3;
  nlohmann::json pre = gemma ? nlohmann::json{{"type", "Split"}, {"pattern", {{"String", " "}}},
                                              {"behavior", "MergedWithPrevious"}, {"invert", false}}
                             : nlohmann::json{{"type", "Metaspace"}, {"replacement", "\u2581"},
                                              {"prepend_scheme", "first"}, {"split", false}};
  nlohmann::json normalizer =
      gemma ? nlohmann::json{{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}} : nullptr;
  if (phi3) {
    // Phi-3: U+2581 prepended to every text and every space respelled by a
    // normalizer, no pre-tokenizer; it differs from Metaspace only on text
    // that starts with a space ("  hi" -> three U+2581, not two).
    pre = nullptr;
    normalizer = {{"type", "Sequence"},
                  {"normalizers",
                   {{{"type", "Prepend"}, {"prepend", "\u2581"}},
                    {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}}}}};
  }
  if (auto split = named_split(f)) pre = *split;
  // llama.cpp adds BOS to a SentencePiece vocabulary unless the file says
  // otherwise, and transformers follows.
  const bool add_bos = f.get_bool_if("tokenizer.ggml.add_bos_token").value_or(true);
  nlohmann::json decoders = {{{"type", "Replace"}, {"pattern", {{"String", "\u2581"}}}, {"content", " "}},
                             {{"type", "ByteFallback"}},
                             {{"type", "Fuse"}}};
  if (!gemma) decoders.push_back({{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}});
  tok::BpeOptions options;
  if (gemma) options.unk_token = "<unk>";
  options.fuse_unk = true;
  options.byte_fallback = true;
  return build_tokenizer(f, added, normalizer, pre, post_processor(f, file_tokens, add_bos),
                         {{"type", "Sequence"}, {"decoders", decoders}}, std::move(options), vocab, std::move(merges));
}

}  // namespace

Tokenizer gguf_tokenizer(const GgufFile& f) {
  const std::string kind = f.get_string_if("tokenizer.ggml.model").value_or("");
  if (kind == "llama") return sentencepiece_tokenizer(f, sentencepiece_class(f));
  if (kind != "gpt2")
    throw Error(f.source(), "tokenizer.ggml.model",
                kind.empty() ? "missing (kvscope builds the tokenizer from it)"
                             : "tokenizer kind \"" + kind +
                                   "\" is not supported in GGUF files (\"gpt2\", byte-level BPE, and \"llama\", "
                                   "SentencePiece BPE, are)");
  const auto& tokens = token_list(f);
  const std::vector<int64_t> types = token_types(f, tokens.size());

  // The vocabulary in the byte alphabet: a token written with other
  // characters is respelled byte by byte, as transformers does.
  std::vector<std::string> spelled;
  spelled.reserve(tokens.size());
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (!tok::utf8::is_valid(t))
      throw Error(f.source(), "tokenizer.ggml.tokens[" + std::to_string(i) + "]", "not valid UTF-8");
    spelled.push_back(in_byte_alphabet(t) ? t : tok::byte_level::encode(t));
  }
  Vocabulary vocab(std::move(spelled));
  tok::MergeTable merges(merges_from_metadata(f, vocab));

  nlohmann::json added = nlohmann::json::array();
  for (std::size_t i = 0; i < types.size(); ++i) {
    // 3 = control (special, e.g. <|endoftext|>), 4 = user-defined (added,
    // not special). A control token outside the byte alphabet is a llama.cpp
    // mislabel that transformers skips.
    const bool control = types[i] == 3 && in_byte_alphabet(tokens[i]);
    const auto id = vocab.id(tokens[i]);
    const bool user = types[i] == 4 && id;
    if (!control && !user) continue;
    added.push_back(added_token(*id, tokens[i], control));
  }

  nlohmann::json pre = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
  if (auto split = named_split(f)) pre = *split;
  return build_tokenizer(
      f, added, nullptr, pre, post_processor(f, tokens, f.get_bool_if("tokenizer.ggml.add_bos_token").value_or(false)),
      {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}},
      tok::BpeOptions{}, vocab, std::move(merges));
}

}  // namespace kvscope
