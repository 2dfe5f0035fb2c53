#include "model/weights.h"

#include "common/counter_random.h"
#include "io/gguf_dequant.h"

namespace kvscope {

int64_t WeightTensor::numel() const {
  if (shape.empty()) return 0;
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::string WeightTensor::shape_string() const {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

float random_weight_value(uint64_t seed, uint32_t id, int64_t i, float scale, float offset) {
  const auto r = philox4(seed, static_cast<uint32_t>(i >> 2), static_cast<uint32_t>(static_cast<uint64_t>(i) >> 34),
                         id, static_cast<uint32_t>(RandomStream::Weights));
  const float u = uniform01(r.v[i & 3]);
  return offset + (2.0f * u - 1.0f) * scale;
}

void WeightTensor::to_f32(float* dst) const {
  const int64_t n = numel();
  if (random) {
    for (int64_t i = 0; i < n; ++i) dst[i] = random_weight_value(random_seed, random_id, i, random_scale, random_offset);
    return;
  }
  if (blocks) return dequantize_ggml(*blocks, data, n, dst);
  convert_to_f32(dtype, data, dst, static_cast<std::size_t>(n));
}

std::size_t WeightTensor::row_bytes() const {
  const auto c = static_cast<std::size_t>(cols());
  if (blocks) return c / ggml_block_elements(*blocks) * ggml_block_bytes(*blocks);
  return c * dtype_size(dtype);
}

std::size_t WeightTensor::stored_bytes() const {
  if (random || empty()) return 0;
  return row_bytes() * static_cast<std::size_t>(numel() / cols());
}

std::vector<float> WeightTensor::to_f32() const {
  std::vector<float> out(static_cast<std::size_t>(numel()));
  to_f32(out.data());
  return out;
}

WeightTensor WeightTensor::owned_f32(std::vector<float> values, std::vector<int64_t> shape) {
  auto buf = std::make_shared<std::vector<float>>(std::move(values));
  WeightTensor t;
  t.shape = std::move(shape);
  t.dtype = DType::F32;
  t.data = reinterpret_cast<const std::byte*>(buf->data());
  t.keepalive = buf;
  return t;
}

WeightTensor WeightTensor::random_uniform(std::vector<int64_t> shape, uint64_t seed, uint32_t id, float scale,
                                          float offset) {
  WeightTensor t;
  t.shape = std::move(shape);
  t.dtype = DType::F32;
  t.random = true;
  t.random_seed = seed;
  t.random_id = id;
  t.random_scale = scale;
  t.random_offset = offset;
  return t;
}

namespace {

bool same_tensor(const WeightTensor& a, const WeightTensor& b) {
  return a.data == b.data && a.random == b.random && a.random_id == b.random_id;
}

// f(tensor) for every tensor the model stores, each once: a tied head
// shares the embedding, GPT-J's one norm feeds both branches.
template <class F>
void for_each_stored(const ModelWeights& w, F&& f) {
  for (const WeightTensor* t : {&w.tok_emb, &w.pos_emb, &w.final_norm_w, &w.final_norm_b}) f(*t);
  if (!same_tensor(w.lm_head, w.tok_emb)) f(w.lm_head);
  for (const WeightTensor* t : {&w.lm_head_b, &w.project_in, &w.project_out}) f(*t);
  for (const auto& l : w.layers) {
    const bool shared_norm = !l.mlp_norm_w.empty() && same_tensor(l.mlp_norm_w, l.attn_norm_w);
    for (const WeightTensor* t : {&l.attn_norm_w, &l.attn_norm_b, &l.wq, &l.bq, &l.wk, &l.bk, &l.wv, &l.bv, &l.wo,
                                  &l.bo, &l.mlp_norm_w, &l.mlp_norm_b, &l.w_up, &l.b_up, &l.w_gate, &l.b_gate,
                                  &l.w_down, &l.b_down, &l.q_norm_w, &l.k_norm_w, &l.post_attn_norm_w,
                                  &l.post_mlp_norm_w})
      if (!(shared_norm && (t == &l.mlp_norm_w || t == &l.mlp_norm_b))) f(*t);
  }
}

template <class Measure>
auto sum_stored(const ModelWeights& w, Measure measure) {
  decltype(measure(w.tok_emb)) n{};
  for_each_stored(w, [&](const WeightTensor& t) { n += measure(t); });
  return n;
}

}  // namespace

int64_t ModelWeights::numel() const {
  return sum_stored(*this, [](const WeightTensor& t) { return t.numel(); });
}

std::size_t ModelWeights::stored_bytes() const {
  return sum_stored(*this, [](const WeightTensor& t) { return t.stored_bytes(); });
}

std::map<std::string, int64_t> ModelWeights::parameters_by_storage() const {
  std::map<std::string, int64_t> n;
  for_each_stored(*this, [&](const WeightTensor& t) {
    if (t.empty()) return;
    n[t.random   ? "random"
      : t.blocks ? ggml_type_name(static_cast<uint32_t>(*t.blocks))
                 : dtype_name(t.dtype)] += t.numel();
  });
  return n;
}

}  // namespace kvscope
