// pyramidkv (PyramidKV, Cai et al. 2024): SnapKV's scores under budgets
// that shrink with depth, lower layers keeping more. The budgets follow
// kvpress's PyramidKVPress (get_layer_budget) exactly, from the prompt
// length q, the observation window w, the mean budget m (q x the budget's
// percentage, or its count) and the steepness beta:
//   min = m / beta, max = 2m - min;
//   if max >= q - w: max = q - w, min = 2m - max;
//   unless q >= max >= min >= w (then every layer keeps round(m), at least 1),
//   layer l of L keeps round(max - l (max - min) / (L - 1)),
// rounding halves to even as Python's round() does. The budgets sum to
// about L m, so the mean stays the budget k. While decoding each layer
// keeps its own budget.
#include <cmath>

#include "common/error.h"
#include "policy/snapkv.h"

namespace kvscope {
namespace {

class PyramidKvPolicy final : public SnapKvPolicy {
 public:
  explicit PyramidKvPolicy(const ResolvedPolicy& r) : SnapKvPolicy(r) {}
  int layer_budget(int layer, int n_layers) const override {
    const double q = r_.prompt_len, w = r_.w;
    const Amount& b = r_.params.budget;
    const double mean = b.exact_of(r_.prompt_len);
    const double beta = r_.params.number("beta");
    double lo = mean / beta, hi = 2 * mean - lo;
    if (hi >= q - w) {
      hi = q - w;
      lo = 2 * mean - hi;
    }
    // std::nearbyint rounds halves to even in the default rounding mode.
    if (!(q >= hi && hi >= lo && lo >= w)) return std::max(1, static_cast<int>(std::nearbyint(mean)));
    const double step = n_layers > 1 ? (hi - lo) / (n_layers - 1) : 0.0;
    return static_cast<int>(std::nearbyint(hi - layer * step));
  }
};

}  // namespace

std::unique_ptr<Policy> make_pyramidkv_policy(const ResolvedPolicy& r) {
  check_snapkv_kernel(r.params);
  if (r.granularity == Granularity::Model)
    throw Error::setting("policy.granularity", "pyramidkv gives each layer its own budget: use kv_head or layer");
  return std::make_unique<PyramidKvPolicy>(r);
}

}  // namespace kvscope
