// Takes the tensors an architecture needs out of a TensorStore, checking each
// one's presence, shape and dtype against config.json, and afterwards that
// nothing unexpected was left over. Messages name the file and the tensor.
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "model/config.h"
#include "model/loader.h"
#include "model/weights.h"

namespace kvscope {

class TensorPicker {
 public:
  // `store` stays alive as long as any tensor taken from it (views into its mapping).
  TensorPicker(std::shared_ptr<const TensorStore> store, const ModelConfig& cfg, std::string config_source,
               FieldNamesInFile field_in_file = {});

  bool has(const std::string& name) const { return store_->find(name) != nullptr; }
  // The tensor `name` with exactly `shape`; `why` explains the expected shape
  // in config.json terms for the message ("hidden_size=64").
  WeightTensor take(const std::string& name, const std::vector<int64_t>& shape, const std::string& why);
  WeightTensor take_if_present(const std::string& name, const std::vector<int64_t>& shape, const std::string& why);
  // Marks a tensor as known but unused (buffers like attn.masked_bias).
  void ignore(const std::string& name) { used_.insert(name); }
  // Throws for the first tensor no mapping took, unless `ignorable(name)`.
  void check_all_used(const std::function<bool(const std::string&)>& ignorable) const;
  const std::string& source() const { return store_->description(); }
  // Throws unless every layer owns its KV: stored MLKV layouts
  // (num_key_value_layers) are read for llama-family checkpoints only; the
  // other architectures share KV by converting on the fly (--sharing).
  void refuse_stored_mlkv() const;
  // The output head: the embedding `tok_emb` itself when the config ties
  // them (a stored copy under `name` is then ignored), else the tensor
  // `name` of the embedding's shape; `why` names that shape's fields.
  WeightTensor take_head(const std::string& name, const WeightTensor& tok_emb, const std::string& why);

 private:
  std::shared_ptr<const TensorStore> store_;
  const ModelConfig& cfg_;
  std::string config_source_;
  FieldNamesInFile field_in_file_;
  std::set<std::string> used_;

  // `why` with each field name as the configuration's file spells it.
  std::string why_in_file(const std::string& why) const;
};

// Load-time fix-ups (new owned tensors, same dtype).
WeightTensor transpose_2d(const WeightTensor& t);                          // GPT-2 Conv1D [in, out] -> [out, in]
WeightTensor take_rows(const WeightTensor& t, const std::vector<int64_t>& rows);  // rows of a 1-D or 2-D tensor
// Rows first..first+count-1: one part of a fused projection ([q | k | v]).
WeightTensor take_row_range(const WeightTensor& t, int64_t first, int64_t count);

}  // namespace kvscope
