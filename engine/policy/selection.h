// Choosing the slots to keep, shared by every policy: the first s positions
// (sinks) and the newest w (recent window) are protected; the other slots of
// a decision unit are ranked by the policy, and the best k - |protected|
// stay. A unit is one segment (kv_head), all segments of an owning layer
// (layer) or the whole cache (model); a shared decision ranks positions by
// the mean statistic of the segments holding them, and every segment keeps
// k of the positions it holds (segments hold different positions only
// after a change of granularity during a run).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "kv/kv_book.h"
#include "policy/policy.h"

namespace kvscope {

enum SlotState : uint8_t { kDropped = 0, kKept = 1, kProtected = 2 };

struct SlotChoice {
  std::vector<std::vector<int>> keep;       // [segment]: slot indices to keep, ascending
  std::vector<std::vector<uint8_t>> state;  // [segment][slot]: SlotState before retain
  std::vector<std::vector<float>> score;    // [segment][slot]: what the ranking used (NaN: nothing)
  std::vector<std::vector<int>> rank;       // [segment][slot]: a dropped slot's rank in its unit (1 = first
                                            // to keep), 0 for slots that stay and under non-evicting policies
  int dropped = 0;                          // slots not kept, over all segments
};

// `stats(seg)` gives the backend's per-slot statistic of a segment;
// `newest` is the absolute position of the latest token; `step` keys the
// random policy's draws. For policies that do not evict (full, ideal),
// `keep` holds every slot and `state` marks what an evicting policy with
// the same budget would keep (ideal's top k).
// `value_weights(seg)` gives the backend's Backend::value_weights, read
// under CriticalKV (ResolvedPolicy::critical) only.
using SlotValues = std::function<const std::vector<float>&(int)>;
SlotChoice choose_slots(const Policy& policy, const KvBook& book,
                        const std::function<const std::vector<float>&(int)>& stats, int newest, int step,
                        const SlotValues* value_weights = nullptr);

// The `step` that keys the random policy's draws for the choice a streaming
// prefill makes after prompt token i (not the last): negative, so it never
// equals a row (0 = after the prompt, then 1, 2, ...) and every such
// choice draws afresh.
inline int streaming_prefill_step(int prompt_token) { return -(prompt_token + 1); }

// Working storage of choose_slots, kept by a caller that chooses every step.
struct SelectionScratch {
  std::vector<uint64_t> keys, protected_keys;
  std::vector<float> recency;  // a segment's positions as scores (window, sink)
  std::vector<uint64_t> pivot_hint;  // [segment]: where the last step's partition fell (a speed hint only)
  std::vector<unsigned __int128> keys128, protected_keys128;  // shared decisions: (mean statistic, slot)
  std::vector<double> mean;
  std::vector<uint32_t> words;  // the random policy's draws of a unit
  std::vector<std::vector<float>> rescored;  // [segment]: Policy::rescore's scores, for policies that rescore
  std::vector<std::vector<float>> critical;  // [segment]: CriticalKV's weighted scores
  // Per-segment decisions run as parallel tasks over runs of segments, each
  // with its own keys, protected keys, recency and draws.
  std::vector<SelectionScratch> lanes;
};

// The same choice into `out`, reusing its storage and the scratch's (a
// session's per-step call allocates nothing once the cache stops growing).
void choose_slots(const Policy& policy, const KvBook& book, const std::function<const std::vector<float>&(int)>& stats,
                  int newest, int step, SlotChoice& out, SelectionScratch& scratch,
                  const SlotValues* value_weights = nullptr);

}  // namespace kvscope
