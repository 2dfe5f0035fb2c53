#include "reports/evaluation.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <stdexcept>

#include "common/error.h"
#include "io/json_file.h"
#include "session/generator.h"
#include "session/metric_sums.h"
#include "session/session.h"

namespace kvscope {

std::vector<EvalItem> load_eval_set(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw Error(path.string(), "", "cannot open the evaluation set");
  std::vector<EvalItem> items;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path.string() + ":" + std::to_string(n);
    const auto j = parse_json_text(line, where);
    JsonReader r(j, where);
    std::string named = where;
    if (j.is_object() && j.contains("id"))
      named += " (item " + (j["id"].is_string() ? j["id"].get<std::string>() : j["id"].dump()) + ")";
    items.push_back({r.get_string("prompt"), r.get_string("answer", ""), named});
  }
  if (items.empty()) throw Error(path.string(), "", "no items");
  return items;
}

double EvalResult::perplexity() const { return text_tokens ? std::exp(text_nll / text_tokens) : 0; }

EncodedItems encode_eval_items(const ModelBundle& bundle, int max_new_tokens, const std::vector<EvalItem>& items) {
  EncodedItems e;
  const auto& tok = *bundle.tokenizer;
  const int max_positions = bundle.config().max_positions;
  for (std::size_t i = 0; i < items.size(); ++i) {
    e.prompts.push_back(tok.encode(items[i].prompt, true));
    e.answers.push_back(tok.encode(items[i].answer, false));
    const std::size_t n = e.prompts.back().size(), answer = e.answers.back().size();
    const std::size_t planned = answer ? answer : static_cast<std::size_t>(std::max(max_new_tokens, 0));
    if (n + planned > static_cast<std::size_t>(max_positions))
      throw Error(items[i].where.empty() ? "item " + std::to_string(i + 1) : items[i].where, "",
                  std::to_string(n + planned) + " tokens (" + std::to_string(n) + " of prompt + " +
                      std::to_string(planned) + (answer ? " of answer" : " to generate") + "), more than the model's " +
                      std::to_string(max_positions) + " positions");
  }
  return e;
}

namespace {

// One finished item's numbers added to `res`.
void add_item(EvalResult& res, const Session& s) {
  const SessionConfig& c = s.config();
  const auto& ms = s.recorder().metrics();
  EvalItemResult item;
  ++res.items;
  if (!c.continuation_ids.empty()) {
    ++res.scored;
    bool all = true;
    double nll = 0;
    // Row t predicts continuation token t (rows 0..n-1 of n answer tokens).
    for (std::size_t t = 0; t < c.continuation_ids.size(); ++t) {
      all = all && ms[t].argmax == c.continuation_ids[t];
      res.answer_nll += ms[t].nll;
      nll += ms[t].nll;
      ++res.answer_tokens;
    }
    res.correct += all;
    item.scored = true;
    item.correct = all;
    item.answer_nll = nll / c.continuation_ids.size();
    res.answer_nll_item_sum += item.answer_nll;
  }
  const auto& last = ms.back();
  res.kv_bytes += static_cast<double>(last.kv_bytes);
  item.kv_bytes = static_cast<double>(last.kv_bytes);
  res.kv_bytes_full += static_cast<double>(last.kv_bytes_full);
  // The item's means over its decode steps (step 0 left out, as in every
  // mean over a run: session/metric_sums.h).
  if (const MetricSums t = sum_metrics(ms); c.recording.metrics && t.n) {
    item.kl = t.kl / t.n;
    item.top1_agreement = t.top1_agree / t.n;
    item.recall = t.attention_recall / t.n;
    item.similarity = t.ideal_similarity / t.n;
    res.kl += item.kl;
    res.recall += item.recall;
    res.similarity += item.similarity;
    ++res.metric_items;
    item.has_metrics = true;
  }
  res.per_item.push_back(item);
  if (c.policy.kind == PolicyKind::Full && c.sharing.kind == SharingLayout::Kind::Native) {
    // Perplexity of the whole text, one batched pass with the full cache.
    std::vector<int> all = c.prompt_ids;
    all.insert(all.end(), c.continuation_ids.begin(), c.continuation_ids.end());
    if (all.size() >= 2) {
      BackendOptions bo;
      bo.max_tokens = static_cast<int>(all.size());
      auto be = s.backend().spawn(bo);
      const auto sc = score_tokens(*be, all);
      res.text_nll += sc.mean_nll * sc.scored;
      res.text_tokens += sc.scored;
    }
  }
}

}  // namespace

std::vector<EvalResult> evaluate_many(std::shared_ptr<const ModelBundle> bundle,
                                      const std::vector<SessionConfig>& configs, const std::vector<EvalItem>& items,
                                      const std::function<void(int)>& progress) {
  int max_new = 0;
  for (const auto& c : configs) max_new = std::max(max_new, c.max_new_tokens);
  return evaluate_many(bundle, configs, items, encode_eval_items(*bundle, max_new, items), progress);
}

std::vector<EvalResult> evaluate_many(std::shared_ptr<const ModelBundle> bundle,
                                      const std::vector<SessionConfig>& configs, const std::vector<EvalItem>& items,
                                      const EncodedItems& e, const std::function<void(int)>& progress) {
  if (e.prompts.size() != items.size() || e.answers.size() != items.size())
    throw std::invalid_argument("evaluate_many: the encoded items are not those of the set");
  std::vector<EvalResult> results(configs.size());
  int done = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    // This item's prompts after their forward pass, waiting to choose: one
    // per statistic the configs accumulate (Session::run_prompt_forward).
    std::vector<std::unique_ptr<Session>> waiting;
    for (std::size_t k = 0; k < configs.size(); ++k) {
      SessionConfig c = configs[k];
      c.prompt = items[i].prompt;
      c.prompt_ids = e.prompts[i];
      c.continuation_ids = e.answers[i];
      c.continuation.reset();
      c.recording.layers = {0};
      c.recording.memory_mb = 64;
      Session s(bundle, c);
      if (c.policy.prefill == PrefillMode::OneShot && configs.size() > 1) {
        auto w = std::find_if(waiting.begin(), waiting.end(), [&](const auto& p) { return s.can_share_prefill(*p); });
        if (w == waiting.end()) {
          s.run_prompt_forward();
          waiting.push_back(s.fork());  // still waiting: the next configs start from it
        } else {
          s.prefill_from(**w);
        }
      }
      s.run_to_end();
      add_item(results[k], s);
      if (progress) progress(++done);
    }
  }
  return results;
}

EvalResult evaluate(std::shared_ptr<const ModelBundle> bundle, const SessionConfig& base,
                    const std::vector<EvalItem>& items, const std::function<void(int)>& progress) {
  return std::move(evaluate_many(std::move(bundle), {base}, items, progress).front());
}

}  // namespace kvscope
