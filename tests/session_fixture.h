// Sessions on the tiny golden checkpoints (they carry a tokenizer.json).
#pragma once

#include <map>
#include <memory>

#include "bundle/model_bundle.h"
#include "common/error.h"
#include "session/session.h"
#include "test_util.h"

namespace kvscope::test {

inline std::shared_ptr<const ModelBundle> bundle(const std::string& name) {
  static std::map<std::string, std::shared_ptr<const ModelBundle>> cache;
  auto& b = cache[name];
  if (!b) b = std::make_shared<const ModelBundle>(load_model_bundle(model_dir(name)));
  return b;
}

inline SessionConfig config(PolicyKind kind, const std::string& budget, int new_tokens = 12) {
  SessionConfig c;
  c.prompt = "The quick brown fox jumps over the lazy dog. Pack my box with five dozen jugs!";
  c.max_new_tokens = new_tokens;
  c.stop_at_eos = false;
  c.policy.kind = kind;
  c.policy.budget = Amount::parse(budget, "budget");
  c.seed = 11;
  c.policy.seed = 11;
  c.sampling.seed = 11;
  return c;
}

// The same with sampling (temperature 0.9, top-p 0.95), so that the
// sampler's draws are part of what a test compares.
inline SessionConfig sampled_config(PolicyKind kind, const std::string& budget, int new_tokens) {
  SessionConfig c = config(kind, budget, new_tokens);
  c.sampling.temperature = 0.9f;
  c.sampling.top_p = 0.95f;
  return c;
}

}  // namespace kvscope::test
