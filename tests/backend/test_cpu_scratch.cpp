// What the CPU backend keeps between calls: a prompt's activations and
// attention scores grow with its length (rows x width, rows x slots per
// task) and are returned before the head is read, so the decode steps
// that follow hold no more than those of a run that never had a prompt
// (bench/NOTES.md: Gemma 3's resident memory at long prompts).
#include <gtest/gtest.h>

#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/parallel.h"
#include "golden.h"
#include "model/loader.h"

namespace kvscope {
namespace {

constexpr int kPrompt = 56;

struct Held {
  std::size_t after_prompt = 0, after_step = 0, after_two_steps = 0;  // scratch_bytes()
  std::vector<float> logits;                                          // the last step's
};

// kPrompt tokens as one prompt call (or one token a call), then two decode
// steps, with the statistic `reduce` (Max keeps a contribution row per
// query row of a call).
Held run(bool as_prompt, ReaderReduce reduce) {
  const auto m = load_model_files(test::model_dir("llama_gqa"));
  const auto g = test::Golden::load("llama_gqa");
  BackendOptions bo;
  bo.max_tokens = 64;
  CpuBackend be(CpuModel::create(m.config, m.weights), bo);
  ForwardOptions fo;
  fo.stats.source = StatSource::Attention;
  fo.stats.reduce = reduce;
  fo.logits_to_host = true;
  ForwardOutput out;
  std::vector<int> prompt;
  for (int i = 0; i < kPrompt; ++i) prompt.push_back(g.prompt[i % g.prompt.size()]);
  if (as_prompt) {
    be.forward(prompt, fo, out);
  } else {
    for (const int t : prompt) be.forward(std::span<const int>(&t, 1), fo, out);
  }
  Held h;
  h.after_prompt = be.scratch_bytes();
  const int tok[1] = {g.prompt[1]};
  be.forward(tok, fo, out);
  h.after_step = be.scratch_bytes();
  be.forward(tok, fo, out);
  h.after_two_steps = be.scratch_bytes();
  h.logits = out.logits;
  return h;
}

TEST(CpuScratch, APromptsRowsAreNotKeptForTheDecodeSteps) {
  const auto m = load_model_files(test::model_dir("llama_gqa"));
  const std::size_t prompt_activations = std::size_t(kPrompt) * (m.config.hidden + m.config.intermediate) * 4;
  for (const ReaderReduce reduce : {ReaderReduce::Mean, ReaderReduce::Max}) {
    const Held prompt = run(true, reduce), steps = run(false, reduce);
    // Right after the prompt: less than its rows' activations (the head's
    // input is one row), and the steps that follow hold no more than a
    // run fed one token at a time, give or take the attention scratch of
    // the threads that happened to run a task (one per pool thread, a
    // step's scores for every query head at most).
    const std::size_t per_thread = std::size_t(m.config.n_heads) * (kPrompt + 2) * sizeof(float);
    const std::size_t slack = std::size_t(pool_threads() - 1) * per_thread;
    EXPECT_LT(prompt.after_prompt, prompt_activations);
    EXPECT_LT(prompt.after_step, prompt_activations);
    EXPECT_LE(prompt.after_step, steps.after_step + slack);
    // A step's scores grow with the slots, and a vector that grows at
    // most doubles its capacity.
    EXPECT_LE(prompt.after_two_steps, 2 * (steps.after_two_steps + slack));
    // The same logits either way (to rounding: a prompt's products are
    // matrix products, a step's matrix-vector products).
    ASSERT_EQ(prompt.logits.size(), steps.logits.size());
    for (std::size_t i = 0; i < prompt.logits.size(); ++i) EXPECT_NEAR(prompt.logits[i], steps.logits[i], 1e-4);
  }
}

}  // namespace
}  // namespace kvscope
