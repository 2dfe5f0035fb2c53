#include "reports/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "common/counter_random.h"

namespace kvscope {
namespace {
// The counter's third word, keeping these draws apart from the other
// users of Philox (common/counter_random.h's RandomStream tags).
constexpr uint32_t kBootstrapStream = 0x424f4f54u;  // "BOOT"
}  // namespace

double mean_of(std::span<const double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

double standard_error(std::span<const double> v) {
  if (v.size() < 2) return std::numeric_limits<double>::quiet_NaN();
  const double m = mean_of(v);
  double ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  const double n = static_cast<double>(v.size());
  return std::sqrt(ss / (n - 1) / n);
}

Interval paired_bootstrap_interval(std::span<const double> a, std::span<const double> b, const BootstrapOptions& o) {
  if (a.size() != b.size() || a.empty())
    throw std::invalid_argument("paired_bootstrap_interval: unpaired or empty series");
  if (o.resamples < 1 || !(o.level > 0 && o.level < 1))
    throw std::invalid_argument("paired_bootstrap_interval: resamples >= 1 and 0 < level < 1");
  const int n = static_cast<int>(a.size());
  std::vector<double> d(a.size());
  for (int i = 0; i < n; ++i) d[i] = a[i] - b[i];
  auto draw = [&](int r, int j) {
    if (o.index) return o.index(r, j, n);
    const uint32_t word = philox4(o.seed, static_cast<uint32_t>(r), static_cast<uint32_t>(j), kBootstrapStream, 0).v[0];
    return static_cast<int>((static_cast<uint64_t>(word) * static_cast<uint64_t>(n)) >> 32);
  };
  // Each resample's mean as d[0] + mean(d - d[0]): equal differences then
  // give exactly d, not d rounded by n additions.
  const double c = d[0];
  std::vector<double> means(o.resamples);
  for (int r = 0; r < o.resamples; ++r) {
    double s = 0;
    for (int j = 0; j < n; ++j) s += d[draw(r, j)] - c;
    means[r] = c + s / n;
  }
  std::sort(means.begin(), means.end());
  // 1e-9: 10,000 x (1 - 0.9) / 2 is 499.99999999999994 in doubles, meant as 500.
  const int tail = static_cast<int>(std::floor(o.resamples * (1 - o.level) / 2 + 1e-9));
  return {means[tail], means[o.resamples - 1 - tail]};
}

}  // namespace kvscope
