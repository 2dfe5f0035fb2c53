// The per-step metrics of a run summed over its steps, for the means that
// `kvscope-cli run` prints in its summary line and `sweep` writes per cell.
// Sums and counts rather than means, so that each caller divides exactly as
// it prints (the run's percentage is 100 * sum / n, not 100 * (sum / n)).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "session/metrics.h"

namespace kvscope {

struct MetricSums {
  // The steps compared with the full cache (top1_agree >= 0) and the sums
  // of their comparisons.
  int n = 0;
  double kl = 0, top1_agree = 0, attention_recall = 0, ideal_similarity = 0;
  double kl_native = 0, top1_agree_native = 0;  // against the checkpoint's own model
  // The steps whose NLL is known (a teacher-forced or sampled next token).
  int n_nll = 0;
  double nll = 0;
};

MetricSums sum_metrics(const std::vector<StepMetrics>& steps);

// The means by their sweep.csv column names (nll, kl, top1_agreement,
// attention_recall, ideal_similarity); a mean over no steps is left out.
std::map<std::string, double> metric_means(const MetricSums& sums);

}  // namespace kvscope
