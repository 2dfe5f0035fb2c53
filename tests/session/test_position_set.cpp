// PositionSet copies per-slot values to their positions: the vector path
// (AVX-512 expand, where this CPU has it) and the portable one must both
// equal a plain store per slot, whatever the pattern of held positions.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "common/counter_random.h"
#include "session/position_set.h"

namespace kvscope {
namespace {

// Ascending positions below `span`, each held with probability `density`.
std::vector<int> held_positions(int span, float density, uint32_t seed) {
  std::vector<int> pos;
  for (int p = 0; p < span; ++p)
    if (uniform01(philox4(seed, static_cast<uint32_t>(p), 0, 0, 0).v[0]) < density) pos.push_back(p);
  return pos;
}

TEST(PositionSet, ExpandEqualsAStorePerSlot) {
  const int positions = 300;
  int cases = 0;
  for (float density : {0.0f, 0.05f, 0.5f, 0.9f, 1.0f})
    for (int span : {1, 15, 16, 17, 64, 250, 300, 340}) {  // 340: some slots beyond the row, left out
      for (uint32_t seed = 1; seed <= 3; ++seed) {
        std::vector<int> pos = held_positions(span, density, seed * 977 + span);
        if (density == 1.0f && seed == 2 && !pos.empty()) pos.erase(pos.begin());  // one run not at 0
        std::vector<float> src(pos.size());
        for (std::size_t j = 0; j < src.size(); ++j) src[j] = 1.0f + static_cast<float>(j);
        std::vector<float> want(positions, -7.0f);  // untouched cells keep what was there
        for (std::size_t j = 0; j < pos.size(); ++j)
          if (pos[j] < positions) want[pos[j]] = src[j];
        PositionSet set;
        set.assign(pos.data(), static_cast<int>(pos.size()), positions);
        std::vector<float> fast(positions, -7.0f), portable(positions, -7.0f);
        set.expand(src.data(), fast.data());
        set.expand_portable(src.data(), portable.data());
        ASSERT_EQ(fast, want) << "density " << density << " span " << span << " seed " << seed;
        ASSERT_EQ(portable, want) << "density " << density << " span " << span << " seed " << seed;
        ++cases;
      }
    }
  EXPECT_EQ(cases, 5 * 8 * 3);
}

}  // namespace
}  // namespace kvscope
