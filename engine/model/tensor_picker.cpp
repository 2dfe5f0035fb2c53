#include "model/tensor_picker.h"

#include <cctype>
#include <cstring>

#include "common/error.h"

namespace kvscope {
namespace {

std::string shape_str(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

}  // namespace

TensorPicker::TensorPicker(std::shared_ptr<const TensorStore> store, const ModelConfig& cfg, std::string config_source,
                           FieldNamesInFile field_in_file)
    : store_(std::move(store)),
      cfg_(cfg),
      config_source_(std::move(config_source)),
      field_in_file_(std::move(field_in_file)) {}

// The words of `why` ("num_key_value_heads x head_dim=64, hidden_size=576")
// that are field names, each renamed; numbers and separators kept.
std::string TensorPicker::why_in_file(const std::string& why) const {
  if (!field_in_file_) return why;
  std::string out;
  std::size_t i = 0;
  while (i < why.size()) {
    const auto word = [&](char c) { return std::islower(static_cast<unsigned char>(c)) || c == '_'; };
    if (!word(why[i])) {
      out += why[i++];
      continue;
    }
    std::size_t j = i;
    while (j < why.size() && (word(why[j]) || std::isdigit(static_cast<unsigned char>(why[j])))) ++j;
    out += field_in_file_(why.substr(i, j - i));
    i = j;
  }
  return out;
}

WeightTensor TensorPicker::take(const std::string& name, const std::vector<int64_t>& shape, const std::string& why) {
  const TensorView* v = store_->find(name);
  // Named as the file has it (a GGUF file's blk.0.attn_norm.weight).
  const std::string field = "tensor '" + store_->name_in_file(name) + "'";
  if (!v)
    throw Error(
        store_->description(), field,
        "missing (the " + cfg_.model_type + " architecture needs it with the configuration of " + config_source_ + ")");
  if (!v->dtype) throw Error(v->file, field, "dtype " + v->stored_dtype + " is not a float type (F32, F16, BF16)");
  if (*v->dtype != cfg_.dtype)
    throw Error(v->file, field,
                std::string("dtype ") + dtype_name(*v->dtype) + " disagrees with " + config_source_ +
                    " (torch_dtype says " + dtype_name(cfg_.dtype) + ")");
  if (v->shape != shape)
    throw Error(v->file, field,
                "shape " + v->shape_string() + " disagrees with " + config_source_ + " (expected " + shape_str(shape) +
                    " from " + why_in_file(why) + ")");
  used_.insert(name);
  WeightTensor t;
  t.shape = v->shape;
  t.dtype = *v->dtype;
  t.blocks = v->blocks;
  t.data = v->data;
  t.keepalive = store_;
  return t;
}

WeightTensor TensorPicker::take_if_present(const std::string& name, const std::vector<int64_t>& shape,
                                           const std::string& why) {
  return has(name) ? take(name, shape, why) : WeightTensor{};
}

void TensorPicker::check_all_used(const std::function<bool(const std::string&)>& ignorable) const {
  for (const auto& n : store_->names()) {
    if (used_.count(n) || ignorable(n)) continue;
    throw Error(
        store_->find(n)->file, "tensor '" + store_->name_in_file(n) + "'",
        "unexpected: not part of the " + cfg_.model_type + " architecture with the configuration of " + config_source_);
  }
}

WeightTensor transpose_2d(const WeightTensor& t) {
  // A block runs along a row: a transposed matrix cannot keep them.
  if (t.blocks) return transpose_2d(WeightTensor::owned_f32(t.to_f32(), t.shape));
  const int64_t r = t.shape.at(0), c = t.shape.at(1);
  const std::size_t es = dtype_size(t.dtype);
  auto buf = std::make_shared<std::vector<std::byte>>(static_cast<std::size_t>(r * c) * es);
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j)
      std::memcpy(buf->data() + (j * r + i) * es, t.data + (i * c + j) * es, es);
  WeightTensor out;
  out.shape = {c, r};
  out.dtype = t.dtype;
  out.data = buf->data();
  out.keepalive = buf;
  return out;
}

void TensorPicker::refuse_stored_mlkv() const {
  if (cfg_.n_kv_layers != cfg_.n_layers)
    throw Error(
        source(), "num_key_value_layers",
        "stored MLKV layouts are read for llama-family checkpoints; for " + cfg_.model_type + " convert on the fly");
}

WeightTensor TensorPicker::take_head(const std::string& name, const WeightTensor& tok_emb, const std::string& why) {
  if (!cfg_.tied_embeddings) return take(name, tok_emb.shape, why);
  ignore(name);  // some checkpoints store the tied copy too
  return tok_emb;
}

WeightTensor take_rows(const WeightTensor& t, const std::vector<int64_t>& rows) {
  const std::size_t row_bytes = t.row_bytes();
  auto buf = std::make_shared<std::vector<std::byte>>(rows.size() * row_bytes);
  for (std::size_t i = 0; i < rows.size(); ++i)
    std::memcpy(buf->data() + i * row_bytes, t.data + rows[i] * row_bytes, row_bytes);
  WeightTensor out;
  out.shape = t.shape;
  out.shape[0] = static_cast<int64_t>(rows.size());
  out.dtype = t.dtype;
  out.blocks = t.blocks;
  out.data = buf->data();
  out.keepalive = buf;
  return out;
}

WeightTensor take_row_range(const WeightTensor& t, int64_t first, int64_t count) {
  std::vector<int64_t> rows(static_cast<std::size_t>(count));
  for (int64_t i = 0; i < count; ++i) rows[static_cast<std::size_t>(i)] = first + i;
  return take_rows(t, rows);
}

}  // namespace kvscope
