#include "policy/selection.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <utility>

#include "backend/cpu/philox_batch.h"
#include "backend/parallel.h"
#include "common/counter_random.h"
#include "common/error.h"
#include "policy/top_keys.h"

namespace kvscope {
namespace {

// The segments that decide together under a granularity.
std::vector<std::vector<int>> decision_units(const KvLayout& lay, Granularity g) {
  std::vector<std::vector<int>> units;
  if (g == Granularity::KvHead) {
    for (int s = 0; s < lay.n_segments(); ++s) units.push_back({s});
  } else if (g == Granularity::Layer) {
    for (int l = 0; l < lay.n_kv_layers; ++l) {
      units.emplace_back();
      for (int h = 0; h < lay.n_kv_heads; ++h) units.back().push_back(lay.segment(l, h));
    }
  } else {
    units.emplace_back();
    for (int s = 0; s < lay.n_segments(); ++s) units.back().push_back(s);
  }
  return units;
}

// This choice's numbers: the resolved k, w and s with the authors' code
// quirks applied (ChoiceQuirks in params.h).
struct Limits {
  int k = 0, w = 0, s = 0;
  int exit_pos = -1;  // a position dropped without competing (the slot just out of the window), or -1
  bool hold = false;  // nothing is dropped in this choice
};

Limits limits_of(const ResolvedPolicy& r, int newest, int step) {
  Limits L{r.k, r.w, r.s};
  const ChoiceQuirks& q = r.quirks;
  if (q.zero_window_holds && r.w == 0) L.hold = true;
  if (q.prompt_only && step > 0) L.hold = true;
  // The decoding schedule: the prompt's choice (row 0) and every decode
  // step between the cuts keep all; after step N, 2N, ... the cache is cut
  // to k, this step's token competing with the rest (kvpress's
  // DecodingPress compresses in the forward hook of that step's token).
  if (r.interval > 0 && (step <= 0 || step % r.interval != 0)) L.hold = true;
  if (q.reserved_slot) {
    // The code compares the sequence's length with k, its budget including
    // the next token's slot: nothing goes until the sequence outgrows k;
    // then k - 1 stay, the held slot coming out of the window.
    if (newest + 1 <= r.k) L.hold = true;
    L.k = r.k - 1;
    L.w = std::max(r.w - 1, 0);
  }
  // The newest position that is not protected: the slot that has just left
  // the window. Without a window no slot ever was in one.
  if (q.window_exit_dropped && r.w > 0) L.exit_pos = newest - L.w;
  return L;
}

struct Entry {
  int pos = 0;
  double score = 0;
  int count = 0;
  bool prot = false;
  bool forced_out = false;  // the slot just out of the window under window_exit_dropped: ranks last
};

// Best first: higher score, then newer. A strict total order (positions are
// unique within a unit), so the set of the best m entries is the same
// however it is found.
bool better(const Entry& a, const Entry& b) {
  if (a.forced_out != b.forced_out) return b.forced_out;
  return a.score != b.score ? a.score > b.score : a.pos > b.pos;
}

// Ranks (1 = best) of the entries at `which`, written to rank_of[pos].
// Few of them (the usual decode step drops one slot per unit): count what
// beats each; many (a one-shot prefill eviction): sort once.
void rank_entries(const std::vector<Entry>& entries, const std::vector<int>& which, std::vector<int>& rank_of) {
  if (which.size() <= 16) {
    for (int i : which) {
      int r = 1;
      for (const Entry& e : entries) r += better(e, entries[i]);
      rank_of[entries[i].pos] = r;
    }
    return;
  }
  std::vector<int> order(entries.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return better(entries[a], entries[b]); });
  std::vector<char> ranked(entries.size(), 0);  // only the asked-for entries get a rank; the others stay 0
  for (int i : which) ranked[i] = 1;
  for (std::size_t i = 0; i < order.size(); ++i)
    if (ranked[order[i]]) rank_of[entries[order[i]].pos] = static_cast<int>(i) + 1;
}

// Marks the sinks and the recent window protected and the rest kept, for a
// unit whose slots hold `pos` (ascending): the sinks are a prefix of the
// slots and the window a suffix, so the candidates are slots [j0, j1).
// The competing slots [j0, j1) of a unit whose slots hold `pos`
// (ascending): after the sinks, before the recent window.
std::pair<int, int> competing_range(const std::vector<int>& pos, const Limits& r, int newest) {
  const int* p = pos.data();
  const int len = static_cast<int>(pos.size());
  const int j0 = static_cast<int>(std::lower_bound(p, p + len, r.s) - p);
  const int j1 = static_cast<int>(std::upper_bound(p + j0, p + len, newest - r.w) - p);
  return {j0, j1};
}

std::pair<int, int> mark_protection(const std::vector<int>& pos, const Limits& r, int newest,
                                    std::vector<uint8_t>& state) {
  const auto [j0, j1] = competing_range(pos, r, newest);
  std::fill(state.begin(), state.begin() + j0, kProtected);
  std::fill(state.begin() + j0, state.begin() + j1, kKept);
  std::fill(state.begin() + j1, state.end(), kProtected);
  return {j0, j1};
}

// The random policy's score of a position this step (keyed by the unit's
// first segment).
float random_score(const ResolvedPolicy& r, int step, int unit_first, int pos) {
  const auto rnd = philox4(r.params.seed, static_cast<uint32_t>(step), static_cast<uint32_t>(unit_first),
                           static_cast<uint32_t>(pos), static_cast<uint32_t>(RandomStream::EvictRandom));
  return uniform01(rnd.v[0]);
}

// random_score of every slot of a unit, out[j] for pos[j]: the same words
// drawn in one vectorised batch (a draw per slot of the whole cache every
// step is most of the random policy's choice otherwise).
template <typename T>
void random_scores(const ResolvedPolicy& r, int step, int unit_first, const int* pos, int len,
                   std::vector<uint32_t>& words, T* out) {
  words.resize(len);
  cpu::philox4_word0_batch(r.params.seed, static_cast<uint32_t>(step), static_cast<uint32_t>(unit_first), pos,
                           static_cast<uint32_t>(RandomStream::EvictRandom), len, words.data());
  for (int j = 0; j < len; ++j) out[j] = uniform01(words[j]);
}

// The usual case (kv_head granularity): a unit is one segment, whose slots
// hold distinct positions, so slot indices serve as entries directly.
// `w` is this task's scratch; the pivot hints are per segment and sized by the caller.
void choose_in_segment(const Policy& policy, const KvBook& book, int seg, const std::vector<float>* stat, int newest,
                       int step, const Limits& lim, SelectionScratch& w, std::vector<uint64_t>& pivot_hint,
                       SlotChoice& c) {
  const auto& r = policy.resolved();
  const Ranking ranking = policy.ranking();
  const auto& pos = book.positions(seg);
  const int len = static_cast<int>(pos.size());
  auto& state = c.state[seg];
  auto& score = c.score[seg];
  auto& rank = c.rank[seg];
  const int* p = pos.data();
  const auto [j0, j1] = mark_protection(pos, lim, newest, state);
  const int n_prot = len - (j1 - j0);
  switch (ranking) {
    case Ranking::Statistic:
      std::copy(stat->begin(), stat->begin() + len, score.begin());
      break;
    case Ranking::Random:
      random_scores(r, step, seg, p, len, w.words, score.data());
      break;
    case Ranking::Recency:  // the newest first; positions < 2^24 are exact floats
    case Ranking::None:
      break;
  }
  if (ranking == Ranking::None || len <= lim.k || lim.hold) return;
  const int room = std::max(0, lim.k - n_prot);
  if (len - n_prot <= room) return;
  // The slot just out of the window (the newest candidate, if present) gets
  // the smallest key below: it goes whatever its score.
  const int exit_slot = j1 > j0 && p[j1 - 1] == lim.exit_pos ? j1 - 1 : -1;
  if (ranking == Ranking::Recency && exit_slot < 0) {
    // Positions ascend with the slot: the newest `room` candidates stay,
    // and a dropped slot's rank is 1 + the slots holding later positions
    // (what the general path below computes, without keys or a partition).
    for (int j = j0; j < j1 - room; ++j) state[j] = kDropped;
    if (policy.evicts())
      for (int j = j0; j < j1 - room; ++j) rank[j] = len - j;
    return;
  }
  // Partition the candidates' keys, best `room` first. The low word holds
  // the slot index here, not the position: within one segment both ascend
  // together, so the order is the same.
  w.keys.resize(j1 - j0);
  uint64_t* keys = w.keys.data();
  const float* sc = score.data();
  if (ranking == Ranking::Recency)
    for (int j = j0; j < j1; ++j) keys[j - j0] = order_key(static_cast<float>(p[j]), j);
  else
    for (int j = j0; j < j1; ++j) keys[j - j0] = order_key(sc[j], j);
  if (exit_slot >= 0) keys[exit_slot - j0] = static_cast<uint64_t>(exit_slot);
  select_largest<uint64_t>(w.keys.data(), w.keys.size(), static_cast<std::size_t>(room), pivot_hint[seg]);
  const auto first_dropped = w.keys.begin() + room;
  // Next step's hint: the score part of the strongest key dropped, next to
  // the threshold (the dropped are few; the kept are many).
  uint64_t strongest = 0;
  for (auto it = first_dropped; it != w.keys.end(); ++it) strongest = std::max(strongest, *it);
  pivot_hint[seg] = room > 0 ? strongest & ~uint64_t{0xffffffffu} : 0;
  for (auto it = first_dropped; it != w.keys.end(); ++it) state[static_cast<uint32_t>(*it)] = kDropped;
  if (!policy.evicts()) return;  // ideal: ranking its whole cache every step is not needed by anyone
  // A protected slot j outranks dropped key d when its key is larger: a
  // higher score, or the same score and a later slot (order_key's order;
  // -0 and +0 compare equal as floats too).
  const float* by = sc;
  if (ranking == Ranking::Recency) {
    w.recency.resize(len);
    for (int j = 0; j < len; ++j) w.recency[j] = static_cast<float>(p[j]);
    by = w.recency.data();
  }
  auto beats = [by](int j, uint64_t d) {
    const float sd = by[static_cast<uint32_t>(d)];
    return (by[j] > sd) | ((by[j] == sd) & (j > static_cast<int>(static_cast<uint32_t>(d))));
  };
  auto key_of = [by](int j) { return order_key(by[j], j); };
  rank_dropped<uint64_t>(&*first_dropped, w.keys.end() - first_dropped, static_cast<std::size_t>(room), j0, j1, len,
                         beats, key_of, w.protected_keys, rank);
  if (exit_slot >= 0) rank[exit_slot] = len;  // below every other slot of the unit
}

// Whether every segment of a unit holds the same positions (always for a
// shared decision, unless the granularity changed during the run).
bool holds_same_positions(const KvBook& book, const std::vector<int>& unit) {
  for (std::size_t u = 1; u < unit.size(); ++u)
    if (book.positions(unit[u]) != book.positions(unit[0])) return false;
  return true;
}

// The ranking value of each slot of a unit whose segments hold the same
// positions `pos`: the statistic's mean over the segments (summed in double
// in unit order), a random draw, or the position.
void unit_scores(const Policy& policy, const std::vector<int>& unit,
                 const std::function<const std::vector<float>&(int)>& stats, const std::vector<int>& pos, int step,
                 std::vector<uint32_t>& words, std::vector<double>& mean) {
  const int len = static_cast<int>(pos.size());
  mean.assign(len, 0.0);
  switch (policy.ranking()) {
    case Ranking::Statistic:
      for (int seg : unit) {
        const float* st = stats(seg).data();
        for (int j = 0; j < len; ++j) mean[j] += st[j];
      }
      for (int j = 0; j < len; ++j) mean[j] /= static_cast<double>(unit.size());
      break;
    case Ranking::Random: random_scores(policy.resolved(), step, unit[0], pos.data(), len, words, mean.data()); break;
    case Ranking::Recency:
      for (int j = 0; j < len; ++j) mean[j] = pos[j];
      break;
    case Ranking::None: break;
  }
}

// Gives every segment of a unit its first segment's decision, and the
// unit's ranking values as their scores.
void share_decision(Ranking ranking, const std::vector<int>& unit, const std::vector<double>& mean, SlotChoice& c) {
  const bool scored = ranking == Ranking::Statistic || ranking == Ranking::Random;
  for (int seg : unit) {
    if (seg != unit[0]) {
      c.state[seg] = c.state[unit[0]];
      c.rank[seg] = c.rank[unit[0]];
    }
    if (scored)
      for (std::size_t j = 0; j < mean.size(); ++j) c.score[seg][j] = static_cast<float>(mean[j]);
  }
}

// A shared decision whose segments hold the same positions: ranked like
// choose_in_shared_unit (the mean over the segments, summed in double in
// unit order) but on slot indices, with the mean's order-preserving bits
// and the slot packed into one 128-bit key.
void choose_in_aligned_unit(const Policy& policy, const KvBook& book, const std::vector<int>& unit,
                            const std::function<const std::vector<float>&(int)>& stats, int newest, int step,
                            const Limits& lim, SelectionScratch& w, SlotChoice& c) {
  const Ranking ranking = policy.ranking();
  const auto& pos = book.positions(unit[0]);
  const int len = static_cast<int>(pos.size());
  const int* p = pos.data();
  auto& state = c.state[unit[0]];
  const auto [j0, j1] = mark_protection(pos, lim, newest, state);
  auto& rank = c.rank[unit[0]];
  std::vector<double>& mean = w.mean;
  unit_scores(policy, unit, stats, pos, step, w.words, mean);
  const int n_prot = len - (j1 - j0);
  const int room = std::max(0, lim.k - n_prot);
  if (ranking != Ranking::None && len > lim.k && !lim.hold && j1 - j0 > room) {
    auto key = [&](int j) { return (Key128{order_bits(mean[j])} << 64) | static_cast<uint32_t>(j); };
    w.keys128.resize(j1 - j0);
    for (int j = j0; j < j1; ++j) w.keys128[j - j0] = key(j);
    const int exit_slot = p[j1 - 1] == lim.exit_pos ? j1 - 1 : -1;  // goes whatever its score
    if (exit_slot >= 0) w.keys128[exit_slot - j0] = static_cast<Key128>(exit_slot);
    select_largest<Key128>(w.keys128.data(), w.keys128.size(), static_cast<std::size_t>(room), 0);
    const auto first_dropped = w.keys128.begin() + room;
    for (auto it = first_dropped; it != w.keys128.end(); ++it) state[static_cast<uint32_t>(*it)] = kDropped;
    if (policy.evicts()) {
      const double* m = mean.data();
      auto beats = [m](int j, Key128 d) {
        const double md = m[static_cast<uint32_t>(d)];
        return (m[j] > md) | ((m[j] == md) & (j > static_cast<int>(static_cast<uint32_t>(d))));
      };
      rank_dropped<Key128>(&*first_dropped, w.keys128.end() - first_dropped, static_cast<std::size_t>(room), j0, j1,
                           len, beats, key, w.protected_keys128, rank);
      if (exit_slot >= 0) rank[exit_slot] = len;
    }
  }
  share_decision(ranking, unit, mean, c);
}

// Whether this choice is the one kvpress's wrappers count from the
// compression ratio itself (ChunkKV's chunks, CriticalKV's first stage):
// a ratio budget's cut of a one-shot prompt.
bool kvpress_prompt_cut(const ResolvedPolicy& r, int step) {
  return r.params.budget.ratio && step == 0 && r.params.prefill == PrefillMode::OneShot;
}

// ChunkKV (r.chunk = L slots; kvpress's ChunkKVPress) for a layer whose
// segments hold the same positions: the slots are cut into chunks of L in
// slot order (the last one shorter), a chunk's score is the mean over its
// slots of their score averaged over the segments (kvpress sums over the
// KV heads: the same order), and whole chunks are kept. How many: for a
// compression-ratio budget r at a one-shot prompt, max(1, int(C (1 - r)))
// of the C chunks, kvpress's count; otherwise max(1, int(C k / len)), the
// budget's share of this cache. Chunks holding a protected slot stay and
// count first; the others by score, the later chunk first on a tie.
void choose_in_chunks(const Policy& policy, const KvBook& book, const std::vector<int>& unit,
                      const std::function<const std::vector<float>&(int)>& stats, int newest, int step,
                      const Limits& lim, SelectionScratch& w, SlotChoice& c) {
  const auto& r = policy.resolved();
  const Ranking ranking = policy.ranking();
  const auto& pos = book.positions(unit[0]);
  const int len = static_cast<int>(pos.size());
  auto& state = c.state[unit[0]];
  auto& rank = c.rank[unit[0]];
  const auto [j0, j1] = mark_protection(pos, lim, newest, state);
  std::vector<double>& mean = w.mean;
  unit_scores(policy, unit, stats, pos, step, w.words, mean);
  const int L = r.chunk;
  const int n_chunks = (len + L - 1) / L;
  if (ranking != Ranking::None && len > lim.k && !lim.hold && n_chunks > 0) {
    const double share =
        kvpress_prompt_cut(r, step) && lim.k == r.k ? 1.0 - r.params.budget.value : static_cast<double>(lim.k) / len;
    const int n_keep = std::max(1, static_cast<int>(n_chunks * share));
    struct Chunk {
      double score;
      int index;
      bool forced;
    };
    std::vector<Chunk> chunks;
    for (int ch = 0; ch < n_chunks; ++ch) {
      const int a = ch * L, b = std::min(len, a + L);
      double sum = 0;
      for (int j = a; j < b; ++j) sum += mean[j];
      chunks.push_back({sum / (b - a), ch, a < j0 || b > j1});
    }
    // Forced chunks first, then by score, the later chunk first on a tie.
    std::sort(chunks.begin(), chunks.end(), [](const Chunk& x, const Chunk& y) {
      if (x.forced != y.forced) return x.forced;
      return x.score != y.score ? x.score > y.score : x.index > y.index;
    });
    int kept_slots = 0;
    for (int i = 0; i < n_chunks; ++i) {
      const Chunk& ch = chunks[i];
      const int a = ch.index * L, b = std::min(len, a + L);
      if (i < n_keep || ch.forced) {
        kept_slots += b - a;
        continue;
      }
      for (int j = a; j < b; ++j) {
        state[j] = kDropped;
        if (policy.evicts()) rank[j] = kept_slots + 1;  // a dropped chunk's slots share its rank
      }
      kept_slots += b - a;
    }
  }
  share_decision(ranking, unit, mean, c);
}

// A unit of several segments (layer or model granularity) whose segments
// hold different positions: positions are ranked by the mean statistic of
// the segments holding them, and each segment keeps the best k of its own.
void choose_in_shared_unit(const Policy& policy, const KvBook& book, const std::vector<int>& unit,
                           const std::function<const std::vector<float>&(int)>& stats, int newest, int step,
                           const Limits& lim, SlotChoice& c) {
  const auto& r = policy.resolved();
  const Ranking ranking = policy.ranking();
  int max_pos = -1;
  for (int seg : unit)
    for (int p : book.positions(seg)) max_pos = std::max(max_pos, p);
  const std::size_t P = static_cast<std::size_t>(max_pos + 1);
  std::vector<int> slot_entry(P, -1);
  std::vector<Entry> entries;
  std::vector<Entry> by_pos(P);
  for (int seg : unit) {
    const auto& pos = book.positions(seg);
    const std::vector<float>* st = ranking == Ranking::Statistic ? &stats(seg) : nullptr;
    for (std::size_t j = 0; j < pos.size(); ++j) {
      Entry& e = by_pos[pos[j]];
      e.pos = pos[j];
      if (st) e.score += (*st)[j];
      ++e.count;
    }
  }
  for (std::size_t p = 0; p < P; ++p)
    if (by_pos[p].count > 0) {
      slot_entry[p] = static_cast<int>(entries.size());
      entries.push_back(by_pos[p]);
    }
  for (Entry& e : entries) {
    switch (ranking) {
      case Ranking::Statistic: e.score /= e.count; break;
      case Ranking::Recency: e.score = e.pos; break;
      case Ranking::Random: e.score = random_score(r, step, unit[0], e.pos); break;
      case Ranking::None: e.score = std::numeric_limits<double>::quiet_NaN(); break;
    }
    e.prot = e.pos < lim.s || e.pos > newest - lim.w;
    e.forced_out = !e.prot && e.pos == lim.exit_pos;
  }

  // Each segment keeps k of the positions it holds: protected ones stay,
  // and of the others the best by the unit's ranking. A segment holding
  // few of the unit's best positions keeps its own next best instead of
  // falling below k (the segments of a unit hold different positions only
  // after the granularity changed during the run; once they hold the same
  // positions, choose_in_aligned_unit takes over with the same result).
  std::vector<int> rank_of(P, 0), candidates, dropped;
  std::vector<Entry> mine;
  for (int seg : unit) {
    const auto& pos = book.positions(seg);
    mine.clear();
    for (int p : pos) mine.push_back(entries[slot_entry[p]]);
    candidates.clear();
    dropped.clear();
    int n_prot = 0;
    for (std::size_t i = 0; i < mine.size(); ++i) {
      if (mine[i].prot) ++n_prot;
      else candidates.push_back(static_cast<int>(i));
    }
    const bool over = ranking != Ranking::None && static_cast<int>(mine.size()) > lim.k && !lim.hold;
    const int room = std::max(0, lim.k - n_prot);
    if (over && static_cast<int>(candidates.size()) > room) {
      // Partition, not sort: the best `room` candidates first, in O(n).
      auto cmp = [&](int a, int b) { return better(mine[a], mine[b]); };
      std::nth_element(candidates.begin(), candidates.begin() + room, candidates.end(), cmp);
      dropped.assign(candidates.begin() + room, candidates.end());
      if (policy.evicts()) rank_entries(mine, dropped, rank_of);
    }
    std::vector<uint8_t>& state = c.state[seg];
    for (std::size_t j = 0; j < pos.size(); ++j) {
      state[j] = mine[j].prot ? kProtected : kKept;
      c.rank[seg][j] = 0;
      if (ranking == Ranking::Statistic || ranking == Ranking::Random)
        c.score[seg][j] = static_cast<float>(mine[j].score);
    }
    for (int i : dropped) {
      state[i] = kDropped;
      if (policy.evicts()) c.rank[seg][i] = rank_of[mine[i].pos];
    }
  }
}

// AdaKV's head-adaptive split (HeadBudgets::Adaptive) of one layer's
// budget among its KV heads `unit`, each ranked by its own statistic: the
// layer keeps k slots per head in all. Protected slots stay where they
// are; each head first keeps its best n_safe = max(1, int(k x safeguard))
// slots (0 with a safeguard of 0), its protected ones counting first; the rest of the layer's room goes
// to its best remaining candidates whichever head holds them (higher
// score, then newer position, then the lower head). kvpress's AdaKVPress
// with its alpha_safeguard (docs/policies.md, "head budgets").
void choose_in_layer_adaptive(const Policy& policy, const KvBook& book, const std::vector<int>& unit,
                              const std::function<const std::vector<float>&(int)>& stats, int newest, const Limits& lim,
                              SlotChoice& c) {
  const double alpha = policy.resolved().params.number("safeguard");
  struct Cand {
    float score;
    int pos, seg, slot;
  };
  auto better_cand = [](const Cand& a, const Cand& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.pos != b.pos) return a.pos > b.pos;
    return a.seg < b.seg;
  };
  std::vector<Cand> pool, all_candidates;
  int room = 0;  // the layer's slots for candidates: k per head less its protected ones
  for (int seg : unit) {
    const auto& pos = book.positions(seg);
    const int len = static_cast<int>(pos.size());
    auto& state = c.state[seg];
    const auto [j0, j1] = mark_protection(pos, lim, newest, state);
    const std::vector<float>& st = stats(seg);
    std::copy(st.begin(), st.begin() + len, c.score[seg].begin());
    const int seg_room = std::max(0, lim.k - (len - (j1 - j0)));
    room += seg_room;
    std::vector<Cand> mine;
    for (int j = j0; j < j1; ++j) {
      if (pos[j] == lim.exit_pos) {  // Keyformer's code: dropped without competing
        state[j] = kDropped;
        continue;
      }
      mine.push_back({st[j], pos[j], seg, j});
    }
    all_candidates.insert(all_candidates.end(), mine.begin(), mine.end());
    // This head's safeguarded best, kept whatever the other heads hold; its
    // protected slots are its best and count first (kvpress scores SnapKV's
    // window above every other key, so the safeguard takes them first).
    int n_safe = alpha > 0 ? std::max(1, static_cast<int>(lim.k * alpha)) : 0;
    n_safe = std::min({std::max(0, n_safe - (len - (j1 - j0))), seg_room, static_cast<int>(mine.size())});
    std::nth_element(mine.begin(), mine.begin() + n_safe, mine.end(), better_cand);
    room -= n_safe;
    pool.insert(pool.end(), mine.begin() + n_safe, mine.end());
  }
  room = std::max(0, std::min(room, static_cast<int>(pool.size())));
  std::nth_element(pool.begin(), pool.begin() + room, pool.end(), better_cand);
  std::vector<Cand> dropped(pool.begin() + room, pool.end());
  for (const Cand& d : dropped) c.state[d.seg][d.slot] = kDropped;
  if (!policy.evicts() || dropped.empty()) return;
  // A dropped slot's rank: 1 + the layer's candidates that beat it, and
  // every protected slot (they stay whatever their score).
  std::sort(all_candidates.begin(), all_candidates.end(), better_cand);
  int protected_slots = 0;
  for (int seg : unit)
    for (uint8_t st : c.state[seg]) protected_slots += st == kProtected;
  for (const Cand& d : dropped) {
    const auto at = std::lower_bound(all_candidates.begin(), all_candidates.end(), d, better_cand);
    c.rank[d.seg][d.slot] = protected_slots + static_cast<int>(at - all_candidates.begin()) + 1;
  }
}

