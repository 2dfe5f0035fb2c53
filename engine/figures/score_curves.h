// Score curves: the policy's statistic of a few chosen tokens over the
// decoding steps, with the eviction threshold — the lowest statistic the
// policy kept at each step (the k-th best kept value): a token whose curve
// falls below it is the next to go.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "figures/canvas.h"
#include "figures/line_plot.h"

namespace kvscope {

struct ScoreCurveData {
  int rows = 0, cols = 0;
  std::vector<float> scores;  // rows x cols: the statistic per position (NaN where there is none)
  std::vector<uint8_t> mask;  // rows x cols masks.npy codes
  std::vector<std::string> col_labels;  // token text per position (may be empty)
  int first_row = 0;                    // step number of row 0
};

// Positions worth a curve, at most max_tokens: those evicted while decoding
// (after row 0), the latest first, then those with the highest statistic at
// the last step.
std::vector<int> choose_score_tokens(const ScoreCurveData& d, int max_tokens = 6);
// Per row: the lowest statistic among kept, unprotected slots (code 1), the
// value a slot had to beat to stay; NaN where there is none.
std::vector<double> eviction_threshold(const ScoreCurveData& d);
// The plot's series: one per chosen token ("12 ␣fox"), then the threshold.
std::vector<PlotSeries> score_curve_series(const ScoreCurveData& d, const std::vector<int>& tokens);
std::vector<std::filesystem::path> write_score_curves(const std::filesystem::path& stem, const ScoreCurveData& d,
                                                      const std::string& title, const std::string& statistic,
                                                      const FigureOutput& out);

}  // namespace kvscope
