#include "figures/ticks.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <numeric>

namespace kvscope {

double nice_step(double span, int max_ticks) {
  if (!(span > 0) || !std::isfinite(span)) return 1;
  max_ticks = std::max(max_ticks, 1);
  const double raw = span / max_ticks;
  double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (;;) {
    for (double m : {1.0, 2.0, 5.0})
      if (m * p >= raw * (1 - 1e-9)) return m * p;
    p *= 10;
  }
}

std::vector<double> ticks_in(double lo, double hi, double step) {
  std::vector<double> out;
  if (!(step > 0) || !(hi >= lo)) return out;
  const double eps = step * 1e-6;
  for (double k = std::ceil((lo - eps) / step); k * step <= hi + eps && out.size() < 1000; k += 1) {
    const double v = k * step;
    out.push_back(std::abs(v) < eps ? 0.0 : v);  // never "-0"
  }
  return out;
}

std::string tick_label(double value, double step) {
  char buf[48];
  const double mag = std::max(std::abs(value), step);
  if (mag >= 1e6 || step < 1e-5) {
    std::snprintf(buf, sizeof(buf), "%.3g", value);
  } else {
    const int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
    std::snprintf(buf, sizeof(buf), "%.*f", decimals, std::abs(value) < step * 1e-6 ? 0.0 : value);
  }
  return buf;
}

std::string exact_tick_label(double value) {
  char buf[48];
  // Fixed notation ("10", "0.25"), with the fewest decimals that read back;
  // exponents only far from the budgets' range.
  if (std::abs(value) < 1e15 && (value == 0 || std::abs(value) >= 1e-6))
    for (int decimals = 0; decimals <= 20; ++decimals) {
      std::snprintf(buf, sizeof(buf), "%.*f", decimals, value);
      if (std::strtod(buf, nullptr) == value) return buf;
    }
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof(buf), "%.*g", digits, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  return buf;
}

std::vector<int> decades_in(double lo, double hi, int max_ticks) {
  const double eps = 1e-9;
  std::vector<int> ks;
  for (int k = int(std::ceil(std::log10(lo) - eps)); k <= int(std::floor(std::log10(hi) + eps)); ++k) ks.push_back(k);
  if (int(ks.size()) > max_ticks) {
    const int stride = (int(ks.size()) + max_ticks - 1) / max_ticks;
    std::erase_if(ks, [&](int k) { return ((k % stride) + stride) % stride != 0; });
  }
  return ks;
}

std::string decade_label(int k) {
  if (std::abs(k) <= 3) {
    char buf[16];
    std::snprintf(buf, sizeof(buf), "%.*f", std::max(0, -k), std::pow(10.0, k));
    return buf;
  }
  // The exponent in superscript characters, not Pango's <sup> markup:
  // Pango 1.50 sized <sup> text against the device, so on a PNG at 150 dpi
  // the exponent came out twice the size of the "10". Plain characters read
  // the same on every surface, and select and search as text.
  static const char* const kDigits[10] = {"\u2070", "\u00b9", "\u00b2", "\u00b3", "\u2074",
                                          "\u2075", "\u2076", "\u2077", "\u2078", "\u2079"};
  std::string out = k < 0 ? "10\u207b" : "10";  // superscript minus
  for (char d : std::to_string(std::abs(k))) out += kDigits[d - '0'];
  return out;
}

int label_stride(double pitch, double extent, double gap) {
  if (!(pitch > 0)) return 1;
  for (int p = 1;; p *= 10)
    for (int m : {1, 2, 5})
      if (m * p * pitch >= extent + gap || m * p >= 100'000'000) return m * p;
}

std::vector<int> place_labels(const std::vector<double>& centres, const std::vector<double>& extents, double gap,
                              const std::vector<int>& first) {
  const int n = static_cast<int>(centres.size());
  std::vector<std::pair<double, double>> taken;  // [lo, hi] of placed labels
  std::vector<int> kept;
  auto try_place = [&](int i) {
    if (i < 0 || i >= n) return;
    const double lo = centres[i] - extents[i] / 2 - gap / 2, hi = centres[i] + extents[i] / 2 + gap / 2;
    for (const auto& [a, b] : taken)
      if (lo < b && a < hi) return;
    taken.emplace_back(lo, hi);
    kept.push_back(i);
  };
  for (int i : first) try_place(i);
  for (int i = 0; i < n; ++i) try_place(i);
  std::sort(kept.begin(), kept.end());
  kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
  return kept;
}

}  // namespace kvscope
