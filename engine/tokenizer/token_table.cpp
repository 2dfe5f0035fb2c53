#include "tokenizer/token_table.h"

#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>

namespace kvscope::tok {

namespace {

// Slots for `tokens` spellings: a power of two at most 5/8 full, where a
// lookup of an absent spelling (most of what a SentencePiece merge step
// asks, score_merges.h) probes ~4 slots on average. (Half full was the rule
// before; Gemma 3's 262,144 tokens then took 2^20 slots, 5/8 gives 2^19.)
std::size_t slots_for(std::size_t tokens) {
  std::size_t p = 16;
  while (p * 5 < tokens * 8) p *= 2;
  return p;
}

}  // namespace

uint64_t TokenTable::hash(std::string_view s) { return std::hash<std::string_view>{}(s); }

void TokenTable::reserve(std::size_t tokens, std::size_t bytes) {
  text_.reserve(bytes);
  spans_.reserve(tokens);
  if (slots_.size() < slots_for(tokens)) grow_index(slots_for(tokens));
}

std::size_t TokenTable::slot_of(std::string_view spelling, uint64_t h) const {
  const std::size_t mask = slots_.size() - 1;
  const Slot tag = tag_of(h);
  for (std::size_t i = h & mask;; i = (i + 1) & mask) {
    const Slot s = slots_[i];
    if (s == 0) return i;
    if ((s & ~kIdMask) != tag) continue;
    const Span& sp = spans_[static_cast<std::size_t>(id_in(s))];
    if (sp.length == spelling.size() && std::memcmp(text_.data() + sp.offset, spelling.data(), sp.length) == 0)
      return i;
  }
}

void TokenTable::grow_index(std::size_t capacity) {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(capacity, 0);
  for (const Slot s : old) {
    if (s == 0) continue;
    const Span& sp = spans_[static_cast<std::size_t>(id_in(s))];
    const uint64_t h = hash(std::string_view(text_.data() + sp.offset, sp.length));
    const std::size_t mask = capacity - 1;
    std::size_t i = h & mask;
    while (slots_[i] != 0) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

std::optional<std::string> TokenTable::add(std::string_view spelling, int id) {
  if (id < 0 || static_cast<Slot>(id) >= kIdMask)
    throw std::length_error("token id " + std::to_string(id) + " outside 0 .. 2^25 - 2");
  const auto at = static_cast<std::size_t>(id);
  if (at < spans_.size() && spans_[at].length != kAbsent) {
    const std::string_view held(text_.data() + spans_[at].offset, spans_[at].length);
    if (held == spelling) return std::nullopt;
    return std::string(held);
  }
  if (slots_.size() < slots_for(count_ + 1)) grow_index(slots_for(count_ + 1));
  const uint64_t h = hash(spelling);
  const std::size_t slot = slot_of(spelling, h);
  if (at >= spans_.size()) spans_.resize(at + 1, Span{0, kAbsent});
  if (slots_[slot] != 0) {
    // Seen before under another id: it moves, its text stays where it is.
    Span& old = spans_[static_cast<std::size_t>(id_in(slots_[slot]))];
    spans_[at] = old;
    old.length = kAbsent;
    slots_[slot] = (slots_[slot] & ~kIdMask) | static_cast<Slot>(id + 1);
    return std::nullopt;
  }
  // Offsets are 32-bit and a length of UINT32_MAX marks an id without a
  // spelling, so the text stays below 4 GiB.
  if (text_.size() + spelling.size() >= UINT32_MAX) throw std::length_error("vocabulary text of 4 GiB or more");
  spans_[at] = Span{static_cast<uint32_t>(text_.size()), static_cast<uint32_t>(spelling.size())};
  text_.append(spelling);
  slots_[slot] = tag_of(h) | static_cast<Slot>(id + 1);
  ++count_;
  return std::nullopt;
}

std::optional<int> TokenTable::find(std::string_view spelling) const {
  if (slots_.empty()) return std::nullopt;
  const Slot s = slots_[slot_of(spelling, hash(spelling))];
  if (s == 0) return std::nullopt;
  return id_in(s);
}

std::optional<std::string_view> TokenTable::spelling(int id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= spans_.size()) return std::nullopt;
  const Span& sp = spans_[static_cast<std::size_t>(id)];
  if (sp.length == kAbsent) return std::nullopt;
  return std::string_view(text_.data() + sp.offset, sp.length);
}

std::size_t TokenTable::bytes_held() const {
  return text_.capacity() + spans_.capacity() * sizeof(Span) + slots_.capacity() * sizeof(Slot);
}

}  // namespace kvscope::tok
