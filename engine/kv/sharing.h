// KV-sharing layouts and the conversion of a loaded checkpoint to one
// without training (docs/policies.md, "KV sharing"): a layout is (m, g), m layers
// owning KV and g KV heads per owning layer. Merged K/V projections
// (weights and biases) are averaged uniformly — what GQA and MLKV do before
// uptraining — so quality drops; showing that next to the memory saved is
// the point.
#pragma once

#include <string>

#include "model/config.h"
#include "model/weights.h"

namespace kvscope {

struct SharingLayout {
  enum class Kind { Native, MHA, GQA, MQA, MLKV };
  Kind kind = Kind::Native;
  int kv_heads = 0;   // g (GQA, MLKV; 0 = keep the checkpoint's)
  int kv_layers = 0;  // m (MLKV)

  // "native", "mha", "mqa", "gqa:G", "mlkv:M" or "mlkv:M:G". Throws an
  // Error on the field "sharing".
  static SharingLayout parse(const std::string& text);
  std::string str() const;
  // The (m, g) this layout means for a model with these dimensions.
  std::pair<int, int> resolve(const ModelConfig& cfg) const;
  // This layout switched to kind `k`, with counts that work on `cfg` where
  // this one has none (the window's choice of a kind starts from them).
  SharingLayout with_kind(Kind k, const ModelConfig& cfg) const;
};

// The (m, g) of `layout` on `cfg` when convert_sharing can reach it;
// otherwise throws the Error convert_sharing would (field "sharing").
std::pair<int, int> check_sharing(const ModelConfig& cfg, const SharingLayout& layout);

// Rewrites cfg.n_kv_layers / n_kv_heads and the K/V projections of `w` to
// `layout`. Each new owning layer's KV head is the uniform average of the
// checkpoint's KV heads it replaces: over the heads merged into it and over
// the KV the layers of its group read (weighted by how many of them read
// each). Growing g or m duplicates instead (exact). Throws when g does not
// divide the query heads, or the layout cannot be reached by merging or
// duplicating.
void convert_sharing(ModelConfig& cfg, ModelWeights& w, const SharingLayout& layout);

}  // namespace kvscope
