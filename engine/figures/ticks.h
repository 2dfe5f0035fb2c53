// Axis arithmetic shared by the figures: "nice" tick steps (1, 2, 5 x 10^n),
// tick labels with as many decimals as the step needs, and label thinning so
// that no two labels along an axis overlap.
#pragma once

#include <string>
#include <vector>

#include "figures/text.h"

namespace kvscope {

// Tick labels on every axis and colorbar.
inline const TextStyle kTickLabelText{.size = 8, .markup = true};

// A step of 1, 2 or 5 x 10^n such that `span` holds at most max_ticks steps.
double nice_step(double span, int max_ticks);
// Multiples of `step` inside [lo, hi] (with a little tolerance for rounding).
std::vector<double> ticks_in(double lo, double hi, double step);
// A tick value printed with as many decimals as `step` needs ("0.05", "20").
std::string tick_label(double value, double step);
// The label of a tick the caller chose (a sweep's budgets: 0.25, 12.5%):
// the shortest decimal that reads back as the value, so no two budgets
// share a label and none is shown rounded.
std::string exact_tick_label(double value);
// The exponents k of the powers of ten inside [lo, hi] (lo > 0), every
// stride-th one (k a multiple of the stride) when more than max_ticks fit.
std::vector<int> decades_in(double lo, double hi, int max_ticks);
// 10^k as a label: "0.01" when |k| <= 3, else "10⁻⁶" (superscript characters).
std::string decade_label(int k);

// Every how many items a label goes when items are `pitch` points apart and
// each label needs `extent` points along the axis (its height when rotated,
// its width when not) plus `gap`: the smallest of 1, 2, 5, 10, 20, 50, ...
int label_stride(double pitch, double extent, double gap);

// Labels along one axis, each centred at centres[i] and extents[i] long:
// the indices kept, left to right, so that kept labels are at least `gap`
// apart. Indices in `first` are placed before the others (an axis's ends,
// a boundary); the rest fill in where they fit.
std::vector<int> place_labels(const std::vector<double>& centres, const std::vector<double>& extents, double gap,
                              const std::vector<int>& first = {});

}  // namespace kvscope
