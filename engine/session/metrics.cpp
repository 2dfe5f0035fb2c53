#include "session/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace kvscope {

int argmax(const float* v, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i)
    if (v[i] > v[best]) best = i;
  return best;
}

LogitsNorm logits_norm(const float* logits, int vocab) {
  LogitsNorm n;
  n.argmax = argmax(logits, vocab);
  n.max = logits[n.argmax];
  double s = 0;
  for (int i = 0; i < vocab; ++i) s += std::exp(static_cast<double>(logits[i]) - n.max);
  n.log_sum = std::log(s);
  return n;
}

double kl_divergence(const float* p_logits, const LogitsNorm& np, const float* q_logits, const LogitsNorm& nq,
                     int vocab) {
  const double lp = np.max + np.log_sum;
  const double lq = nq.max + nq.log_sum;
  double kl = 0;
  for (int i = 0; i < vocab; ++i) {
    const double logp = p_logits[i] - lp, logq = q_logits[i] - lq;
    kl += std::exp(logp) * (logp - logq);
  }
  return std::max(0.0, kl);
}

double kl_divergence(const float* p_logits, const float* q_logits, int vocab) {
  return kl_divergence(p_logits, logits_norm(p_logits, vocab), q_logits, logits_norm(q_logits, vocab), vocab);
}

double token_nll(const float* logits, const LogitsNorm& norm, int target) {
  return norm.log_sum - (static_cast<double>(logits[target]) - norm.max);
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

// count[d] = how many of keys[0, n) have d as their byte at `shift`. Four
// tables filled in turn and added at the end: most of a row's probabilities
// share their exponent, and one table would make their increments one
// chain through memory.
void byte_histogram(const uint32_t* keys, std::size_t n, int shift, uint32_t (&count)[256]) {
  uint32_t part[4][256] = {};
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (std::size_t t = 0; t < 4; ++t) ++part[t][(keys[i + t] >> shift) & 0xffu];
  for (; i < n; ++i) ++part[0][(keys[i] >> shift) & 0xffu];
  for (int d = 0; d < 256; ++d) count[d] = (part[0][d] + part[1][d]) + (part[2][d] + part[3][d]);
}

// The k-th largest of keys[0, n) and how many keys equal to it are among
// the k largest. Eight bits of the key at a time, most significant first:
// a histogram of the candidates' digit, the digit where the count from the
// top reaches k, and only the candidates with that digit go on (kept
// without a branch: which ones match is as random as the data). At most
// four passes, each over fewer values; nth_element was most of the
// metrics' cost. Overwrites keys.
struct KthKey {
  uint32_t key;
  int equal_taken;
};
KthKey kth_largest_key(uint32_t* keys, std::size_t n, int k) {
  uint32_t prefix = 0;
  for (int shift = 24; shift >= 0; shift -= 8) {
    uint32_t count[256];
    byte_histogram(keys, n, shift, count);
    int digit = 255;
    for (; digit > 0 && static_cast<uint32_t>(k) > count[digit]; --digit) k -= static_cast<int>(count[digit]);
    prefix |= static_cast<uint32_t>(digit) << shift;
    if (shift == 0) break;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < n; ++i) {
      keys[kept] = keys[i];
      kept += ((keys[i] >> shift) & 0xffu) == static_cast<uint32_t>(digit);
    }
    n = kept;
  }
  // What is left of k is the number of values equal to the k-th that the
  // top k takes.
  return {prefix, k};
}

// The sum of term(0..n) in eight fixed lanes (term i into lane i % 8),
// added up in one fixed tree: a loop the compiler vectorizes without
// reordering anything, the same bits on every machine.
template <class Term>
double lane_sum(std::size_t n, Term term) {
  double acc[8] = {};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (std::size_t l = 0; l < 8; ++l) acc[l] += term(i + l);
  for (std::size_t l = 0; i + l < n; ++l) acc[l] += term(i + l);
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

}  // namespace

