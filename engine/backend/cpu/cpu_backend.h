// The fp32 CPU reference backend: readable, exact against Hugging Face within
// fp32 rounding, and the oracle every CUDA op is tested against.
#pragma once

#include <memory>

#include "backend/backend.h"
#include "backend/cpu/cpu_ops.h"
#include "backend/cpu/keyformer_row.h"
#include "io/zeroed_pages.h"

namespace kvscope {

// The model's weights converted to fp32 once, shared by every CpuBackend
// spawned from it (the session's run, its shadow run, forks).
struct CpuModel : PreparedWeights {
  struct Layer {
    std::vector<float> attn_norm_w, attn_norm_b, mlp_norm_w, mlp_norm_b;
    std::vector<float> q_norm_w, k_norm_w, post_attn_norm_w, post_mlp_norm_w;  // Gemma 3; else empty
    cpu::Linear q, k, v, o, up, gate, down;  // k, v empty in layers that own no KV
  };
  ModelConfig cfg;
  // The embedding as a matrix [vocab, e]: a token's row is read with
  // rows_to_f32, so a GGUF file's quantized table stays in its blocks.
  cpu::Linear tok_emb;
  std::vector<float> pos_emb, final_norm_w, final_norm_b;
  cpu::Linear lm_head;                  // with GPT-J's bias
  cpu::Linear project_in, project_out;  // OPT's word_embed_proj_dim; else empty
  std::vector<Layer> layers;
  std::vector<float> inv_freq;
  std::vector<float> inv_freq_local;  // sliding layers' (Gemma 3); empty: they use inv_freq
  // The rotary frequencies layer `layer` rotates with.
  const std::vector<float>& inv_freq_of(int layer) const {
    return cfg.uses_local_rope(layer) ? inv_freq_local : inv_freq;
  }

  WeightFormat format = WeightFormat::F32;  // of the linear layers' matrices

  static std::shared_ptr<const CpuModel> create(const ModelConfig& cfg, const ModelWeights& w,
                                                WeightFormat format = WeightFormat::F32);
  // Bytes of host memory create() holds for `w` under `format`: fp32 or
  // half copies, and a GGUF file's blocks read in place (pages of the
  // mapping, resident once read). The CLI checks it against the memory free.
  static int64_t host_bytes(const ModelWeights& w, WeightFormat format);
  // Bytes of weights one decode step reads (every matrix, the head
  // included), for the bandwidth floor.
  static int64_t decode_read_bytes(const ModelWeights& w, WeightFormat format);
};

class CpuBackend final : public Backend {
 public:
  CpuBackend(std::shared_ptr<const CpuModel> model, const BackendOptions& opt);

  std::string name() const override { return backend_label(Device::Cpu, model_->format); }
  const ModelConfig& config() const override { return model_->cfg; }
  std::unique_ptr<Backend> spawn(const BackendOptions& opt) const override;
  std::unique_ptr<Backend> clone() override { return std::make_unique<CpuBackend>(*this); }
  int kv_element_bytes() const override { return 4; }

  // Direct access for tests: the cached key / value row of a slot.
  const float* key(int seg, int slot) const { return k_.data() + row_of(seg, slot) * hd_; }
  const float* value(int seg, int slot) const { return v_.data() + row_of(seg, slot) * hd_; }
  // For tests: bytes of the K and V caches' pages that have memory now.
  std::size_t kv_resident_bytes() const { return k_.resident_bytes() + v_.resident_bytes(); }
  // Bytes the per-call work buffers hold between calls (activations,
  // attention scores, statistic contributions; not the cache or the
  // logits). For tests: a prompt's rows are not kept for the decode steps.
  std::size_t scratch_bytes() const;
  // The part of it that holds the statistic's contributions of a call (one
  // row per segment, and a row per query row of the segments MLKV shares
  // while their reading layers run, for a max over readers), not the
  // attention tasks' scratch. For tests: a max over readers does not keep
  // every query row's maximum of every segment.
  std::size_t contribution_bytes() const;
  // A prompt's query rows go through attention this many at a time.
  static constexpr int kQueryBlock = 128;
  // Rows of each segment's K (and V) region for a cache of `capacity`
  // slots of `head_dim` floats: kv_region_rows rounded up to whole pages,
  // so that every segment's region starts on a page. The memory forecast
  // counts the cache with it.
  static int region_rows(int capacity, int head_dim);

 private:
  void do_forward(std::span<const int> tokens, const ForwardOptions& opt, ForwardOutput& out) override;
  // One token for both runs of the same model: stacked through the matrix
  // products (weights read once), bit for bit what two forward() calls give.
  void do_forward_pair(std::span<const int> tokens, const ForwardOptions& opt, ForwardOutput& out, Backend& other,
                       const ForwardOptions& other_opt, ForwardOutput& other_out) override;
  bool has_last_logits() const override { return !last_logits_.empty(); }
  int do_sample(const SamplingParams& p, uint64_t step) override;
  void do_retain(int seg, std::span<const int> keep, int old_len) override;
  void do_reset() override;

