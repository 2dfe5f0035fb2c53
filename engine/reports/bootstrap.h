// Statistics over items for sweeps: the mean, its standard error, and a
// paired bootstrap confidence interval for the mean difference of two
// series measured on the same items. Pure functions; the resampling is
// counter-based (Philox keyed by a fixed seed, common/counter_random.h), so
// the same inputs give the same interval, bit for bit, on every run.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

namespace kvscope {

double mean_of(std::span<const double> v);  // NaN for no values
// Sample standard deviation / sqrt(n); NaN for fewer than two values.
double standard_error(std::span<const double> v);

struct Interval {
  double lo = 0, hi = 0;
};

// Which item the j-th draw of resample r takes, in [0, n).
using ResampleIndex = std::function<int(int r, int j, int n)>;

struct BootstrapOptions {
  int resamples = 10000;
  double level = 0.95;
  uint64_t seed = 0x6b7673636f7065ull;  // "kvscope": fixed, so reruns give the same bytes
  // The draws; empty: Philox(seed) on the counter (r, j), the high 32 bits
  // of word * n (uniform to within n / 2^32).
  ResampleIndex index;
};

// The percentile interval of `level` for mean(a - b) over the paired
// values a[i], b[i] (same length, at least one): `resamples` times, n
// indices are drawn with replacement and the mean of those differences
// taken; the interval is the (resamples * (1 - level) / 2)-th smallest and
// largest of those means, counted from 0 and rounded down (10,000
// resamples at 95%: the 250th and the 9,749th of the sorted means). One
// pair, or differences that are all equal to d, give [d, d].
Interval paired_bootstrap_interval(std::span<const double> a, std::span<const double> b,
                                   const BootstrapOptions& options = {});

}  // namespace kvscope
