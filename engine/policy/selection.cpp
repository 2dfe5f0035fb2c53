#include "policy/selection.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/counter_random.h"

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

struct Entry {
  int pos = 0;
  double score = 0;
  int count = 0;
  bool prot = false;
};

// Best first: higher score, then newer. A strict total order (positions are
// unique within a unit), so the set of the best m entries is the same
// however it is found.
bool better(const Entry& a, const Entry& b) { return a.score != b.score ? a.score > b.score : a.pos > b.pos; }

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
  for (std::size_t i = 0; i < order.size(); ++i) rank_of[entries[order[i]].pos] = static_cast<int>(i) + 1;
}

}  // namespace

SlotChoice choose_slots(const Policy& policy, const KvBook& book,
                        const std::function<const std::vector<float>&(int)>& stats, int newest, int step) {
  const auto& r = policy.resolved();
  const KvLayout& lay = book.layout();
  const int S = lay.n_segments();
  const Ranking ranking = policy.ranking();
  SlotChoice c;
  c.keep.resize(S);
  c.state.resize(S);
  c.score.resize(S);
  c.rank.resize(S);
  for (int s = 0; s < S; ++s) {
    const int len = book.len(s);
    c.state[s].assign(len, kKept);
    c.score[s].assign(len, std::numeric_limits<float>::quiet_NaN());
    c.rank[s].assign(len, 0);
  }
  const auto units = decision_units(lay, r.granularity);
  // Dense tables indexed by absolute position, reused across units (this
  // runs every step for every unit; it must cost little next to the
  // model's forward pass even on the tiny default model).
  std::vector<int> slot_entry, rank_of;
  std::vector<uint8_t> verdict;
  std::vector<Entry> entries;
  std::vector<int> candidates, dropped;
  for (const auto& unit : units) {
    // Positions held by the unit, ascending, with the mean statistic over
    // the segments holding each.
    int max_pos = -1;
    for (int seg : unit)
      for (int p : book.positions(seg)) max_pos = std::max(max_pos, p);
    const std::size_t P = static_cast<std::size_t>(max_pos + 1);
    slot_entry.assign(P, -1);
    entries.clear();
    if (unit.size() == 1) {
      // One segment: its slots hold distinct positions, one entry per slot.
      const auto& pos = book.positions(unit[0]);
      entries.resize(pos.size());
      for (std::size_t j = 0; j < pos.size(); ++j) {
        entries[j].pos = pos[j];
        entries[j].count = 1;
        slot_entry[pos[j]] = static_cast<int>(j);
      }
      if (ranking == Ranking::Statistic) {
        const std::vector<float>& st = stats(unit[0]);
        for (std::size_t j = 0; j < pos.size(); ++j) entries[j].score = st[j];
      }
    } else {
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
    }
    for (Entry& e : entries) {
      switch (ranking) {
        case Ranking::Statistic: e.score /= e.count; break;
        case Ranking::Recency: e.score = e.pos; break;
        case Ranking::Random: {
          const auto rnd = philox4(r.params.seed, static_cast<uint32_t>(step), static_cast<uint32_t>(unit[0]),
                                   static_cast<uint32_t>(e.pos), static_cast<uint32_t>(RandomStream::EvictRandom));
          e.score = uniform01(rnd.v[0]);
          break;
        }
        case Ranking::None: e.score = std::numeric_limits<double>::quiet_NaN(); break;
      }
      e.prot = e.pos < r.s || e.pos > newest - r.w;
    }

    // Protected slots stay; of the others the best k - |protected| stay.
    verdict.assign(P, kKept);
    rank_of.assign(P, 0);
    candidates.clear();
    int n_prot = 0;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (entries[i].prot) {
        verdict[entries[i].pos] = kProtected;
        ++n_prot;
      } else {
        candidates.push_back(static_cast<int>(i));
      }
    }
    const bool over = ranking != Ranking::None && static_cast<int>(entries.size()) > r.k;
    const int room = std::max(0, r.k - n_prot);
    dropped.clear();
    if (over && static_cast<int>(candidates.size()) > room) {
      // Partition, not sort: the best `room` candidates first, in O(n).
      auto cmp = [&](int a, int b) { return better(entries[a], entries[b]); };
      std::nth_element(candidates.begin(), candidates.begin() + room, candidates.end(), cmp);
      dropped.assign(candidates.begin() + room, candidates.end());
      for (int i : dropped) verdict[entries[i].pos] = kDropped;
      // Ranks go to eviction events; a policy that keeps everything (ideal)
      // has none, and ranking its whole cache every step would cost more
      // than its forward pass.
      if (policy.evicts()) rank_entries(entries, dropped, rank_of);
    }
    for (int seg : unit) {
      const auto& pos = book.positions(seg);
      for (std::size_t j = 0; j < pos.size(); ++j) {
        const Entry& e = entries[slot_entry[pos[j]]];
        c.state[seg][j] = verdict[pos[j]];
        c.rank[seg][j] = rank_of[pos[j]];
        if (ranking == Ranking::Statistic || ranking == Ranking::Random) c.score[seg][j] = static_cast<float>(e.score);
      }
    }
  }
  const bool evicts = policy.evicts();
  for (int s = 0; s < S; ++s) {
    c.keep[s].reserve(c.state[s].size());
    for (std::size_t j = 0; j < c.state[s].size(); ++j) {
      const bool drop = c.state[s][j] == kDropped && evicts;
      if (!drop) c.keep[s].push_back(static_cast<int>(j));
      c.dropped += drop;
    }
  }
  return c;
}

}  // namespace kvscope
