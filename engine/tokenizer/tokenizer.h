// Hugging Face tokenizer.json, read and run in C++ with the same results as
// HF `tokenizers` 0.23 (ids, token strings and decoded text) for BPE models:
// byte-level ones (GPT-2, GPT-NeoX, Llama-3, Qwen2) and SentencePiece-style
// ones (Llama-2, Mistral). See engine/tokenizer/*.h for each stage.
//
// Encoding runs HF's pipeline: added tokens are split out of the raw text,
// the rest is normalized, pre-tokenized into words, each word is BPE-merged,
// and the post-processor adds BOS/EOS when add_special_tokens is true.
// Those stages are internal, in namespace kvscope::tok.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kvscope {

namespace tok {
class BpeModel;
class JsonField;
}  // namespace tok

// Ids together with HF's Encoding.tokens (the vocabulary string of each
// model token; for an added token, the text it matched).
struct Encoding {
  std::vector<int> ids;
  std::vector<std::string> tokens;
};

class Tokenizer {
 public:
  // Parses tokenizer.json; throws kvscope::Error naming path and field.
  static Tokenizer load(const std::filesystem::path& tokenizer_json);
  // Also usable from a string (tests, error messages use `source` as the file name).
  static Tokenizer from_json_string(const std::string& json, const std::string& source);
  // A tokenizer.json document without its "model", and the BPE model built
  // apart (from a GGUF file's metadata: hundreds of thousands of tokens and
  // merges that would take seconds to write out as JSON and read back).
  static Tokenizer with_model(const std::string& json, const std::string& source, std::unique_ptr<tok::BpeModel> model);

  // Invalid UTF-8 in `text` is first replaced by U+FFFD (HF only ever sees
  // valid strings). Thread-safe.
  std::vector<int> encode(std::string_view text, bool add_special_tokens = true) const;
  Encoding encode_with_tokens(std::string_view text, bool add_special_tokens = true) const;

  // Ids the vocabulary does not know are skipped, as HF does.
  std::string decode(std::span<const int> ids, bool skip_special_tokens = false) const;

  // The vocabulary string of one id (e.g. "Ġthe", "▁the", "<0x0A>",
  // "<|endoftext|>"); for an added token with normalized=true, its normalized
  // form, like HF's id_to_token. Throws kvscope::Error for unknown ids.
  // The view lives as long as the tokenizer.
  std::string_view piece(int id) const;
  // Text of one token as it would decode alone (for display): decode({id}).
  std::string token_text(int id) const;
  int vocab_size() const;  // max id + 1 over model vocab and added tokens
  std::optional<int> token_id(std::string_view piece) const;  // model vocab or added token
  bool is_special(int id) const;  // added token with special=true
  // Ids the post-processor adds around the text when add_special_tokens is
  // true (e.g. BOS for Llama: prefix_ids() == {1}); empty when none.
  std::vector<int> prefix_ids() const;
  std::vector<int> suffix_ids() const;
  // The file name (or source string) this tokenizer was read from.
  const std::string& source() const;

 private:
  struct Impl;
  explicit Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  // The stages a document names, around `model`.
  static Tokenizer assemble(const tok::JsonField& root, std::unique_ptr<tok::BpeModel> model);
  // Immutable after loading, so copies and moves only share a pointer and
  // concurrent const calls need no locking (the BPE word cache guards itself).
  std::shared_ptr<const Impl> impl_;
};

}  // namespace kvscope
