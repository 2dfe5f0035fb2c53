// CPU and CUDA keep the same masks: where they differ, the slots' statistics
// were a tie within rounding at the decision boundary. Needs a GPU.
#include <gtest/gtest.h>

#include <cmath>

#include "session_fixture.h"

namespace kvscope {
namespace {

TEST(CudaParity, MasksAgreeUpToTiesWithinRounding) {
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  for (PolicyKind k : {PolicyKind::H2O, PolicyKind::TOVA, PolicyKind::A2SF, PolicyKind::Keyformer, PolicyKind::SnapKV,
                       PolicyKind::Knorm, PolicyKind::KeyDiff}) {
    SessionConfig cfg = test::config(k, "50%", 16);
    if (k == PolicyKind::SnapKV) cfg.policy.window = Amount{4, false};  // an observation window inside the prompt
    cfg.policy.noise = NoiseKind::Gumbel;
    cfg.recording.metrics = false;
    Session cpu(test::bundle("llama_gqa"), cfg);
    cfg.device = "cuda";
    cfg.continuation_ids.clear();
    Session gpu(test::bundle("llama_gqa"), cfg);
    cpu.run_to_end();
    // Same tokens on both (teacher-forced to the CPU's), so caches are comparable.
    SessionConfig forced = cfg;
    forced.continuation_ids = cpu.generated();
    Session gpu_forced(test::bundle("llama_gqa"), forced);
    gpu_forced.run_to_end();
    const auto& a = cpu.recorder();
    const auto& b = gpu_forced.recorder();
    // Masks are identical until the first row where they are not; after it
    // the caches hold different tokens and later rows cannot be compared.
    int first = -1;
    for (int r = 0; r < a.rows_recorded() && first < 0; ++r)
      for (int seg = 0; seg < a.layout().n_segments() && first < 0; ++seg)
        for (int p = 0; p < a.positions(); ++p)
          if (a.mask(r, seg, p) != b.mask(r, seg, p)) {
            first = r;
            break;
          }
    if (first < 0) continue;
    // At that row every disagreement is a slot whose statistic sits at the
    // keep / evict boundary of its segment, within fp16 rounding.
    for (int seg = 0; seg < a.layout().n_segments(); ++seg) {
      float lowest_kept = INFINITY, highest_dropped = -INFINITY;
      for (int p = 0; p < a.positions(); ++p) {
        const uint8_t m = a.mask(first, seg, p);
        const float sc = a.score(first, seg, p);
        if (m == kMaskKept) lowest_kept = std::min(lowest_kept, sc);
        if (m == kEvictedNow) highest_dropped = std::max(highest_dropped, sc);
      }
      for (int p = 0; p < a.positions(); ++p) {
        if (a.mask(first, seg, p) == b.mask(first, seg, p)) continue;
        const float sc = a.score(first, seg, p);
        const float gap = std::min(std::abs(sc - lowest_kept), std::abs(sc - highest_dropped));
        EXPECT_LE(gap, 1e-2f * std::max(1.0f, std::abs(sc)))
            << policy_name(k) << " row " << first << " seg " << seg << " pos " << p << ": not a near-tie";
      }
    }
    (void)gpu;
  }
}

}  // namespace
}  // namespace kvscope
