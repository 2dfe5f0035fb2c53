// Statistical leverage of a segment's keys (kvpress's LeverageScorePress,
// Chari & Van Durme 2025, Compactor), for StatSource::Leverage. Host code
// run by both backends: the CPU backend on its cache, the CUDA backend on
// its keys read back after each call.
#pragma once

#include <vector>

namespace kvscope {

// Turns `len` cached key rows of `hd` floats back into the keys before RoPE:
// row j was rotated to rope_pos[j] by inv_freq (model/rope.h); rotating by
// -rope_pos[j] undoes it. Without RoPE (empty inv_freq) nothing changes.
void unrotate_keys(float* keys, int len, int hd, const int* rope_pos, const std::vector<float>& inv_freq);

// h_j = x_j^T (X^T X)^-1 x_j for the rows x_j of X, the `len` keys centred
// on their mean, in double: the diagonal of X's hat matrix, each key's
// share of the directions the keys span (a key far from the others in a
// direction few share scores near 1). X^T X is factored by Cholesky; when
// it is singular (fewer keys than dimensions, or keys in a subspace)
// jitter is added to its diagonal as kvpress adds it, 1e-2, then ten times
// more, up to four tries. kvpress sketches X with a Gaussian matrix first;
// with a sketch at least as wide as head_dim that changes no ranking on
// its goldens (docs/policies.md), so the exact leverage needs no RNG.
void leverage_scores(const float* keys, int len, int hd, float* out);

}  // namespace kvscope
