// Held-out evaluation sets (JSON lines of {"prompt", "answer"}) run through
// sessions: answer accuracy (the greedy continuation is exactly the answer)
// and NLL, under any policy and sharing layout. One teacher-forced run per
// item gives both: greedy decoding reproduces the answer exactly when the
// policy's argmax equals the answer token at every answer position, and the
// cache evolves the same way in both.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "bundle/model_bundle.h"
#include "session/session_config.h"

namespace kvscope {

struct EvalItem {
  std::string prompt, answer;
  // Where it came from, for messages: "DATASET:LINE", with " (item ID)"
  // when the line has an "id" field.
  std::string where;
};

// Throws kvscope::Error("<file>:<line>", field, ...) for bad lines.
std::vector<EvalItem> load_eval_set(const std::filesystem::path& path);

// Every item's prompt and answer as token ids, checked before any run: an
// item whose prompt plus answer (or plus max_new_tokens, without one) is
// longer than the model's positions throws kvscope::Error naming it (file,
// line, id), so no run fails after others have done their work.
struct EncodedItems {
  std::vector<std::vector<int>> prompts, answers;
};
EncodedItems encode_eval_items(const ModelBundle& bundle, int max_new_tokens, const std::vector<EvalItem>& items);

// One item's values, for error bars over items.
struct EvalItemResult {
  bool scored = false;   // it has an answer
  bool correct = false;
  double answer_nll = 0;  // mean over its answer tokens (the first, predicted by the prefill, included)
  // Means over its decode steps, step 0 left out (with metrics and at least one decode step).
  bool has_metrics = false;
  double kv_bytes = 0;  // the policy cache at the end of the item
  double kl = 0, top1_agreement = 0, recall = 0, similarity = 0;
};

struct EvalResult {
  int items = 0;
  int scored = 0;   // items with an answer
  int correct = 0;
  double answer_nll = 0;  // summed over answer tokens
  int answer_tokens = 0;
  double answer_nll_item_sum = 0;  // summed per-item means (EvalItemResult::answer_nll)
  double text_nll = 0;    // summed over every predicted token of prompt + answer (full cache only)
  int text_tokens = 0;
  double kv_bytes = 0, kv_bytes_full = 0;  // summed at the end of each item
  double kl = 0, recall = 0, similarity = 0;  // summed means per item (with metrics)
  int metric_items = 0;
  std::vector<EvalItemResult> per_item;  // in the order of the items

  double accuracy() const { return scored ? double(correct) / scored : 0; }
  // Per answer token, every token weighing the same (long answers weigh more).
  double mean_answer_nll() const { return answer_tokens ? answer_nll / answer_tokens : 0; }
  // Per item, each item's own mean weighing the same: what a sweep's
  // answer_nll column and its standard error are over.
  double mean_item_answer_nll() const { return scored ? answer_nll_item_sum / scored : 0; }
  double perplexity() const;  // over prompt + answer tokens (full cache runs)
};

// Runs `base` (policy, sharing, device) on every item. With the full policy
// the whole text is also scored in one pass for the perplexity. `progress`
// is called after each item.
EvalResult evaluate(std::shared_ptr<const ModelBundle> bundle, const SessionConfig& base,
                    const std::vector<EvalItem>& items, const std::function<void(int done)>& progress = {});

// Every config of `configs` on every item, item by item: the configs that
// can share a prompt's forward pass (Session::can_share_prefill: the same
// statistic, e.g. every budget of one policy, or window, sinks, random and
// the full cache together) run it once. Result k equals evaluate() of
// configs[k] bit for bit. `progress` is called after each run (item x
// config), with the number done.
std::vector<EvalResult> evaluate_many(std::shared_ptr<const ModelBundle> bundle,
                                      const std::vector<SessionConfig>& configs, const std::vector<EvalItem>& items,
                                      const std::function<void(int done)>& progress = {});
// The same with the items already encoded (encode_eval_items, checked
// against the configs' max_new_tokens): a sweep encodes its set once, not
// once per policy.
std::vector<EvalResult> evaluate_many(std::shared_ptr<const ModelBundle> bundle,
                                      const std::vector<SessionConfig>& configs, const std::vector<EvalItem>& items,
                                      const EncodedItems& encoded, const std::function<void(int done)>& progress = {});

}  // namespace kvscope
