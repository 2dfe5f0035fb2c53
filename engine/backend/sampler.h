// Next-token sampling: greedy, temperature, top-k, top-p, driven by one
// Philox draw per step so that CPU and CUDA (which implements the same rule
// in a kernel) pick from the same random number.
#pragma once

#include <cstdint>
#include <span>

namespace kvscope {

struct SamplingParams {
  float temperature = 0.0f;  // <= 0: greedy (argmax, lowest id on ties)
  int top_k = 0;             // 0: off
  float top_p = 1.0f;        // 1: off
  uint64_t seed = 0;
};

// The rule, exactly:
//   p_i = exp((logit_i - max) / T), unnormalised.
//   top-k keeps every p_i >= the k-th largest p (ties at the edge kept).
//   top-p then keeps, in descending p order (ties by id), the shortest prefix
//   whose mass reaches top_p of the kept mass, plus anything tied with its
//   last member.
//   u = uniform01(Philox(seed; step, Sampling)); the token is the first id,
//   in id order, whose running kept mass exceeds u * (kept mass).
int sample_token(std::span<const float> logits, const SamplingParams& p, uint64_t step);

// Throws kvscope::Error naming the flag for out-of-range parameters.
void validate_sampling(const SamplingParams& p);

}  // namespace kvscope
