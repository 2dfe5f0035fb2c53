#include "session/generator.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "common/error.h"
#include "session/metrics.h"

namespace kvscope {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

double token_nll(const float* logits, int vocab, int target) {
  return token_nll(logits, logits_norm(logits, vocab), target);
}

GenerateResult generate_tokens(Backend& backend, const std::vector<int>& prompt, const GenerateOptions& opt,
                               const std::vector<int>& eos_ids, const std::function<void(int)>& on_token) {
  validate_sampling(opt.sampling);
  if (prompt.empty()) throw Error::setting("prompt", "the prompt has no tokens");
  GenerateResult r;
  ForwardOptions fo;
  fo.logits_to_host = false;  // the backend samples where the logits are
  ForwardOutput out;
  auto t0 = std::chrono::steady_clock::now();
  backend.forward(prompt, fo, out);
  r.prefill_seconds = seconds_since(t0);
  r.stop_reason = "max_new_tokens";
  t0 = std::chrono::steady_clock::now();
  for (int step = 0; step < opt.max_new_tokens; ++step) {
    const int tok = backend.sample(opt.sampling, static_cast<uint64_t>(step));
    r.new_tokens.push_back(tok);
    if (on_token) on_token(tok);
    if (opt.stop_at_eos && std::find(eos_ids.begin(), eos_ids.end(), tok) != eos_ids.end()) {
      r.stop_reason = "eos";
      break;
    }
    if (step + 1 == opt.max_new_tokens) break;
    const int one[1] = {tok};
    backend.forward(one, fo, out);
  }
  r.decode_seconds = seconds_since(t0);
  return r;
}

ScoreResult score_tokens(Backend& backend, const std::vector<int>& tokens, int first_scored) {
  if (tokens.size() < 2) throw Error("score", "text", "needs at least two tokens");
  first_scored = std::max(1, first_scored);
  ForwardOptions fo;
  fo.all_logits = true;
  ForwardOutput out;
  backend.forward(tokens, fo, out);
  const int vocab = backend.config().vocab_size;
  ScoreResult r;
  for (std::size_t i = static_cast<std::size_t>(first_scored); i < tokens.size(); ++i)
    r.nll.push_back(token_nll(out.logits.data() + (i - 1) * vocab, vocab, tokens[i]));
  r.scored = static_cast<int>(r.nll.size());
  double s = 0;
  for (double v : r.nll) s += v;
  r.mean_nll = r.scored ? s / r.scored : 0;
  r.perplexity = std::exp(r.mean_nll);
  return r;
}

}  // namespace kvscope