// CriticalKV's first stage: how many slots of a unit keep their place by
// score alone. kvpress: int((1 - r) n f) for a compression ratio r over the
// n prompt slots, at least 1 when f > 0; otherwise int(k f).
int first_stage_count(const ResolvedPolicy& r, int k, int len, int step) {
  const double f = r.params.number("first_stage");
  const int b =
      kvpress_prompt_cut(r, step) ? static_cast<int>((1.0 - r.params.budget.value) * len * f) : static_cast<int>(k * f);
  return f > 0 ? std::max(1, b) : 0;
}

// CriticalKV's score of a segment's slots: the best `first` competing slots
// [j0, j1) by score (the newer first on a tie) keep their place (the
// largest float); the others score (s + 1e-4) x w, w the value weight.
// Protected slots keep their score (they stay whatever it is).
void critical_scores(const std::vector<float>& s, const std::vector<float>& w, int len, int j0, int j1, int first,
                     std::vector<float>& out) {
  constexpr float kEpsilon = 1e-4f;  // kvpress's default epsilon
  if (static_cast<int>(w.size()) < len) throw Error("selection", "CriticalKV", "value weights missing for some slots");
  out.assign(s.begin(), s.begin() + len);
  for (int j = j0; j < j1; ++j) out[j] = (s[j] + kEpsilon) * w[j];
  first = std::clamp(first, 0, j1 - j0);
  if (first == 0) return;
  std::vector<int> order(j1 - j0);
  for (int j = j0; j < j1; ++j) order[j - j0] = j;
  std::nth_element(order.begin(), order.begin() + (first - 1), order.end(),
                   [&](int a, int b) { return s[a] != s[b] ? s[a] > s[b] : a > b; });
  for (int i = 0; i < first; ++i) out[order[i]] = std::numeric_limits<float>::max();
}

}  // namespace

