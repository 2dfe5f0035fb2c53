#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "tokenizer/added_vocabulary.h"
#include "tokenizer/bpe_model.h"
#include "tokenizer/decoders.h"
#include "tokenizer/json_field.h"
#include "tokenizer/normalizers.h"
#include "tokenizer/post_processor.h"
#include "tokenizer/pre_tokenizers.h"
#include "tokenizer/streamed_bpe.h"
#include "tokenizer/utf8.h"

namespace kvscope {

// The pipeline stages live in kvscope::tok, so their short names (Regex,
// Piece, Span, ...) cannot clash with other engine modules.
using namespace tok;

struct Tokenizer::Impl {
  std::string source;
  std::unique_ptr<const Normalizer> normalizer;
  std::unique_ptr<const PreTokenizer> pre_tokenizer;
  std::unique_ptr<const Decoder> decoder;
  std::unique_ptr<BpeModel> model;
  AddedVocabulary added;
  PostProcessing post;
};

Tokenizer Tokenizer::load(const std::filesystem::path& tokenizer_json) {
  const std::string name = tokenizer_json.string();
  std::error_code ec;
  if (std::filesystem::is_directory(tokenizer_json, ec)) throw Error(name, "", "is a directory, not a file");
  std::ifstream in(tokenizer_json, std::ios::binary);
  if (!in) throw Error(name, "", std::string("cannot open file: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw Error(name, "", "read error");
  return from_json_string(text.str(), name);
}

namespace {

// The model's vocabulary and merges are taken out while parsing, into
// `taken` (as members of the tree they would cost seconds for a large
// vocabulary).
nlohmann::json parse_document(const std::string& json, const std::string& source, StreamedBpe& taken) {
  nlohmann::json doc;
  try {
    doc = parse_streaming_bpe(json, taken);
  } catch (const nlohmann::json::exception& e) {
    throw Error(source, "", std::string("invalid JSON: ") + e.what());
  }
  if (!doc.is_object()) throw Error(source, "", "expected a JSON object at the top level");
  return doc;
}

}  // namespace

Tokenizer Tokenizer::from_json_string(const std::string& json, const std::string& source) {
  StreamedBpe taken;
  const nlohmann::json doc = parse_document(json, source, taken);
  JsonField root(doc, source, "");
  JsonField model = root["model"];
  model.require_object();
  // Very old files leave out the model type; HF then guesses from the fields.
  if (!model.get("type") && !model.get("merges")) model.fail_member("type", "missing");
  std::string type = model.get("type") ? model.type() : "BPE";
  if (type != "BPE")
    model.fail_member("type", "unsupported model \"" + type + "\" (only BPE is supported)");
  return assemble(root, BpeModel::parse(model, taken));
}

Tokenizer Tokenizer::with_model(const std::string& json, const std::string& source,
                                std::unique_ptr<tok::BpeModel> model) {
  StreamedBpe taken;
  const nlohmann::json doc = parse_document(json, source, taken);
  JsonField root(doc, source, "");
  if (root.get("model")) root.fail_member("model", "given apart; the document must not have one");
  return assemble(root, std::move(model));
}

Tokenizer Tokenizer::assemble(const tok::JsonField& root, std::unique_ptr<tok::BpeModel> model) {
  auto impl = std::make_shared<Impl>();
  impl->source = root.source();
  impl->model = std::move(model);
  if (auto n = root.get("normalizer")) impl->normalizer = parse_normalizer(*n);
  if (auto p = root.get("pre_tokenizer")) impl->pre_tokenizer = parse_pre_tokenizer(*p);
  if (auto d = root.get("decoder")) impl->decoder = parse_decoder(*d);
  if (auto p = root.get("post_processor")) impl->post = parse_post_processor(*p);
  if (auto a = root.get("added_tokens"))
    impl->added = AddedVocabulary::parse(*a, *impl->model, impl->normalizer.get());
  // "truncation" and "padding" are ignored: kvscope always wants every id.
  return Tokenizer(std::move(impl));
}

Encoding Tokenizer::encode_with_tokens(std::string_view text, bool add_special_tokens) const {
  const Impl& m = *impl_;
  std::string repaired;
  if (!utf8::is_valid(text)) {
    repaired = utf8::lossy(text);
    text = repaired;
  }
  Pieces pieces = m.added.extract_and_normalize(text, m.normalizer.get());
  if (m.pre_tokenizer) m.pre_tokenizer->pre_tokenize(pieces);

  Encoding enc;
  if (add_special_tokens) {
    for (const SpecialPiece& s : m.post.prefix) {
      enc.ids.push_back(s.id);
      enc.tokens.push_back(s.token);
    }
  }
  for (Piece& p : pieces) {
    if (p.added_id >= 0) {
      enc.ids.push_back(p.added_id);
      enc.tokens.push_back(std::move(p.text));
      continue;
    }
    const size_t before = enc.ids.size();
    m.model->tokenize(p.text, enc.ids);
    for (size_t i = before; i < enc.ids.size(); ++i) enc.tokens.emplace_back(*m.model->id_to_token(enc.ids[i]));
  }
  if (add_special_tokens) {
    for (const SpecialPiece& s : m.post.suffix) {
      enc.ids.push_back(s.id);
      enc.tokens.push_back(s.token);
    }
  }
  return enc;
}

std::vector<int> Tokenizer::encode(std::string_view text, bool add_special_tokens) const {
  return encode_with_tokens(text, add_special_tokens).ids;
}

std::string Tokenizer::decode(std::span<const int> ids, bool skip_special_tokens) const {
  const Impl& m = *impl_;
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int id : ids) {
    std::optional<std::string_view> s = m.model->id_to_token(id);
    if (const AddedToken* t = m.added.by_id(id)) s = t->decode_text;  // an added token's own text wins
    if (!s) continue;
    // HF tests "special" on the string, not the id.
    if (skip_special_tokens && m.added.is_special_content(*s)) continue;
    tokens.emplace_back(*s);
  }
  std::string out;
  if (m.decoder) {
    m.decoder->decode_chain(tokens);
    for (const std::string& t : tokens) out += t;
  } else {
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (i) out += ' ';
      out += tokens[i];
    }
  }
  return out;
}

std::string_view Tokenizer::piece(int id) const {
  if (const AddedToken* t = impl_->added.by_id(id)) return t->decode_text;
  if (auto s = impl_->model->id_to_token(id)) return *s;
  throw Error(impl_->source, "", "token id " + std::to_string(id) + " is not in the vocabulary");
}

std::string Tokenizer::token_text(int id) const { return decode(std::span<const int>(&id, 1)); }

int Tokenizer::vocab_size() const {
  return std::max(impl_->model->max_id(), impl_->added.max_id()) + 1;
}

std::optional<int> Tokenizer::token_id(std::string_view piece) const {
  if (auto id = impl_->added.id_of(piece)) return id;
  return impl_->model->token_to_id(piece);
}

bool Tokenizer::is_special(int id) const {
  const AddedToken* t = impl_->added.by_id(id);
  return t && t->special;
}

std::vector<int> Tokenizer::prefix_ids() const {
  std::vector<int> ids;
  for (const SpecialPiece& s : impl_->post.prefix) ids.push_back(s.id);
  return ids;
}

std::vector<int> Tokenizer::suffix_ids() const {
  std::vector<int> ids;
  for (const SpecialPiece& s : impl_->post.suffix) ids.push_back(s.id);
  return ids;
}

const std::string& Tokenizer::source() const { return impl_->source; }

}  // namespace kvscope
