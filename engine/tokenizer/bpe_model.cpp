#include "tokenizer/bpe_model.h"

#include <algorithm>
#include <cstdio>
#include <queue>

#include "common/error.h"
#include "tokenizer/utf8.h"

namespace kvscope::tok {

namespace {

// model.vocab in document order into `vocab`, while every value is a valid
// id and no spelling or id repeats (a well-formed file); false at the first
// that is not so, the table then half-filled.
bool read_well_formed_vocab(const std::vector<std::pair<std::string, nlohmann::json>>& entries, TokenTable& vocab) {
  for (const auto& [token, value] : entries) {
    if (!value.is_number_integer()) return false;
    const auto id = value.get<int64_t>();
    if (id < 0 || id > BpeModel::kMaxId || vocab.add(token, static_cast<int>(id))) return false;
  }
  return vocab.size() == entries.size();  // else a spelling came twice
}

}  // namespace

std::unique_ptr<BpeModel> BpeModel::parse(const JsonField& model, const StreamedBpe& taken) {
  if (auto d = model.get("dropout")) {
    if (d->number() != 0.0) d->fail("BPE dropout is random; only null or 0 is supported");
  }
  BpeOptions options;
  options.byte_fallback = model.get_bool("byte_fallback", false);
  options.fuse_unk = model.get_bool("fuse_unk", false);
  options.ignore_merges = model.get_bool("ignore_merges", false);
  options.continuing_subword_prefix = model.get_string("continuing_subword_prefix", "");
  options.end_of_word_suffix = model.get_string("end_of_word_suffix", "");
  if (auto u = model.get("unk_token")) options.unk_token = u->str();

  // --- vocab ---------------------------------------------------------------
  JsonField vocab_field = model["vocab"];
  vocab_field.require_object();
  TokenTable vocab;
  // Each spelling once (the object's keys are unique), so only an id can clash.
  const auto add = [&](const std::string& token, const nlohmann::json& value) {
    JsonField v(value, model.source(), vocab_field.path() + "[" + in_quotes(token) + "]");
    int64_t id = v.integer();
    if (id < 0 || id > kMaxId) v.fail("id " + std::to_string(id) + " out of range");
    if (auto other = vocab.add(token, static_cast<int>(id)))
      vocab_field.fail("id " + std::to_string(id) + " is used by both " + in_quotes(*other) + " and " +
                       in_quotes(token));
  };
  // parse_streaming_bpe takes every model's vocab object and merges array.
  if (!taken.vocab) vocab_field.fail("not read by the tokenizer.json parser (a kvscope bug)");
  const auto& entries = *taken.vocab;
  std::size_t bytes = 0;
  for (const auto& [token, value] : entries) bytes += token.size();
  vocab.reserve(entries.size(), bytes);
  if (!read_well_formed_vocab(entries, vocab)) {
    // Again as the tree holds them: sorted by spelling, a spelling listed
    // twice with its last value only, so a file reads, and a broken one is
    // named, exactly as when the vocabulary was a member of the tree.
    vocab = TokenTable{};
    std::vector<std::size_t> order(entries.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return entries[a].first < entries[b].first; });
    vocab.reserve(entries.size(), bytes);
    for (std::size_t k = 0; k < order.size(); ++k) {
      const bool later_copy = k + 1 < order.size() && entries[order[k + 1]].first == entries[order[k]].first;
      if (!later_copy) add(entries[order[k]].first, entries[order[k]].second);
    }
  }

  // --- merges --------------------------------------------------------------
  JsonField merges_field = model["merges"];
  merges_field.require_array();
  if (!taken.merges) merges_field.fail("not read by the tokenizer.json parser (a kvscope bug)");
  const std::vector<nlohmann::json>& list = *taken.merges;
  std::vector<BpeMerge> merges;
  merges.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    JsonField entry(list[i], model.source(), merges_field.path() + "[" + std::to_string(i) + "]",
                    merges_field.depth() + 1);
    std::string_view a, b;
    if (entry.is_string()) {
      // Legacy spelling "a b": exactly one space (HF splits on ' ').
      const std::string& line = entry.json().get_ref<const std::string&>();
      size_t space = line.find(' ');
      if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos)
        entry.fail("expected \"a b\" or [\"a\",\"b\"], got " + in_quotes(line));
      a = std::string_view(line).substr(0, space);
      b = std::string_view(line).substr(space + 1);
    } else if (entry.is_array() && entry.size() == 2 && entry.at(0).is_string() && entry.at(1).is_string()) {
      a = entry.json()[0].get_ref<const std::string&>();
      b = entry.json()[1].get_ref<const std::string&>();
    } else {
      entry.fail("expected \"a b\" or [\"a\",\"b\"]");
    }
    auto merge = resolve_merge(vocab, a, b, options.continuing_subword_prefix, "model.vocab");
    if (auto* problem = std::get_if<std::string>(&merge)) entry.fail(*problem);
    merges.push_back(std::get<BpeMerge>(merge));
  }
  return std::make_unique<BpeModel>(model.source(), std::move(options), std::move(vocab),
                                    MergeTable(std::move(merges)));
}

