#include "tokenizer/token_table.h"

#include <cstring>
#include <functional>
#include <stdexcept>

namespace kvscope::tok {

namespace {

std::size_t power_of_two_at_least(std::size_t n) {
  std::size_t p = 16;
  while (p < n) p *= 2;
  return p;
}

}  // namespace

uint64_t TokenTable::hash(std::string_view s) { return std::hash<std::string_view>{}(s); }

void TokenTable::reserve(std::size_t tokens, std::size_t bytes) {
  text_.reserve(bytes);
  spans_.reserve(tokens);
  if (slots_.size() < 2 * tokens) grow_index(power_of_two_at_least(2 * tokens));
}

std::size_t TokenTable::slot_of(std::string_view spelling, uint64_t h) const {
  const std::size_t mask = slots_.size() - 1;
  const auto tag = static_cast<uint32_t>(h >> 32);
  for (std::size_t i = h & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.id < 0) return i;
    if (s.tag != tag) continue;
    const Span& sp = spans_[static_cast<std::size_t>(s.id)];
    if (sp.length == spelling.size() && std::memcmp(text_.data() + sp.offset, spelling.data(), sp.length) == 0)
      return i;
  }
}

void TokenTable::grow_index(std::size_t capacity) {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(capacity, Slot{0, -1});
  for (const Slot& s : old) {
    if (s.id < 0) continue;
    const Span& sp = spans_[static_cast<std::size_t>(s.id)];
    const uint64_t h = hash(std::string_view(text_.data() + sp.offset, sp.length));
    const std::size_t mask = capacity - 1;
    std::size_t i = h & mask;
    while (slots_[i].id >= 0) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

std::optional<std::string> TokenTable::add(std::string_view spelling, int id) {
  const auto at = static_cast<std::size_t>(id);
  if (at < spans_.size() && spans_[at].length != kAbsent) {
    const std::string_view held(text_.data() + spans_[at].offset, spans_[at].length);
    if (held == spelling) return std::nullopt;
    return std::string(held);
  }
  if (slots_.size() < 2 * (count_ + 1)) grow_index(power_of_two_at_least(2 * (count_ + 1)));
  const uint64_t h = hash(spelling);
  const std::size_t slot = slot_of(spelling, h);
  if (at >= spans_.size()) spans_.resize(at + 1, Span{0, kAbsent});
  if (slots_[slot].id >= 0) {
    // Seen before under another id: it moves, its text stays where it is.
    Span& old = spans_[static_cast<std::size_t>(slots_[slot].id)];
    spans_[at] = old;
    old.length = kAbsent;
    slots_[slot].id = id;
    return std::nullopt;
  }
  // Offsets are 32-bit and a length of UINT32_MAX marks an id without a
  // spelling, so the text stays below 4 GiB.
  if (text_.size() + spelling.size() >= UINT32_MAX) throw std::length_error("vocabulary text of 4 GiB or more");
  spans_[at] = Span{static_cast<uint32_t>(text_.size()), static_cast<uint32_t>(spelling.size())};
  text_.append(spelling);
  slots_[slot] = Slot{static_cast<uint32_t>(h >> 32), id};
  ++count_;
  return std::nullopt;
}

std::optional<int> TokenTable::find(std::string_view spelling) const {
  if (slots_.empty()) return std::nullopt;
  const Slot& s = slots_[slot_of(spelling, hash(spelling))];
  if (s.id < 0) return std::nullopt;
  return s.id;
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
