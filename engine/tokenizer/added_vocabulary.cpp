#include "tokenizer/added_vocabulary.h"

#include <algorithm>

#include "tokenizer/regex.h"
#include "tokenizer/unicode_classes.h"
#include "tokenizer/utf8.h"

namespace kvscope::tok {

namespace {

// Rust regex's \w (Unicode word characters, Join_Control included), which HF
// uses for single_word. Compiled once, shared read-only.
bool is_word_char(char32_t c) {
  static const Regex word = Regex::compile("[" + unicode_classes::rust_word() + "]");
  std::string s = utf8::encode(c);
  return !word.find_all(s).empty();
}

char32_t last_char(std::string_view s) {
  size_t at = utf8::previous_char_start(s, s.size());
  return utf8::decode(s, at);
}

char32_t first_char(std::string_view s) {
  size_t i = 0;
  return utf8::decode(s, i);
}

}  // namespace

void AddedVocabulary::Trie::insert(std::string_view pattern, int token) {
  int node = 0;
  for (char ch : pattern) {
    auto b = static_cast<unsigned char>(ch);
    auto& kids = growing_[node].children;
    auto it = std::lower_bound(kids.begin(), kids.end(), b, [](const Edge& e, unsigned char v) { return e.first < v; });
    if (it != kids.end() && it->first == b) {
      node = it->second;
    } else {
      int fresh = static_cast<int>(growing_.size());
      kids.insert(it, {b, fresh});  // `kids` may dangle after the push below; not used again
      growing_.push_back(Growing{});
      node = fresh;
    }
  }
  if (growing_[node].token < 0) growing_[node].token = token;  // first of equal patterns wins
}

void AddedVocabulary::Trie::freeze() {
  nodes.assign(growing_.size(), Node{});
  edges.clear();
  for (std::size_t i = 0; i < growing_.size(); ++i) {
    nodes[i] = Node{static_cast<uint32_t>(edges.size()), static_cast<uint32_t>(growing_[i].children.size()),
                    growing_[i].token};
    edges.insert(edges.end(), growing_[i].children.begin(), growing_[i].children.end());
  }
  nodes.shrink_to_fit();
  edges.shrink_to_fit();
  std::vector<Growing>().swap(growing_);
}

std::pair<int, size_t> AddedVocabulary::Trie::longest_at(std::string_view text, size_t pos) const {
  int node = 0;
  std::pair<int, size_t> best{-1, 0};
  for (size_t i = pos; i < text.size(); ++i) {
    auto b = static_cast<unsigned char>(text[i]);
    const Node& n = nodes[node];
    const Edge* kids = edges.data() + n.first_edge;
    const Edge* it =
        std::lower_bound(kids, kids + n.edges, b, [](const Edge& e, unsigned char v) { return e.first < v; });
    if (it == kids + n.edges || it->first != b) break;
    node = it->second;
    if (nodes[node].token >= 0) best = {nodes[node].token, i + 1 - pos};
  }
  return best;
}

AddedVocabulary AddedVocabulary::parse(const JsonField& list, const BpeModel& model, const Normalizer* normalizer) {
  AddedVocabulary v;
  list.require_array();
  for (size_t i = 0; i < list.size(); ++i) {
    JsonField e = list.at(i);
    e.require_object();
    AddedToken t;
    JsonField id_field = e["id"];
    int64_t id = id_field.integer();
    if (id < 0 || id > BpeModel::kMaxId) id_field.fail("id " + std::to_string(id) + " out of range");
    t.id = static_cast<int>(id);
    t.content = e["content"].str();
    t.single_word = e.get_bool("single_word", false);
    t.lstrip = e.get_bool("lstrip", false);
    t.rstrip = e.get_bool("rstrip", false);
    t.normalized = e.get_bool("normalized", true);
    t.special = e.get_bool("special", false);
    if (t.content.empty()) continue;  // HF ignores empty added tokens

    // HF gives an added token the model's id when the model knows its
    // content. kvscope trusts the file's ids, so they must agree.
    if (auto model_id = model.token_to_id(t.content); model_id && *model_id != t.id)
      id_field.fail("id " + std::to_string(t.id) + " but model.vocab has " + in_quotes(t.content) + " as " +
                    std::to_string(*model_id));
    if (const auto other = model.id_to_token(t.id); other && *other != t.content)
      id_field.fail("id " + std::to_string(t.id) + " collides with model token " + in_quotes(*other));
    if (v.index_by_id_.count(t.id))
      id_field.fail("id " + std::to_string(t.id) + " is used by two added tokens");
    if (v.id_by_content_.count(t.content))
      e["content"].fail(in_quotes(t.content) + " appears twice in added_tokens");

    t.decode_text = t.content;
    if (t.normalized && normalizer) normalizer->normalize(t.decode_text);

    const int index = static_cast<int>(v.tokens_.size());
    v.index_by_id_[t.id] = v.tokens_.size();
    v.id_by_content_.emplace(t.content, t.id);
    if (t.special) v.special_contents_.insert(t.content);
    v.max_id_ = std::max(v.max_id_, t.id);
    // The matched string: normalized tokens are looked for in normalized text.
    const std::string& pattern = t.normalized ? t.decode_text : t.content;
    if (!pattern.empty()) (t.normalized ? v.normalized_trie_ : v.raw_trie_).insert(pattern, index);
    v.tokens_.push_back(std::move(t));
  }
  v.raw_trie_.freeze();
  v.normalized_trie_.freeze();
  return v;
}

// HF's AddedVocabulary::find_matches + split_with_indices on every piece
// that is not yet an added token.
void AddedVocabulary::split(Pieces& pieces, const Trie& trie) const {
  if (trie.empty()) {
    std::erase_if(pieces, [](const Piece& p) { return p.added_id < 0 && p.text.empty(); });
    return;
  }
  Pieces out;
  out.reserve(pieces.size());
  for (Piece& p : pieces) {
    if (p.added_id >= 0) {
      out.push_back(std::move(p));
      continue;
    }
    const std::string& text = p.text;
    auto emit = [&](size_t s, size_t e, int id) {
      if (e <= s) return;  // HF drops empty splits
      out.push_back(Piece{text.substr(s, e - s), origin_of_range(p, s, e), id});
    };
    // All leftmost-longest, non-overlapping matches first (Aho-Corasick's
    // find_iter), then HF's per-match rules.
    size_t start_offset = 0;
    size_t pos = 0;
    while (pos < text.size()) {
      auto [token_index, len] = trie.longest_at(text, pos);
      if (token_index < 0) {
        ++pos;
        continue;
      }
      size_t start = pos, stop = pos + len;
      pos = stop;
      const AddedToken& t = tokens_[token_index];
      if (t.single_word) {
        bool start_space = start == 0 || !is_word_char(last_char(std::string_view(text).substr(0, start)));
        bool stop_space = stop == text.size() || !is_word_char(first_char(std::string_view(text).substr(stop)));
        if (!start_space || !stop_space) continue;
      }
      // HF: lstrip takes the whitespace before the token (not what an
      // earlier match already took), rstrip the whitespace after it.
      if (t.lstrip) start = std::max(utf8::trailing_whitespace_start(std::string_view(text).substr(0, start)), start_offset);
      if (t.rstrip) stop += utf8::leading_whitespace(std::string_view(text).substr(stop));
      if (start_offset < start) emit(start_offset, start, -1);
      emit(start, stop, t.id);
      start_offset = stop;
    }
    if (start_offset != text.size()) emit(start_offset, text.size(), -1);
  }
  pieces = std::move(out);
}

Pieces AddedVocabulary::extract_and_normalize(std::string_view text, const Normalizer* normalizer) const {
  Pieces pieces;
  // Untouched text: only the first character's bytes align to offset 0.
  size_t first_char = text.empty() ? 0 : std::min(text.size(), utf8::sequence_length(static_cast<unsigned char>(text[0])));
  pieces.push_back(Piece{std::string(text), first_char, -1});
  split(pieces, raw_trie_);
  if (normalizer) {
    for (Piece& p : pieces)
      if (p.added_id < 0) normalizer->normalize_piece(p.text, p.origin_bytes);
  }
  split(pieces, normalized_trie_);
  return pieces;
}

const AddedToken* AddedVocabulary::by_id(int id) const {
  auto it = index_by_id_.find(id);
  return it == index_by_id_.end() ? nullptr : &tokens_[it->second];
}

std::optional<int> AddedVocabulary::id_of(std::string_view content) const {
  auto it = id_by_content_.find(content);
  if (it == id_by_content_.end()) return std::nullopt;
  return it->second;
}

bool AddedVocabulary::is_special_content(std::string_view s) const {
  return special_contents_.find(s) != special_contents_.end();
}

}  // namespace kvscope::tok