BpeModel::BpeModel(std::string source, BpeOptions options, TokenTable vocab, BpeMerges merges)
    : source_(std::move(source)),
      vocab_(std::move(vocab)),
      merges_(std::move(merges)),
      unk_token_(std::move(options.unk_token)),
      byte_fallback_(options.byte_fallback),
      fuse_unk_(options.fuse_unk),
      ignore_merges_(options.ignore_merges),
      prefix_(std::move(options.continuing_subword_prefix)),
      suffix_(std::move(options.end_of_word_suffix)) {
  byte_ids_.fill(-1);
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    if (auto id = vocab_.find(name)) byte_ids_[b] = *id;
  }
  if (unk_token_) unk_id_ = vocab_.find(*unk_token_);
}

std::variant<BpeMerge, std::string> BpeModel::resolve_merge(const TokenTable& vocab, std::string_view left,
                                                            std::string_view right, std::string_view prefix,
                                                            std::string_view vocab_name) {
  const auto not_in = [&](std::string_view what, std::string_view token) {
    return std::string(what) + " " + in_quotes(token) + " is not in " + std::string(vocab_name);
  };
  const auto l = vocab.find(left);
  if (!l) return not_in("token", left);
  const auto r = vocab.find(right);
  if (!r) return not_in("token", right);
  if (right.substr(0, prefix.size()) != prefix)
    return "token " + in_quotes(right) + " does not start with continuing_subword_prefix " + in_quotes(prefix);
  std::string merged;
  merged.reserve(left.size() + right.size() - prefix.size());
  merged.append(left).append(right.substr(prefix.size()));
  const auto m = vocab.find(merged);
  if (!m) return not_in("merged token", merged);
  return BpeMerge{*l, *r, *m};
}

// One symbol per character (with prefix/suffix where configured), byte
// tokens for unknown characters when byte_fallback is on, else the unknown
// token (consecutive ones fused when fuse_unk), else the character is dropped.
std::vector<BpeModel::Symbol> BpeModel::split_word(std::string_view word) const {
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  auto add = [&](int id, size_t len) {
    int index = static_cast<int>(symbols.size());
    if (!symbols.empty()) symbols.back().next = index;
    symbols.push_back(Symbol{id, index - 1, -1, len});
  };
  int unk_pending_id = -1;  // an unknown-token symbol not added yet (so it can fuse)
  size_t unk_pending_len = 0;
  std::string scratch;
  size_t i = 0;
  while (i < word.size()) {
    size_t start = i;
    i += utf8::sequence_length(static_cast<unsigned char>(word[i]));
    if (i > word.size()) i = word.size();
    const size_t len = i - start;
    std::string_view ch = word.substr(start, len);
    std::string_view key = ch;
    const bool first = start == 0, last = i == word.size();
    if ((!first && !prefix_.empty()) || (last && !suffix_.empty())) {
      scratch.clear();
      if (!first) scratch += prefix_;
      scratch += ch;
      if (last) scratch += suffix_;
      key = scratch;
    }
    if (auto id = vocab_.find(key)) {
      if (unk_pending_id >= 0) {
        add(unk_pending_id, unk_pending_len);
        unk_pending_id = -1;
      }
      add(*id, len);
      continue;
    }
    if (byte_fallback_) {
      // All bytes of the (prefixed) key must exist as <0xXX>, else unk.
      bool all = true;
      for (char c : key) all = all && byte_ids_[static_cast<unsigned char>(c)] >= 0;
      if (all) {
        for (char c : key) add(byte_ids_[static_cast<unsigned char>(c)], 1);
        continue;
      }
    }
    if (unk_token_) {
      if (!unk_id_)
        throw Error(source_, "model.unk_token", in_quotes(*unk_token_) + " is not in model.vocab");
      if (unk_pending_id >= 0 && fuse_unk_) {
        unk_pending_len += len;
      } else {
        if (unk_pending_id >= 0) add(unk_pending_id, unk_pending_len);
        unk_pending_id = *unk_id_;
        unk_pending_len = len;
      }
    }
  }
  if (unk_pending_id >= 0) add(unk_pending_id, unk_pending_len);
  return symbols;
}