float kth_largest(const std::vector<float>& v, int k) {
  std::vector<uint32_t> keys(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) keys[i] = ordered_key(v[i]);
  return from_ordered_key(kth_largest_key(keys.data(), keys.size(), k).key);
}

HeadAgreement head_agreement(std::span<const float> policy_row, std::span<const int> policy_positions,
                             std::span<const float> full_row, int k, AgreementScratch& scratch) {
  const std::size_t P = full_row.size(), n = policy_positions.size();
  HeadAgreement out;
  if (P == 0) return out;
  k = std::clamp(k, 1, static_cast<int>(P));
  auto& keys = scratch.keys;
  keys.resize(P);
  for (std::size_t i = 0; i < P; ++i) keys[i] = ordered_key(full_row[i]);
  const KthKey kth = kth_largest_key(keys.data(), P, k);
  const float threshold = from_ordered_key(kth.key);
  // The top k of the full row: everything above the k-th value, then ties
  // at it from the newest position back until k are taken (the selection's
  // rule: of equal scores the newer slot stays): positions >= tie_from.
  std::size_t tie_from = P;
  for (int left = kth.equal_taken; tie_from > 0 && left > 0;)
    if (full_row[--tie_from] == threshold) --left;
  // The full row at the policy's slots.
  auto& at = scratch.full_at_slots;
  at.resize(n);
  for (std::size_t j = 0; j < n; ++j) {
    const std::size_t i = static_cast<std::size_t>(policy_positions[j]);
    at[j] = i < P ? full_row[i] : 0.0f;  // always a position of the full row for a session's rows
  }
  // Which values are in the top k is as random as the data: the selections
  // below are written so that the compiler makes them selects, not branches
  // (this file is compiled with -fno-trapping-math for that), and the sums
  // vector code.
  const float* f = full_row.data();
  const float* p = policy_row.data();
  const float* f_at = at.data();
  const double total = lane_sum(P, [f](std::size_t i) { return double(f[i]); });
  const double kept = lane_sum(n, [f_at](std::size_t j) { return double(f_at[j]); });
  // ||ideal||^2 in two ranges, where the ties are not taken and where they are.
  const double below_ties = lane_sum(tie_from, [f, threshold](std::size_t i) {
    const double t = f[i] > threshold ? f[i] : 0.0f;
    return t * t;
  });
  const float* tail = f + tie_from;
  const double from_ties = lane_sum(P - tie_from, [tail, threshold](std::size_t i) {
    const double t = tail[i] >= threshold ? tail[i] : 0.0f;
    return t * t;
  });
  const double n_i = below_ties + from_ties;
  // The dot product in the same two ranges: slots before the first taken tie
  // and from it on.
  const std::size_t j_tie = static_cast<std::size_t>(
      std::lower_bound(policy_positions.begin(), policy_positions.end(), static_cast<long long>(tie_from),
                       [](int a, long long b) { return a < b; }) -
      policy_positions.begin());
  const double thr = threshold;
  const double dot_below = lane_sum(j_tie, [p, f_at, thr](std::size_t j) {
    const double v = f_at[j];
    return double(p[j]) * (v > thr ? v : 0.0);
  });
  const float* p_tail = p + j_tie;
  const float* f_at_tail = f_at + j_tie;
  const double dot_from = lane_sum(n - j_tie, [p_tail, f_at_tail, thr](std::size_t j) {
    const double v = f_at_tail[j];
    return double(p_tail[j]) * (v >= thr ? v : 0.0);
  });
  const double dot = dot_below + dot_from;
  const double n_p = lane_sum(n, [p](std::size_t j) { return double(p[j]) * p[j]; });
  out.recall = total > 0 ? kept / total : 0.0;
  out.similarity = n_p > 0 && n_i > 0 ? dot / std::sqrt(n_p * n_i) : 0.0;
  return out;
}

}  // namespace kvscope