void choose_slots(const Policy& policy, const KvBook& book, const std::function<const std::vector<float>&(int)>& stats,
                  int newest, int step, SlotChoice& c, SelectionScratch& scratch, const SlotValues* value_weights) {
  const auto& r = policy.resolved();
  const KvLayout& lay = book.layout();
  const int S = lay.n_segments();
  // Sized to the segments, reusing the vectors' storage from the last step.
  c.keep.resize(S);
  c.state.resize(S);
  c.score.resize(S);
  c.rank.resize(S);
  c.dropped = 0;
  const bool statistic = policy.ranking() == Ranking::Statistic;
  const bool per_segment = r.granularity == Granularity::KvHead;
  // choose_in_segment writes every state, and every score when the ranking
  // has one; the rest starts from kept / NaN / no rank.
  const bool scored = statistic || policy.ranking() == Ranking::Random;
  const Limits lim = limits_of(r, newest, step);
  // A large model holds a million slots or more (llama-2-7b: 1,024 segments
  // of ~1,000): the per-segment work runs as parallel tasks over runs of
  // segments, which write disjoint parts of the choice. Each segment's
  // result depends on nothing another task touches, so the choice is the
  // same for any number of threads.
  const int lanes = runs_for(S, book.total_slots());
  auto over_lanes = [&](auto&& segment_work) { parallel_runs(S, lanes, segment_work); };
  // A policy that ranks by a function of its statistic (kvpress's
  // normalisations, SnapKV's pooling) ranks every segment by that instead.
  std::function<const std::vector<float>&(int)> rescored_stats;
  const auto* ranked_by = &stats;
  if (statistic && policy.rescores()) {
    scratch.rescored.resize(S);
    over_lanes([&](int, int s) {
      const auto& pos = book.positions(s);
      const auto [j0, j1] = competing_range(pos, lim, newest);
      scratch.rescored[s].resize(pos.size());
      policy.rescore(stats(s).data(), pos.data(), static_cast<int>(pos.size()), j0, j1, newest,
                     scratch.rescored[s].data());
    });
    rescored_stats = [&scratch](int s) -> const std::vector<float>& { return scratch.rescored[s]; };
    ranked_by = &rescored_stats;
  }
  // CriticalKV weighs those scores by the slots' value norms (after its first stage).
  std::function<const std::vector<float>&(int)> critical_stats;
  if (statistic && r.critical) {
    if (!value_weights) throw Error("selection", "CriticalKV", "the backend's value weights were not passed");
    scratch.critical.resize(S);
    const auto& base = *ranked_by;
    over_lanes([&](int, int s) {
      const auto& pos = book.positions(s);
      Limits seg_lim = lim;
      seg_lim.k += policy.segment_budget(lay, s) - r.k;
      const auto [j0, j1] = competing_range(pos, seg_lim, newest);
      const int first = first_stage_count(r, seg_lim.k, static_cast<int>(pos.size()), step) - (j0 + book.len(s) - j1);
      critical_scores(base(s), (*value_weights)(s), static_cast<int>(pos.size()), j0, j1, first, scratch.critical[s]);
    });
    critical_stats = [&scratch](int s) -> const std::vector<float>& { return scratch.critical[s]; };
    ranked_by = &critical_stats;
  }
  const auto& ranked = *ranked_by;
  over_lanes([&](int, int s) {
    const int len = book.len(s);
    if (per_segment) c.state[s].resize(len);
    else c.state[s].assign(len, kKept);
    if (per_segment && scored) c.score[s].resize(len);
    else c.score[s].assign(len, std::numeric_limits<float>::quiet_NaN());
    c.rank[s].assign(len, 0);
  });
  const bool adaptive = per_segment && statistic && r.params.head_budgets == HeadBudgets::Adaptive &&
                        policy_spec(r.params.kind).uses("head_budgets");
  if (adaptive) {
    // Each layer's heads decide together; nothing to split while a layer holds what it may.
    const auto units = decision_units(lay, Granularity::Layer);
    parallel_runs(static_cast<int>(units.size()), runs_for(static_cast<int>(units.size()), book.total_slots()),
                  [&](int, int u) {
                    Limits layer_lim = lim;
                    layer_lim.k += policy.segment_budget(lay, units[u][0]) - r.k;
                    if (!layer_lim.hold) choose_in_layer_adaptive(policy, book, units[u], ranked, newest, layer_lim, c);
                    else
                      for (int s : units[u]) {
                        mark_protection(book.positions(s), layer_lim, newest, c.state[s]);
                        std::copy(ranked(s).begin(), ranked(s).begin() + book.len(s), c.score[s].begin());
                      }
                  });
  } else if (per_segment) {
    if (scratch.pivot_hint.size() < static_cast<std::size_t>(S)) scratch.pivot_hint.resize(S, 0);
    if (scratch.lanes.size() < static_cast<std::size_t>(lanes)) scratch.lanes.resize(lanes);
    over_lanes([&](int lane, int s) {
      Limits seg_lim = lim;
      seg_lim.k += policy.segment_budget(lay, s) - r.k;  // a budget shaped by depth (PyramidKV)
      choose_in_segment(policy, book, s, statistic ? &ranked(s) : nullptr, newest, step, seg_lim, scratch.lanes[lane],
                        scratch.pivot_hint, c);
    });
  } else {
    for (const auto& unit : decision_units(lay, r.granularity)) {
      // A unit of one layer takes that layer's budget; a model-wide unit k.
      Limits unit_lim = lim;
      if (r.granularity == Granularity::Layer) unit_lim.k += policy.segment_budget(lay, unit[0]) - r.k;
      // ChunkKV's chunks need one slot order for the layer; after a change
      // of granularity mid-run its heads may differ, and slots compete one by one.
      if (r.chunk > 0 && r.granularity == Granularity::Layer && holds_same_positions(book, unit))
        choose_in_chunks(policy, book, unit, ranked, newest, step, unit_lim, scratch, c);
      else if (holds_same_positions(book, unit))
        choose_in_aligned_unit(policy, book, unit, ranked, newest, step, unit_lim, scratch, c);
      else choose_in_shared_unit(policy, book, unit, ranked, newest, step, unit_lim, c);
    }
  }
  const bool evicts = policy.evicts();
  over_lanes([&](int, int s) {
    auto& keep = c.keep[s];
    const std::size_t len = c.state[s].size();
    keep.resize(len);
    std::size_t kept = 0;
    for (std::size_t j = 0; j < len; ++j) {  // branch-free compaction of the kept slot indices
      keep[kept] = static_cast<int>(j);
      kept += !(evicts && c.state[s][j] == kDropped);
    }
    keep.resize(kept);
  });
  for (int s = 0; s < S; ++s) c.dropped += static_cast<int>(c.state[s].size() - c.keep[s].size());
}

SlotChoice choose_slots(const Policy& policy, const KvBook& book,
                        const std::function<const std::vector<float>&(int)>& stats, int newest, int step,
                        const SlotValues* value_weights) {
  SlotChoice c;
  SelectionScratch scratch;
  choose_slots(policy, book, stats, newest, step, c, scratch, value_weights);
  return c;
}

}  // namespace kvscope
