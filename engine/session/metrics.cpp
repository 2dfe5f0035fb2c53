#include "session/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstring>

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

namespace {

// Float bits mapped to unsigned integers in the floats' order (negatives
// flipped, positives above them); -0 counts as +0, as it compares equal.
uint32_t ordered_key(float f) {
  if (f == 0.0f) f = 0.0f;
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

float from_ordered_key(uint32_t key) {
  const uint32_t b = (key & 0x80000000u) ? (key & 0x7fffffffu) : ~key;
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

}  // namespace

// Eight bits of the key at a time, most significant first: a histogram of
// the candidates' digit, the digit where the count from the top reaches k,
// and only the candidates with that digit go on. At most four passes, each
// over fewer values; the ideal-similarity metric calls this for every head
// and step, where nth_element was most of the metrics' cost.
float kth_largest(const std::vector<float>& v, int k) {
  std::vector<uint32_t> keys(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) keys[i] = ordered_key(v[i]);
  std::size_t n = keys.size();
  uint32_t prefix = 0;
  for (int shift = 24; shift >= 0; shift -= 8) {
    uint32_t count[256] = {};
    for (std::size_t i = 0; i < n; ++i) ++count[(keys[i] >> shift) & 0xffu];
    int digit = 255;
    for (; digit > 0 && static_cast<uint32_t>(k) > count[digit]; --digit) k -= static_cast<int>(count[digit]);
    prefix |= static_cast<uint32_t>(digit) << shift;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (((keys[i] >> shift) & 0xffu) == static_cast<uint32_t>(digit)) keys[kept++] = keys[i];
    n = kept;
  }
  return from_ordered_key(prefix);
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
  k = std::clamp(k, 1, static_cast<int>(full_row.size()));
  const float threshold = kth_largest(full_row, k);
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
