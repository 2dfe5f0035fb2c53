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

}  // namespace kvscope
