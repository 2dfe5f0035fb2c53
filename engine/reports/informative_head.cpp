#include "reports/informative_head.h"

#include <cmath>
#include <limits>

#include "session/session.h"

namespace kvscope {
namespace {

// Positions this close to the query (itself included) are set aside:
// previous-token and local heads concentrate there, but what eviction takes
// away is the distant content.
constexpr int kLocal = 4;

}  // namespace

double head_informativeness(const Session& s, int layer, int head) {
  const Recorder& rec = s.recorder();
  if (!rec.records_head(layer, head)) return std::numeric_limits<double>::quiet_NaN();
  const int rows = rec.rows_recorded(), P = static_cast<int>(s.tokens().size());
  double total = 0;
  int counted = 0;
  for (int r = 0; r < rows; ++r) {
    const int query = s.prompt_length() - 1 + r;
    double rest = 0, plogp = 0;
    int m = 0;
    for (int p = 1; p < P; ++p) {
      if (p > query - kLocal && p <= query) continue;  // the query and its neighbours
      const double a = rec.attention(r, layer, head, p);
      if (!(a > 0)) continue;
      rest += a;
      plogp += a * std::log(a);
      ++m;
    }
    double score = 0;
    if (m == 1) score = rest;  // everything on one content token
    if (m >= 2 && rest > 0) {
      // Entropy of a / rest over the m positions: log(rest) - sum(a log a) / rest.
      const double h = std::log(rest) - plogp / rest;
      score = rest * std::max(0.0, 1.0 - h / std::log(double(m)));
    }
    total += score;
    ++counted;
  }
  return counted ? total / counted : 0;
}

HeadChoice informative_head(const Session& s) {
  HeadChoice best;
  best.score = -1;
  for (int layer : s.recorder().attention_layers())
    for (int h : s.recorder().attention_heads()) {
      const double v = head_informativeness(s, layer, h);
      if (v > best.score || (v == best.score && (layer < best.layer || (layer == best.layer && h < best.head))))
        best = {layer, h, v};
    }
  if (best.score < 0) return {};
  return best;
}

}  // namespace kvscope
