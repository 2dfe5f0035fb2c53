#include "session/metrics.h"

#include <algorithm>
#include <cmath>

namespace kvscope {
namespace {

// log-sum-exp of v[0..n) in double.
double logsumexp(const float* v, int n, float mx) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += std::exp(static_cast<double>(v[i]) - mx);
  return mx + std::log(s);
}

}  // namespace

int argmax(const float* v, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i)
    if (v[i] > v[best]) best = i;
  return best;
}

double kl_divergence(const float* p_logits, const float* q_logits, int vocab) {
  const double lp = logsumexp(p_logits, vocab, p_logits[argmax(p_logits, vocab)]);
  const double lq = logsumexp(q_logits, vocab, q_logits[argmax(q_logits, vocab)]);
  double kl = 0;
  for (int i = 0; i < vocab; ++i) {
    const double logp = p_logits[i] - lp, logq = q_logits[i] - lq;
    kl += std::exp(logp) * (logp - logq);
  }
  return std::max(0.0, kl);
}

double attention_recall(const std::vector<float>& full_row, const std::vector<uint8_t>& present) {
  double kept = 0, total = 0;
  for (std::size_t i = 0; i < full_row.size(); ++i) {
    total += full_row[i];
    if (present[i]) kept += full_row[i];
  }
  return total > 0 ? kept / total : 0.0;
}

double ideal_similarity(const std::vector<float>& policy_row, const std::vector<float>& full_row, int k) {
  std::vector<float> sorted(full_row);
  k = std::clamp(k, 1, static_cast<int>(sorted.size()));
  std::nth_element(sorted.begin(), sorted.begin() + (k - 1), sorted.end(), std::greater<float>());
  const float threshold = sorted[k - 1];
  // The top k of the full row: everything above the k-th value, then ties
  // at it from the newest position back until k are taken (the selection's
  // rule: of equal scores the newer slot stays).
  int equal_left = k;
  for (float v : full_row)
    if (v > threshold) --equal_left;
  std::vector<char> tie_taken(full_row.size(), 0);
  for (std::size_t i = full_row.size(); i-- > 0 && equal_left > 0;)
    if (full_row[i] == threshold) {
      tie_taken[i] = 1;
      --equal_left;
    }
  double dot = 0, np = 0, ni = 0;
  for (std::size_t i = 0; i < full_row.size(); ++i) {
    const float ideal = full_row[i] > threshold || tie_taken[i] ? full_row[i] : 0.0f;
    dot += double(policy_row[i]) * ideal;
    np += double(policy_row[i]) * policy_row[i];
    ni += double(ideal) * ideal;
  }
  return np > 0 && ni > 0 ? dot / std::sqrt(np * ni) : 0.0;
}

}  // namespace kvscope
