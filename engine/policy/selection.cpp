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

}  // namespace

SlotChoice choose_slots(const Policy& policy, const KvBook& book,
                        const std::function<const std::vector<float>&(int)>& stats, int newest, int step) {
  const auto& r = policy.resolved();
  const KvLayout& lay = book.layout();
  const int S = lay.n_segments();
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
  for (std::size_t u = 0; u < units.size(); ++u) {
    // Positions held by the unit, with the mean statistic over the segments holding each.
    struct Entry {
      int pos;
      double score = 0;
      int count = 0;
      bool prot = false;
    };
    // Dense tables indexed by absolute position (this runs every step for
    // every unit: ordered maps here cost more than the model's forward pass
    // on small models). Scanning positions in ascending order keeps the
    // order an ordered map would give, so results are unchanged.
    int max_pos = -1;
    for (int seg : units[u])
      for (int p : book.positions(seg)) max_pos = std::max(max_pos, p);
    std::vector<Entry> by_pos(static_cast<std::size_t>(max_pos + 1));
    for (int seg : units[u]) {
      const auto& pos = book.positions(seg);
      const std::vector<float>* st = policy.ranking() == Ranking::Statistic ? &stats(seg) : nullptr;
      for (int j = 0; j < static_cast<int>(pos.size()); ++j) {
        Entry& e = by_pos[pos[j]];
        e.pos = pos[j];
        if (st) e.score += (*st)[j];
        ++e.count;
      }
    }
    std::vector<Entry> entries;
    for (int p = 0; p <= max_pos; ++p) {
      Entry& e = by_pos[p];
      if (e.count == 0) continue;
      switch (policy.ranking()) {
        case Ranking::Statistic: e.score /= e.count; break;
        case Ranking::Recency: e.score = p; break;
        case Ranking::Random: {
          const auto rnd = philox4(r.params.seed, static_cast<uint32_t>(step), static_cast<uint32_t>(units[u][0]),
                                   static_cast<uint32_t>(p), static_cast<uint32_t>(RandomStream::EvictRandom));
          e.score = uniform01(rnd.v[0]);
          break;
        }
        case Ranking::None: e.score = std::numeric_limits<double>::quiet_NaN(); break;
      }
      e.prot = p < r.s || p > newest - r.w;
      entries.push_back(e);
    }
    // Best first: higher score, then newer (a deterministic tie-break).
    auto better = [](const Entry& a, const Entry& b) { return a.score != b.score ? a.score > b.score : a.pos > b.pos; };
    std::vector<Entry> ranked = entries;
    if (policy.ranking() != Ranking::None) std::sort(ranked.begin(), ranked.end(), better);
    std::vector<int> rank_of(by_pos.size(), 0);
    for (std::size_t i = 0; i < ranked.size(); ++i) rank_of[ranked[i].pos] = static_cast<int>(i) + 1;

    std::vector<uint8_t> verdict(by_pos.size(), kKept);  // position -> SlotState
    const bool over = policy.ranking() != Ranking::None && static_cast<int>(entries.size()) > r.k;
    int room = r.k;
    for (const auto& e : entries)
      if (e.prot) --room;
    for (const auto& e : ranked) {
      if (e.prot) verdict[e.pos] = kProtected;
      else if (!over || room > 0) {
        verdict[e.pos] = kKept;
        if (over) --room;
      } else {
        verdict[e.pos] = kDropped;
      }
    }
    for (int seg : units[u]) {
      const auto& pos = book.positions(seg);
      for (int j = 0; j < static_cast<int>(pos.size()); ++j) {
        const Entry& e = by_pos[pos[j]];
        c.state[seg][j] = verdict[pos[j]];
        c.rank[seg][j] = rank_of[pos[j]];
        if (policy.ranking() == Ranking::Statistic) c.score[seg][j] = static_cast<float>(e.score);
        else if (policy.ranking() == Ranking::Random) c.score[seg][j] = static_cast<float>(e.score);
      }
    }
  }
  for (int s = 0; s < S; ++s) {
    for (int j = 0; j < book.len(s); ++j) {
      if (c.state[s][j] != kDropped || !policy.evicts()) c.keep[s].push_back(j);
      if (c.state[s][j] == kDropped && policy.evicts()) ++c.dropped;
    }
  }
  return c;
}

}  // namespace kvscope
