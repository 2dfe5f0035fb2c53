#include "kv/kv_layout.h"

namespace kvscope {

KvLayout KvLayout::from_config(const ModelConfig& cfg) {
  KvLayout k;
  k.n_layers = cfg.n_layers;
  k.n_heads = cfg.n_heads;
  k.n_kv_layers = cfg.n_kv_layers;
  k.n_kv_heads = cfg.n_kv_heads;
  k.head_dim = cfg.head_dim;
  k.owners = cfg.owning_layers();
  k.source_of_layer = cfg.kv_source();
  return k;
}

int KvLayout::first_reader(int kv_layer) const {
  for (int l = 0; l < n_layers; ++l)
    if (source_of_layer[l] == kv_layer) return l;
  return -1;
}

int KvLayout::last_reader(int kv_layer) const {
  for (int l = n_layers - 1; l >= 0; --l)
    if (source_of_layer[l] == kv_layer) return l;
  return -1;
}

}  // namespace kvscope
