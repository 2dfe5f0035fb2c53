#include "backend/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "common/error.h"
#include "common/counter_random.h"

namespace kvscope {

void validate_sampling(const SamplingParams& p) {
  if (!(p.temperature >= 0) || !std::isfinite(p.temperature)) throw Error::setting("sampling.temperature", "must be >= 0");
  if (p.top_k < 0) throw Error::setting("sampling.top_k", "must be >= 0");
  if (!(p.top_p > 0 && p.top_p <= 1)) throw Error::setting("sampling.top_p", "must be in (0, 1]");
}

int sample_token(std::span<const float> logits, const SamplingParams& sp, uint64_t step) {
  const int V = static_cast<int>(logits.size());
  int best = 0;
  for (int i = 1; i < V; ++i)
    if (logits[i] > logits[best]) best = i;
  if (sp.temperature <= 0) return best;

  const float mx = logits[best];
  std::vector<float> p(V);
  for (int i = 0; i < V; ++i) p[i] = std::exp((logits[i] - mx) / sp.temperature);

  float threshold = 0.0f;  // keep p_i >= threshold
  if (sp.top_k > 0 && sp.top_k < V) {
    std::vector<float> tmp(p);
    std::nth_element(tmp.begin(), tmp.begin() + (sp.top_k - 1), tmp.end(), std::greater<float>());
    threshold = tmp[sp.top_k - 1];
  }
  if (sp.top_p < 1.0f) {
    std::vector<int> order;
    double kept = 0;
    for (int i = 0; i < V; ++i)
      if (p[i] >= threshold) {
        order.push_back(i);
        kept += p[i];
      }
    std::sort(order.begin(), order.end(), [&](int a, int b) { return p[a] != p[b] ? p[a] > p[b] : a < b; });
    double cum = 0;
    for (int i : order) {
      cum += p[i];
      if (cum >= sp.top_p * kept) {
        threshold = std::max(threshold, p[i]);
        break;
      }
    }
  }
  double total = 0;
  for (int i = 0; i < V; ++i)
    if (p[i] >= threshold) total += p[i];
  const auto r = philox4(sp.seed, static_cast<uint32_t>(step), static_cast<uint32_t>(step >> 32),
                         static_cast<uint32_t>(RandomStream::Sampling), 0);
  const double target = static_cast<double>(uniform01(r.v[0])) * total;
  double run = 0;
  int last = best;
  for (int i = 0; i < V; ++i) {
    if (p[i] < threshold) continue;
    run += p[i];
    last = i;
    if (run > target) return i;
  }
  return last;
}

}  // namespace kvscope
