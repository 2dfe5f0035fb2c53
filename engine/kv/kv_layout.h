// Which layers own KV and which KV head each query head reads: MHA, GQA, MQA
// and MLKV are all one (m, g) layout (see docs/policies.md, "KV sharing").
#pragma once

#include <cstdint>
#include <vector>

#include "model/config.h"

namespace kvscope {

struct KvLayout {
  int n_layers = 0;
  int n_heads = 0;      // query heads per layer
  int n_kv_layers = 0;  // m
  int n_kv_heads = 0;   // g
  int head_dim = 0;
  std::vector<int> owners;          // the m owning layers, ascending
  std::vector<int> source_of_layer; // layer -> index into owners of the KV it reads

  static KvLayout from_config(const ModelConfig& cfg);

  int n_segments() const { return n_kv_layers * n_kv_heads; }
  // A segment is one KV head of one owning layer: the unit eviction works on.
  int segment(int kv_layer, int kv_head) const { return kv_layer * n_kv_heads + kv_head; }
  int group_size() const { return n_heads / n_kv_heads; }
  int kv_head_of(int q_head) const { return q_head / group_size(); }
  int segment_of(int layer, int q_head) const { return segment(source_of_layer[layer], kv_head_of(q_head)); }
  // The first and the last layer that read KV layer `kv_layer` (its owner
  // alone unless MLKV shares it): a statistic combined over every reader
  // of a segment is complete after the last.
  int first_reader(int kv_layer) const;
  int last_reader(int kv_layer) const;
  // KV bytes for `tokens` cached tokens per segment: 2 * s * m * g * d * bytes.
  int64_t bytes(int64_t tokens, int bytes_per_element) const {
    return 2 * tokens * n_kv_layers * n_kv_heads * head_dim * bytes_per_element;
  }
};

}  // namespace kvscope
