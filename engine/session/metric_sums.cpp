#include "session/metric_sums.h"

#include <cmath>

namespace kvscope {

MetricSums sum_metrics(std::span<const StepMetrics> steps) {
  MetricSums t;
  for (const StepMetrics& m : steps) {
    if (!counts_in_means(m)) continue;
    if (!std::isnan(m.nll)) {
      t.nll += m.nll;
      ++t.n_nll;
    }
    if (m.top1_agree < 0) continue;
    t.kl += m.kl;
    t.top1_agree += m.top1_agree;
    t.attention_recall += m.attention_recall;
    t.ideal_similarity += m.ideal_similarity;
    t.kl_native += m.kl_native;
    t.top1_agree_native += m.top1_agree_native;
    ++t.n;
  }
  return t;
}

std::map<std::string, double> metric_means(const MetricSums& t) {
  std::map<std::string, double> out;
  if (t.n_nll) out["nll"] = t.nll / t.n_nll;
  if (t.n) {
    out["kl"] = t.kl / t.n;
    out["top1_agreement"] = t.top1_agree / t.n;
    out["attention_recall"] = t.attention_recall / t.n;
    out["ideal_similarity"] = t.ideal_similarity / t.n;
  }
  return out;
}

std::map<std::string, double> step_metric_values(const StepMetrics& m) {
  // The same tests as sum_metrics: a step counts toward a mean exactly
  // when it has a value here.
  std::map<std::string, double> out;
  if (!std::isnan(m.nll)) out["nll"] = m.nll;
  if (m.top1_agree >= 0) {
    out["kl"] = m.kl;
    out["top1_agreement"] = m.top1_agree;
    out["attention_recall"] = m.attention_recall;
    out["ideal_similarity"] = m.ideal_similarity;
  }
  return out;
}

}  // namespace kvscope
