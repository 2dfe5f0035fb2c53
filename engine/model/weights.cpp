#include "model/weights.h"

#include "common/counter_random.h"

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
  convert_to_f32(dtype, data, dst, static_cast<std::size_t>(n));
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

int64_t ModelWeights::numel() const {
  int64_t n = tok_emb.numel() + pos_emb.numel() + final_norm_w.numel() + final_norm_b.numel();
  const bool tied = lm_head.data == tok_emb.data && lm_head.random == tok_emb.random &&
                    lm_head.random_id == tok_emb.random_id;
  if (!tied) n += lm_head.numel();
  n += lm_head_b.numel() + project_in.numel() + project_out.numel();
  for (const auto& l : layers) {
    // GPT-J's one norm is stored once, though both branches hold it.
    const bool shared_norm = !l.mlp_norm_w.empty() && l.mlp_norm_w.data == l.attn_norm_w.data &&
                             l.mlp_norm_w.random == l.attn_norm_w.random &&
                             l.mlp_norm_w.random_id == l.attn_norm_w.random_id;
    if (shared_norm) n -= l.mlp_norm_w.numel() + l.mlp_norm_b.numel();
    for (const WeightTensor* t : {&l.attn_norm_w, &l.attn_norm_b, &l.wq, &l.bq, &l.wk, &l.bk, &l.wv, &l.bv, &l.wo,
                                  &l.bo, &l.mlp_norm_w, &l.mlp_norm_b, &l.w_up, &l.b_up, &l.w_gate, &l.b_gate,
                                  &l.w_down, &l.b_down, &l.q_norm_w, &l.k_norm_w, &l.post_attn_norm_w,
                                  &l.post_mlp_norm_w})
      n += t->numel();
  }
  return n;
}

}  // namespace kvscope
