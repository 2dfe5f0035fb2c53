// Plain decoding with the full cache: prefill the prompt in one batched
// pass, then one token per step until EOS or the token limit; and teacher
// forcing (scoring a given text). The eviction-aware stepper builds on the
// same calls.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/sampler.h"

namespace kvscope {

struct GenerateOptions {
  int max_new_tokens = 64;
  SamplingParams sampling;
  bool stop_at_eos = true;
};

struct GenerateResult {
  std::vector<int> new_tokens;
  std::string stop_reason;  // "eos" or "max_new_tokens"
  double prefill_seconds = 0, decode_seconds = 0;
};

// on_token(id) is called as each token is chosen (for streaming output).
GenerateResult generate_tokens(Backend& backend, const std::vector<int>& prompt, const GenerateOptions& opt,
                               const std::vector<int>& eos_ids, const std::function<void(int)>& on_token = {});

struct ScoreResult {
  std::vector<double> nll;  // per scored token, natural log
  double mean_nll = 0;
  double perplexity = 0;
  int scored = 0;
};

// Teacher forcing: NLL of tokens[first_scored..] given everything before,
// from one batched pass. first_scored >= 1.
ScoreResult score_tokens(Backend& backend, const std::vector<int>& tokens, int first_scored = 1);

// -log softmax(logits)[target], in double.
double token_nll(const float* logits, int vocab, int target);

}  // namespace kvscope
