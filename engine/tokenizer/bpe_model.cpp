#include "tokenizer/bpe_model.h"

#include <cstdio>
#include <queue>

#include "common/error.h"
#include "tokenizer/utf8.h"

namespace kvscope::tok {

namespace {

uint64_t pair_key(int a, int b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

}  // namespace

std::unique_ptr<BpeModel> BpeModel::parse(const JsonField& model) {
  auto m = std::make_unique<BpeModel>();
  m->source_ = model.source();
  m->byte_ids_.fill(-1);

  if (auto d = model.get("dropout")) {
    if (d->number() != 0.0) d->fail("BPE dropout is random; only null or 0 is supported");
  }
  m->byte_fallback_ = model.get_bool("byte_fallback", false);
  m->fuse_unk_ = model.get_bool("fuse_unk", false);
  m->ignore_merges_ = model.get_bool("ignore_merges", false);
  m->prefix_ = model.get_string("continuing_subword_prefix", "");
  m->suffix_ = model.get_string("end_of_word_suffix", "");
  if (auto u = model.get("unk_token")) m->unk_token_ = u->str();

  // --- vocab ---------------------------------------------------------------
  JsonField vocab = model["vocab"];
  vocab.require_object();
  m->vocab_.reserve(vocab.size());
  std::vector<std::pair<const std::string*, int>> entries;
  int max_id = -1;
  for (const auto& [token, value] : vocab.json().items()) {
    JsonField v(value, model.source(), vocab.path() + "[" + in_quotes(token) + "]");
    int64_t id = v.integer();
    if (id < 0 || id > kMaxId) v.fail("id " + std::to_string(id) + " out of range");
    auto [it, inserted] = m->vocab_.emplace(token, static_cast<int>(id));
    (void)inserted;  // JSON objects cannot repeat a key once parsed
    entries.emplace_back(&it->first, static_cast<int>(id));
    if (id > max_id) max_id = static_cast<int>(id);
  }
  m->by_id_.assign(static_cast<size_t>(max_id + 1), nullptr);
  for (const auto& [token, id] : entries) {
    if (m->by_id_[id])
      vocab.fail("id " + std::to_string(id) + " is used by both " + in_quotes(*m->by_id_[id]) + " and " +
                 in_quotes(*token));
    m->by_id_[id] = token;
  }
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    if (auto it = m->vocab_.find(std::string_view(name)); it != m->vocab_.end()) m->byte_ids_[b] = it->second;
  }
  if (m->unk_token_) {
    if (auto it = m->vocab_.find(*m->unk_token_); it != m->vocab_.end()) m->unk_id_ = it->second;
  }

  // --- merges --------------------------------------------------------------
  JsonField merges = model["merges"];
  merges.require_array();
  m->merges_.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    JsonField entry = merges.at(i);
    std::string a, b;
    if (entry.is_string()) {
      // Legacy spelling "a b": exactly one space (HF splits on ' ').
      std::string line = entry.str();
      size_t space = line.find(' ');
      if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos)
        entry.fail("expected \"a b\" or [\"a\",\"b\"], got " + in_quotes(line));
      a = line.substr(0, space);
      b = line.substr(space + 1);
    } else if (entry.is_array() && entry.size() == 2 && entry.at(0).is_string() && entry.at(1).is_string()) {
      a = entry.at(0).str();
      b = entry.at(1).str();
    } else {
      entry.fail("expected \"a b\" or [\"a\",\"b\"]");
    }
    auto ia = m->vocab_.find(a);
    if (ia == m->vocab_.end()) entry.fail("token " + in_quotes(a) + " is not in model.vocab");
    auto ib = m->vocab_.find(b);
    if (ib == m->vocab_.end()) entry.fail("token " + in_quotes(b) + " is not in model.vocab");
    if (b.compare(0, m->prefix_.size(), m->prefix_) != 0)
      entry.fail("token " + in_quotes(b) + " does not start with continuing_subword_prefix " +
                 in_quotes(m->prefix_));
    std::string merged = a + b.substr(m->prefix_.size());
    auto im = m->vocab_.find(merged);
    if (im == m->vocab_.end()) entry.fail("merged token " + in_quotes(merged) + " is not in model.vocab");
    // A repeated pair keeps its last rank, as HF's map insertion does.
    m->merges_[pair_key(ia->second, ib->second)] = MergeValue{static_cast<uint32_t>(i), im->second};
  }
  return m;
}

std::optional<int> BpeModel::token_to_id(std::string_view token) const {
  auto it = vocab_.find(token);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

const std::string* BpeModel::id_to_token(int id) const {
  if (id < 0 || static_cast<size_t>(id) >= by_id_.size()) return nullptr;
  return by_id_[id];
}

const BpeModel::MergeValue* BpeModel::find_merge(int a, int b) const {
  auto it = merges_.find(pair_key(a, b));
  return it == merges_.end() ? nullptr : &it->second;
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
    if (auto it = vocab_.find(key); it != vocab_.end()) {
      if (unk_pending_id >= 0) {
        add(unk_pending_id, unk_pending_len);
        unk_pending_id = -1;
      }
      add(it->second, len);
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

// HF's Word::merge_all: a min-heap of candidate merges ordered by (rank,
// position); entries whose pair changed since they were pushed are skipped.
void BpeModel::merge_all(std::vector<Symbol>& symbols) const {
  struct Candidate {
    uint32_t rank;
    int pos;
    int new_id;
  };
  struct Later {
    bool operator()(const Candidate& x, const Candidate& y) const {
      return x.rank != y.rank ? x.rank > y.rank : x.pos > y.pos;
    }
  };
  std::vector<Candidate> storage;
  storage.reserve(symbols.size());
  std::priority_queue<Candidate, std::vector<Candidate>, Later> queue(Later{}, std::move(storage));
  for (size_t i = 0; i + 1 < symbols.size(); ++i) {
    if (const MergeValue* m = find_merge(symbols[i].id, symbols[i + 1].id))
      queue.push(Candidate{m->rank, static_cast<int>(i), m->new_id});
  }
  while (!queue.empty()) {
    Candidate top = queue.top();
    queue.pop();
    Symbol& cur = symbols[top.pos];
    if (cur.len == 0 || cur.next == -1) continue;
    const int next_pos = cur.next;
    const Symbol right = symbols[next_pos];
    // Stale entry: the pair at this position is no longer the one queued.
    const MergeValue* now = find_merge(cur.id, right.id);
    if (!now || now->new_id != top.new_id) continue;

    cur.id = top.new_id;
    cur.len += right.len;
    cur.next = right.next;
    symbols[next_pos].len = 0;
    if (right.next >= 0 && static_cast<size_t>(right.next) < symbols.size())
      symbols[right.next].prev = top.pos;

    if (cur.prev >= 0) {
      if (const MergeValue* m = find_merge(symbols[cur.prev].id, cur.id))
        queue.push(Candidate{m->rank, cur.prev, m->new_id});
    }
    if (cur.next >= 0 && static_cast<size_t>(cur.next) < symbols.size()) {
      if (const MergeValue* m = find_merge(cur.id, symbols[cur.next].id))
        queue.push(Candidate{m->rank, top.pos, m->new_id});
    }
  }
}

void BpeModel::tokenize(std::string_view word, std::vector<int>& ids) const {
  if (word.empty()) return;
  if (ignore_merges_) {
    if (auto it = vocab_.find(word); it != vocab_.end()) {
      ids.push_back(it->second);
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
