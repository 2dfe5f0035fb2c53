#include "figures/score_curves.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "common/mask_codes.h"
#include "figures/text.h"

namespace kvscope {

std::vector<int> choose_score_tokens(const ScoreCurveData& d, int max_tokens) {
  std::vector<int> out;
  auto add = [&](int p) {
    if (static_cast<int>(out.size()) < max_tokens && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  };
  for (int r = d.rows - 1; r >= 1; --r)
    for (int p = 0; p < d.cols; ++p)
      if (d.mask[std::size_t(r) * d.cols + p] == kEvictedNow) add(p);
  std::vector<std::pair<float, int>> last;
  const int r = d.rows - 1;
  for (int p = 0; p < d.cols; ++p) {
    const float v = d.scores[std::size_t(r) * d.cols + p];
    if (std::isfinite(v) && d.mask[std::size_t(r) * d.cols + p] == kMaskKept) last.emplace_back(v, p);
  }
  std::sort(last.begin(), last.end(), [](auto a, auto b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
  for (const auto& [v, p] : last) add(p);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<double> eviction_threshold(const ScoreCurveData& d) {
  std::vector<double> t(d.rows, NAN);
  for (int r = 0; r < d.rows; ++r)
    for (int p = 0; p < d.cols; ++p) {
      const std::size_t i = std::size_t(r) * d.cols + p;
      if (d.mask[i] == kMaskKept && std::isfinite(d.scores[i]) && !(t[r] <= d.scores[i])) t[r] = d.scores[i];
    }
  return t;
}

std::vector<PlotSeries> score_curve_series(const ScoreCurveData& d, const std::vector<int>& tokens) {
  if (d.scores.size() != std::size_t(d.rows) * d.cols || d.mask.size() != d.scores.size())
    throw Error("score curves", "shape", "scores and mask must both hold rows x cols values");
  std::vector<PlotSeries> out;
  for (int p : tokens) {
    PlotSeries s;
    s.name = std::to_string(p);
    if (!d.col_labels.empty()) s.name.append(" ").append(printable_token(d.col_labels[p]));
    s.markers = d.rows <= 40;
    for (int r = 0; r < d.rows; ++r) {
      s.x.push_back(d.first_row + r);
      s.y.push_back(d.scores[std::size_t(r) * d.cols + p]);
    }
    out.push_back(std::move(s));
  }
  PlotSeries th;
  th.name = "eviction threshold (lowest kept)";
  th.style = SeriesStyle{{20, 20, 20}, Marker::none, {7, 3}, 2.2};
  th.markers = false;
  const auto t = eviction_threshold(d);
  for (int r = 0; r < d.rows; ++r) th.x.push_back(d.first_row + r), th.y.push_back(t[r]);
  out.push_back(std::move(th));
  return out;
}

std::vector<std::filesystem::path> write_score_curves(const std::filesystem::path& stem, const ScoreCurveData& d,
                                                      const std::string& title, const std::string& statistic,
                                                      const FigureOutput& out) {
  const auto series = score_curve_series(d, choose_score_tokens(d));
  LinePlotOptions o;
  o.title = title;
  o.x_label = "step";
  o.y_label = statistic;
  o.legend_title = "position, token";
  return write_line_plot(stem, series, o, out);
}

}  // namespace kvscope
