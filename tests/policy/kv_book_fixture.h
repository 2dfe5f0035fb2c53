// What the policy tests share: small KV books built without a model.
#pragma once

#include <algorithm>
#include <vector>

#include "kv/kv_book.h"
#include "kv/kv_layout.h"
#include "policy/selection.h"

namespace kvscope::test {

// `g` KV heads in each of `layers` owning layers, holding positions 0..n-1.
inline KvBook book_of(int n, int g = 1, int layers = 1) {
  KvLayout lay;
  lay.n_layers = layers;
  lay.n_heads = g;
  lay.n_kv_layers = layers;
  lay.n_kv_heads = g;
  lay.head_dim = 4;
  for (int l = 0; l < layers; ++l) {
    lay.owners.push_back(l);
    lay.source_of_layer.push_back(l);
  }
  KvBook b(lay, 64);
  std::vector<int> rope(lay.n_segments());
  for (int p = 0; p < n; ++p) {
    std::fill(rope.begin(), rope.end(), p);
    b.append(p, rope);
  }
  return b;
}

// The positions a selection keeps in segment `seg`, in slot order.
inline std::vector<int> kept_positions(const KvBook& b, const SlotChoice& c, int seg = 0) {
  std::vector<int> out;
  for (int j : c.keep[seg]) out.push_back(b.positions(seg)[j]);
  return out;
}

}  // namespace kvscope::test
