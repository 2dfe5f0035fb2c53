// Ranking slots by packed integer keys: a slot's statistic made into
// order-preserving bits, above its slot index, so "better" is plain integer
// comparison (higher statistic first, then the newer slot) and the best m
// of a unit can be found by partitioning integers rather than indices
// through a comparator. Used by the slot selection every decode step.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

namespace kvscope {

// A slot's place in `better` order as one integer, larger = better: the
// score's bits made order-preserving (scores are finite; +0 stands for -0,
// which `better` treats as equal) above the position. Partitioning packed
// keys costs a fraction of partitioning indices through a comparator, which
// matters for ideal, which partitions its whole cache every step.
inline uint64_t order_key(float score, int pos) {
  uint32_t b;
  const float canonical = score + 0.0f;
  std::memcpy(&b, &canonical, sizeof b);
  b = (b & 0x80000000u) ? ~b : (b | 0x80000000u);
  return (uint64_t{b} << 32) | static_cast<uint32_t>(pos);
}

// Reorders keys[0, n) so that keys[0, m) are the m largest (keys are
// distinct). Quickselect with a branch-free partition: the keys are close
// to random, so std::nth_element's comparisons mispredict about half the
// time, and ideal runs this over its whole cache for every kv head and step.
// `hint`, when not 0, is the first round's pivot: the last step's threshold
// of the same segment, which usually splits the keys near m at once (the
// result does not depend on it).
template <typename Key>
inline void select_largest(Key* keys, std::size_t n, std::size_t m, Key hint) {
  if (m < n && n - m <= 4) {
    // A decode step usually drops one slot per unit: move the few smallest
    // keys to the end, one branch-free minimum scan each.
    for (std::size_t end = n; end > m; --end) {
      std::size_t at = 0;
      Key smallest = keys[0];
      for (std::size_t j = 1; j < end; ++j) {
        const bool less = keys[j] < smallest;
        smallest = less ? keys[j] : smallest;
        at = less ? j : at;
      }
      std::swap(keys[at], keys[end - 1]);
    }
    return;
  }
  std::size_t lo = 0, hi = n;
  int rounds_left = 2 * static_cast<int>(std::bit_width(n)) + 8;  // then fall back: no quadratic worst case
  bool first = true;
  while (hi - lo > 16) {
    if (--rounds_left < 0) {
      std::nth_element(keys + lo, keys + m, keys + hi, std::greater<Key>());
      return;
    }
    // Median of three: at least one key of the range is above it, and it
    // is not, so both sides below are non-empty and every round shrinks.
    // (The hint may split nothing off; the next round's median then does.)
    const Key a = keys[lo], b = keys[lo + (hi - lo) / 2], c = keys[hi - 1];
    const Key pivot =
        first && hint != 0 ? hint : std::max(std::min(a, b), std::min(std::max(a, b), c));
    first = false;
    std::size_t above = lo;  // [lo, above) > pivot, [above, j) <= pivot
    for (std::size_t j = lo; j < hi; ++j) {
      const Key x = keys[j];
      keys[j] = keys[above];
      keys[above] = x;
      above += x > pivot;
    }
    if (m < above) hi = above;
    else if (m > above) lo = above;
    else return;
  }
  std::sort(keys + lo, keys + hi, std::greater<Key>());
}

// Ranks (1 = best) of the dropped keys among all of a unit's keys, written
// to rank[slot], the slot being a key's low 32 bits. Every kept candidate
// beats every dropped one, so a dropped key's rank is 1 + `room` (the kept
// candidates) + the dropped keys above it + the protected slots above it:
// only the protected slots, [0, j0) and [j1, len), are compared. Few
// dropped (the usual decode step): through `beats(j, d)` (whether protected
// slot j outranks dropped key d), which callers write as plain comparisons
// of scores that vectorise. Many (a one-shot prefill eviction): the
// protected slots' keys (`key_of(j)`) sorted once and merged with the
// dropped, so the work stays O(n log n).
template <typename Key, typename Beats, typename KeyOf>
inline void rank_dropped(Key* dropped, std::size_t n_dropped, std::size_t room, int j0, int j1, int len, Beats beats,
                         KeyOf key_of, std::vector<Key>& scratch, std::vector<int>& rank) {
  std::sort(dropped, dropped + n_dropped, std::greater<Key>());
  if (n_dropped <= 16) {
    for (std::size_t i = 0; i < n_dropped; ++i) {
      const Key d = dropped[i];
      int above = 0;
      for (int j = 0; j < j0; ++j) above += beats(j, d);
      for (int j = j1; j < len; ++j) above += beats(j, d);
      rank[static_cast<uint32_t>(d)] = 1 + static_cast<int>(room + i) + above;
    }
    return;
  }
  scratch.clear();
  for (int j = 0; j < j0; ++j) scratch.push_back(key_of(j));
  for (int j = j1; j < len; ++j) scratch.push_back(key_of(j));
  std::sort(scratch.begin(), scratch.end(), std::greater<Key>());
  std::size_t above = 0;  // protected keys above the current dropped one; grows as they fall
  for (std::size_t i = 0; i < n_dropped; ++i) {
    while (above < scratch.size() && scratch[above] > dropped[i]) ++above;
    rank[static_cast<uint32_t>(dropped[i])] = 1 + static_cast<int>(room + i + above);
  }
}

// The same for a double statistic (the mean of a shared decision) with the
// slot in the low 64 bits of a 128-bit key.
using Key128 = unsigned __int128;

inline uint64_t order_bits(double score) {
  uint64_t b;
  const double canonical = score + 0.0;
  std::memcpy(&b, &canonical, sizeof b);
  return (b & (uint64_t{1} << 63)) ? ~b : (b | (uint64_t{1} << 63));
}

}  // namespace kvscope
