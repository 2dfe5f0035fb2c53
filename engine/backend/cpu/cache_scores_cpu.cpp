// Built with -ffp-contract=off (CMakeLists.txt): the CUDA kernel runs the
// same code with -fmad=false, so both backends give the same bits.
#include "backend/cpu/cache_scores_cpu.h"

#include "backend/cache_scores.h"

namespace kvscope::cpu {
namespace {

struct FloatRows {
  const float *keys, *values;
  int hd;
  const float* k(int j) const { return keys + static_cast<long>(j) * hd; }
  const float* v(int j) const { return values + static_cast<long>(j) * hd; }
  static float to_float(float x) { return x; }
};

}  // namespace

void cache_scores(const float* keys, const float* values, int len, int hd, const SlotStatRule& rule, float* out) {
  const FloatRows rows{keys, values, hd};
  if (rule.source == StatSource::Cur) {
    cur_scores(rows, len, hd, rule, out);
  } else {
    static thread_local LagKvScratch scratch;
    lagkv_scores(rows, len, hd, rule, scratch, out);
  }
}

}  // namespace kvscope::cpu