  // One sequence of a forward call: its backend (cache, statistics,
  // captures), tokens and outputs, and its rows in the stacked activations.
  struct Lane {
    CpuBackend* be;
    std::span<const int> tokens;
    const ForwardOptions* opt;
    ForwardOutput* out;
    int row0 = 0, n = 0, first_pos = 0;
    AttentionRows* capture = nullptr;  // the layer in progress
    int task0 = 0;                     // its first attention task in the layer's parallel_for
  };
  void forward_lanes(std::span<Lane> lanes);
  int prepare_forward(int n, const ForwardOptions& opt, ForwardOutput& out);
  void append_kv_and_rotate(int layer, int n, const float* kn, const float* vn, float* q);
  void add_query_moments(int layer, int n, const float* q, int first_pos, int sinks);

  // Scratch of the attention tasks one pool thread runs (one at a time).
  struct HeadScratch {
    std::vector<float> scores;  // [block row][slot] (a prompt), [head][slot] (a decode step)
    std::vector<float> maxima;  // [block row][slot]: a block's maxima over readers
    float* maxima_rows = nullptr;  // where query row maxima_row0's maxima go: `maxima`, or shared_maxima_
    int maxima_row0 = 0;
    cpu::KeyformerRowScratch keyformer;
  };
  void release_prompt_scratch();
  bool tasks_by_kv_head(int n, const SlotStatRule& rule) const;
  int attention_tasks(int n, const SlotStatRule& rule);
  void attention_task(int t, int layer, int n, const float* q, float* out, AttentionRows* capture,
                      const SlotStatRule& rule, bool last_only, bool capture_logits);
  void attend_rows(int layer, int h, int n, int i0, int i1, const float* q, float* out, AttentionRows* capture,
                   const SlotStatRule& rule, int first_captured, bool capture_logits, HeadScratch& scratch);
  void attend_group(int layer, int h0, int G, const float* q, float* out, AttentionRows* capture,
                    const SlotStatRule& rule, bool capture_logits, HeadScratch& scratch);
  void finish_row(int layer, int h, int i, int n, float* row, AttentionRows* capture, const SlotStatRule& rule,
                  int first_captured, bool capture_logits, HeadScratch& scratch);
  void accumulate_stats(int seg, int row, const float* e, float scale, const SlotStatRule& rule, HeadScratch& scratch);
  bool takes_row_maxima(const SlotStatRule& rule) const;
  void sum_row_maxima(int seg, int i0, int i1, const float* rows);
  void finish_stats(int n, const SlotStatRule& rule);
  void key_scores(int seg, StatSource source);
  void compute_value_weights(const std::vector<ValueWeightJob>& jobs) override;
  float* key_mut(int seg, int slot) { return k_.data() + row_of(seg, slot) * hd_; }
  float* value_mut(int seg, int slot) { return v_.data() + row_of(seg, slot) * hd_; }
  // A segment's slots are consecutive rows of its region, from start_[seg].
  int64_t row_of(int seg, int slot) const { return int64_t(seg) * region_ + start_[seg] + slot; }
  void move_kept_rows(int seg, std::span<const int> keep, int old_len);
  enum class VacantSide { Below, Above };
  void release_rows(int seg, int64_t row0, int64_t row1, VacantSide vacant);
  void make_room(int seg, int n);

  std::shared_ptr<const CpuModel> model_;
  KvLayout layout_;
  int hd_ = 0;
  // Each segment owns `region_` rows (the capacity plus slack, to a whole
  // number of pages) and uses the len rows from start_[seg]: eviction can
  // then close holes from whichever side moves fewer rows.
  int region_ = 0;
  std::vector<int> start_;  // [segment]
  // [segment][region row][head_dim]; a row's page is resident once a slot
  // has been stored there and until eviction moves every slot off it
  // (release_rows), so memory follows the slots held, not the capacity.
  ZeroedFloats k_, v_;
  // Scratch, grown to the largest call and then reused.
  std::vector<float> x_, h_, q_, kn_, vn_, att_, o_, up_, gate_, mlp_;
  std::vector<float> emb_;          // OPT's embedding-width rows (project_in / project_out)
  std::vector<float> last_logits_;  // the last token's logits, for sample()
  std::vector<float> pair_logits_;  // forward_pair's head output, both rows
  std::vector<std::vector<float>> contrib_;  // [segment][slot]: this call's statistic contributions
  // [segment][query row][slot]: a max over readers where several layers
  // read the segment (MLKV), from its first reading layer to its last.
  std::vector<std::vector<float>> shared_maxima_;
  std::vector<float> key_norm_, key_anchor_;  // key_scores: one segment's key norms and mean direction
  std::vector<HeadScratch> head_scratch_;     // one per pool thread (pool_thread_index())
};

}  // namespace kvscope
