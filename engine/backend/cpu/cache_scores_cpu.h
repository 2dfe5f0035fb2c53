// The CPU backend's CUR and LagKV slot scores of one segment
// (backend/cache_scores.h), over its consecutive key and value rows.
#pragma once

#include "backend/slot_stats.h"

namespace kvscope::cpu {

// keys and values: `len` rows of `hd` floats; writes out[0, len).
void cache_scores(const float* keys, const float* values, int len, int hd, const SlotStatRule& rule, float* out);

}  // namespace kvscope::cpu
