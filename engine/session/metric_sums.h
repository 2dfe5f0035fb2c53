// The per-step metrics of a run summed over its steps, for every mean over
// a run: `kvscope-cli run`'s summary line, each sweep cell, each
// evaluation item, the window's metrics panel. Sums and counts rather than
// means, so that each caller divides exactly as it prints (the run's
// percentage is 100 * sum / n, not 100 * (sum / n)).
//
// Which steps count is decided here, once: row 0 is left out of every mean.
// It is measured on the prefill, before a one-shot prefill's cut to k, so
// its KL is 0, its top-1 agreement and attention recall 1 by construction
// (and its NLL the full cache's); kept in, it pulls every policy toward the
// full cache, the more so the shorter the run. Under a streaming prefill
// row 0 does reflect evictions, but it is left out as well, so that every
// policy's mean covers the same decode steps. The per-step data (the
// recorder, metrics.csv) keep row 0.
#pragma once

#include <map>
#include <span>
#include <string>

#include "session/metrics.h"

namespace kvscope {

// The first step that counts in a mean over a run.
inline constexpr int kFirstMeanStep = 1;
// Whether a step's metrics count in the means over its run.
inline bool counts_in_means(const StepMetrics& m) { return m.step >= kFirstMeanStep; }

struct MetricSums {
  // The counted steps compared with the full cache (top1_agree >= 0) and
  // the sums of their comparisons.
  int n = 0;
  double kl = 0, top1_agree = 0, attention_recall = 0, ideal_similarity = 0;
  double kl_native = 0, top1_agree_native = 0;  // against the checkpoint's own model
  // The counted steps whose NLL is known (a teacher-forced or sampled next token).
  int n_nll = 0;
  double nll = 0;
};

// Sums over the steps that count (counts_in_means).
MetricSums sum_metrics(std::span<const StepMetrics> steps);

// The means by their sweep.csv column names (nll, kl, top1_agreement,
// attention_recall, ideal_similarity); a mean over no steps is left out.
std::map<std::string, double> metric_means(const MetricSums& sums);

// One counted step's values by the same names, those it measured: over a
// run's counted steps their means are metric_means(sum_metrics(steps)). A
// session sweep's statistics are over these (docs/exports.md).
std::map<std::string, double> step_metric_values(const StepMetrics& m);

}  // namespace kvscope
