#include "session/position_set.h"

#include <algorithm>
#include <bit>

#include "backend/cpu/simd_path.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define KVSCOPE_HAVE_AVX512_EXPAND 1
#endif

namespace kvscope {

void PositionSet::assign(const int* pos, int len, int positions) {
  pos_ = pos;
  len_ = static_cast<int>(std::lower_bound(pos, pos + len, positions) - pos);
  run_ = len_ > 0 && pos[len_ - 1] - pos[0] == len_ - 1;
  if (run_) return;
  const int n_groups = len_ > 0 ? pos[len_ - 1] / 16 + 1 : 0;
  groups_.assign(n_groups, 0);
  if (len_ == 0) return;
  // Positions ascend, so each group's bits gather in a register and are
  // stored once (an |= per slot into memory chains every slot of a group
  // through one store and load).
  int group = pos[0] >> 4;
  unsigned bits = 0;
  for (int j = 0; j < len_; ++j) {
    const int g = pos[j] >> 4;
    if (g != group) {
      groups_[group] = static_cast<uint16_t>(bits);
      group = g;
      bits = 0;
    }
    bits |= 1u << (pos[j] & 15);
  }
  groups_[group] = static_cast<uint16_t>(bits);
}

#ifdef KVSCOPE_HAVE_AVX512_EXPAND
namespace {

// One group of 16 positions per iteration: load as many values as the group
// holds positions, spread them to the held lanes, store those lanes only.
__attribute__((target("avx512f"))) void expand_avx512(const uint16_t* groups, int n_groups, const float* src,
                                                      float* dst) {
  for (int g = 0; g < n_groups; ++g) {
    const unsigned bits = groups[g];
    if (bits == 0) continue;
    const int n = std::popcount(bits);
    const __m512 v = _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1), src);
    _mm512_mask_storeu_ps(dst + 16 * g, static_cast<__mmask16>(bits),
                          _mm512_maskz_expand_ps(static_cast<__mmask16>(bits), v));
    src += n;
  }
}


}  // namespace
#endif

void PositionSet::expand(const float* src, float* dst) const {
#ifdef KVSCOPE_HAVE_AVX512_EXPAND
  if (!run_ && simd_path() == SimdPath::avx512) {
    expand_avx512(groups_.data(), static_cast<int>(groups_.size()), src, dst);
    return;
  }
#endif
  expand_portable(src, dst);
}

}  // namespace kvscope