namespace {

// A merge as the heap below orders it: by the rank its list gives it.
struct Listed {
  uint32_t rank;
  int merged;
};
std::optional<Listed> merge_of(const MergeTable& merges, const TokenTable&, int left, int right) {
  const BpeMerge* m = merges.find(left, right);
  if (!m) return std::nullopt;
  return Listed{merges.rank_of(m), m->merged};
}
std::optional<ScoreMerges::Found> merge_of(const ScoreMerges& merges, const TokenTable& vocab, int left, int right) {
  return merges.find(vocab, left, right);
}

}  // namespace

void BpeModel::merge_all(std::vector<Symbol>& symbols) const {
  std::visit([&](const auto& merges) { merge_all_by(merges, symbols); }, merges_);
}

// HF's Word::merge_all: a min-heap of candidate merges ordered by (rank,
// position); entries whose pair changed since they were pushed are skipped.
template <class Merges>
void BpeModel::merge_all_by(const Merges& merges, std::vector<Symbol>& symbols) const {
  using Rank = decltype(merge_of(merges, vocab_, 0, 0)->rank);
  struct Candidate {
    Rank rank;
    int pos;
    int left, right;  // the pair at pos when queued
    int new_id;
  };
  struct Later {
    bool operator()(const Candidate& x, const Candidate& y) const {
      if (x.rank < y.rank) return false;
      if (y.rank < x.rank) return true;
      return x.pos > y.pos;
    }
  };
  std::vector<Candidate> storage;
  storage.reserve(symbols.size());
  std::priority_queue<Candidate, std::vector<Candidate>, Later> queue(Later{}, std::move(storage));
  const auto push = [&](int left_pos, int left, int right) {
    if (const auto m = merge_of(merges, vocab_, left, right))
      queue.push(Candidate{m->rank, left_pos, left, right, m->merged});
  };
  for (size_t i = 0; i + 1 < symbols.size(); ++i) push(static_cast<int>(i), symbols[i].id, symbols[i + 1].id);
  while (!queue.empty()) {
    Candidate top = queue.top();
    queue.pop();
    Symbol& cur = symbols[top.pos];
    if (cur.len == 0 || cur.next == -1) continue;
    const int next_pos = cur.next;
    const Symbol right = symbols[next_pos];
    // Stale entry: the pair at this position no longer makes the merge
    // queued. The same two ids make the same merge, so only a changed pair
    // is looked up again.
    if (cur.id != top.left || right.id != top.right) {
      const auto now = merge_of(merges, vocab_, cur.id, right.id);
      if (!now || now->merged != top.new_id) continue;
    }

    cur.id = top.new_id;
    cur.len += right.len;
    cur.next = right.next;
    symbols[next_pos].len = 0;
    if (right.next >= 0 && static_cast<size_t>(right.next) < symbols.size())
      symbols[right.next].prev = top.pos;

    if (cur.prev >= 0) push(cur.prev, symbols[cur.prev].id, cur.id);
    if (cur.next >= 0 && static_cast<size_t>(cur.next) < symbols.size()) push(top.pos, cur.id, symbols[cur.next].id);
  }
}

void BpeModel::tokenize(std::string_view word, std::vector<int>& ids) const {
  if (word.empty()) return;
  if (ignore_merges_) {
    if (auto id = vocab_.find(word)) {
      ids.push_back(*id);
      return;
    }
  }
  const bool cacheable = word.size() < kCacheMaxWordBytes;
  if (cacheable) {
    std::shared_lock lock(cache_mutex_);
    if (auto it = cache_.find(word); it != cache_.end()) {
      ids.insert(ids.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<Symbol> symbols = split_word(word);
  merge_all(symbols);
  const size_t before = ids.size();
  for (const Symbol& s : symbols)
    if (s.len != 0) ids.push_back(s.id);
  if (cacheable) {
    std::unique_lock lock(cache_mutex_);
    if (cache_.size() < kCacheCapacity)
      cache_.emplace(std::string(word), std::vector<int>(ids.begin() + before, ids.end()));
  }
}

}  // namespace kvscope::tok
