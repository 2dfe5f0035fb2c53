// Per-step comparisons of a policy run against the shadow full-cache run on
// the same tokens (docs/policies.md, "Metrics"): KL of the next-token
// distributions, top-1 agreement, NLL, attention recall and ideal
// similarity. Pure functions over logits and over attention rows as the
// caches hold them.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace kvscope {

struct StepMetrics {
  int step = 0;
  int position = 0;         // absolute position of the token fed at this step
  int token = -1;           // that token
  int64_t kv_slots = 0;     // slots held over all segments after eviction
  int64_t kv_bytes = 0;     // policy cache after eviction
  int64_t kv_bytes_full = 0;  // a full cache of the same tokens in the layout in use
  // ... and in the checkpoint's own layout: with a sharing conversion
  // (--sharing gqa:G, mlkv:M) the saving against it is sharing and
  // eviction together; without one it equals kv_bytes_full.
  int64_t kv_bytes_native = 0;
  static constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  double nll = nan;         // -log p_policy(next token), when the next token is known
  double nll_full = nan;
  double kl = nan;          // KL(p_full || p_policy)
  int top1_agree = -1;      // 1 / 0; -1 without a shadow run
  int argmax = -1;          // the policy run's most likely next token (-1 when its logits stayed on the
                            // device, and in the last row, after which no token is chosen)
  int next_token = -1;      // the token that actually followed
  double attention_recall = nan;
  double ideal_similarity = nan;
  // The same comparisons against the checkpoint's own model (its native KV
  // layout, full cache): under a sharing conversion this is what conversion
  // and eviction cost together, while kl / top1_agree / nll_full above
  // compare against the converted model and show eviction alone. Without a
  // conversion the two are the same run and the values equal.
  double kl_native = nan;
  int top1_agree_native = -1;
  double nll_native = nan;
};

// KL(p || q) for p = softmax(full), q = softmax(policy), in nats.
double kl_divergence(const float* full_logits, const float* policy_logits, int vocab);
int argmax(const float* v, int n);

// What every comparison of a next-token distribution needs from its logits:
// the largest logit, where it first is, and log(sum exp(logit - max)) in
// double. A session computes it once per run and step (each is a pass of
// exp over the vocabulary) for the KL, the NLLs and the argmax.
struct LogitsNorm {
  float max = 0;
  int argmax = 0;
  double log_sum = 0;
};
LogitsNorm logits_norm(const float* logits, int vocab);
// kl_divergence and token_nll (session/generator.h) from the norms: the
// same bits as those.
double kl_divergence(const float* full_logits, const LogitsNorm& full, const float* policy_logits,
                     const LogitsNorm& policy, int vocab);
double token_nll(const float* logits, const LogitsNorm& norm, int target);
// The k-th largest of v (1 <= k <= v.size(), no NaN): the value
// std::nth_element with std::greater puts at k - 1, found by a radix select
// on the values' ordered bit patterns (linear, no comparisons to mispredict).
float kth_largest(const std::vector<float>& v, int k);
// Attention recall (the share of the full row's mass on the positions the
// policy run holds) and ideal similarity (cos(policy row, full row kept to
// its top k; of equal values the newest positions are taken)) of one head,
// from the rows as the caches hold them: the policy run's row over its
// slots, whose positions are ascending, and the full-cache row over every
// position 0..P-1. A session computes this for every head at every step
// (270 heads x 2,049 positions for SmolLM2 at 2048 tokens), so it makes no
// row over positions for the policy, finds the threshold and the ties of
// the top k in the radix select's passes, and sums in eight fixed lanes:
// the plain definitions to double rounding (tested), the same bits on
// every machine and thread count. `scratch` is reused between calls.
struct HeadAgreement {
  double recall = 0, similarity = 0;
};
struct AgreementScratch {
  std::vector<uint32_t> keys;
  std::vector<float> full_at_slots;
};
HeadAgreement head_agreement(std::span<const float> policy_row, std::span<const int> policy_positions,
                             std::span<const float> full_row, int k, AgreementScratch& scratch);

}  // namespace kvscope
