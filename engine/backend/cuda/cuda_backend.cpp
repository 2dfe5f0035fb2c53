#include "backend/cuda/cuda_backend.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_model.h"
#include "backend/cuda/cuda_ops.h"
#include "backend/leverage_scores.h"
#include "backend/parallel.h"
#include "common/error.h"
#include "kv/row_moves.h"

namespace kvscope {

using cuda::DeviceBuffer;

namespace {

constexpr std::size_t kBlasWorkspace = std::size_t(32) << 20;
constexpr int64_t kScoreBudget = int64_t(1) << 25;  // floats in the attention score scratch before chunking queries

}  // namespace

bool cuda_device_available(std::string* why) { return cuda::device_present(why); }

std::shared_ptr<const CudaModel> make_cuda_model(const ModelConfig& cfg, const ModelWeights& weights) {
  return CudaModel::create(cfg, weights);
}

std::unique_ptr<Backend> make_cuda_backend(const ModelConfig& cfg, const ModelWeights& weights,
                                           const BackendOptions& opt) {
  return std::make_unique<CudaBackend>(CudaModel::create(cfg, weights), opt);
}

// Everything one backend owns on the device, and the host mirrors it needs.
struct CudaBackend::State {
  int device = 0;
  cudaStream_t stream = nullptr;
  std::unique_ptr<cuda::Blas> blas;

  KvLayout layout;
  int cap = 0, hd = 0, S = 0, H = 0, g = 0, L = 0, V = 0, d = 0;
  int qkv_w = 0, gu_w = 0, max_in = 0;

  // K and V [segment][region][hd] (slot j of segment s in row start[s] + j
  // of its region, kv/row_moves.h); positions and statistics [segment][cap].
  DeviceBuffer k, v, pos, stats;
  cuda::KvCache kv;
  int region = 0;
  std::vector<int> start;  // [segment]: the host's copy, staged with every push

  // Host -> device staging, double-buffered in pinned memory. Layout (ints):
  // [segment lengths S][segment start rows S][token ids cap][row weights cap (float bits)]
  // [jobs kCompactJobInts*S][maps S*cap].
  int* host_stage[2] = {nullptr, nullptr};
  cudaEvent_t stage_done[2] = {nullptr, nullptr};
  int stage_next = 0;
  DeviceBuffer dev_stage;
  std::size_t off_starts = 0, off_tokens = 0, off_weights = 0, off_jobs = 0, off_maps = 0, stage_ints = 0;
  int* dev_lens() const { return dev_stage.as<int>(); }

  // Evictions not yet applied on the device: for each slot of the segment,
  // the device slot holding it (composed over retains since the last push),
  // out of the segment's device length then.
  std::vector<std::vector<int>> map;
  std::vector<int> map_from;
  std::vector<char> dirty;

  // Workspace, sized for `rows` tokens per call (1 at construction).
  int rows = 0;
  DeviceBuffer x, h, qkv, att, gu, act, split;
  int q_chunk = 0;
  DeviceBuffer scores, partial, gumbel;
  int gumbel_chunk = 0;
  DeviceBuffer mean_acc, max_acc;
  int max_rows = 0;
  int logit_rows = 0;
  DeviceBuffer logits;
  int64_t capture_floats = 0;
  DeviceBuffer cap_logits, cap_probs;
  DeviceBuffer sample_scratch, token_dev;
  int* token_host = nullptr;   // pinned
  float* stats_host = nullptr;  // pinned [S][cap]
  const float* last_logits = nullptr;

  int qc_for(int n) const {
    const int64_t per = int64_t(H) * cap;
    const int64_t m = std::max<int64_t>(1, kScoreBudget / per);
    return static_cast<int>(std::min<int64_t>({int64_t(n), m, 65535}));
  }

  ~State() {
    if (stream) (void)cudaStreamSynchronize(stream);
    blas.reset();  // before the stream it is bound to
    for (int b = 0; b < 2; ++b) {
      if (stage_done[b]) (void)cudaEventDestroy(stage_done[b]);
      if (host_stage[b]) (void)cudaFreeHost(host_stage[b]);
    }
    if (token_host) (void)cudaFreeHost(token_host);
    if (stats_host) (void)cudaFreeHost(stats_host);
    if (stream) (void)cudaStreamDestroy(stream);
  }
};

CudaBackend::CudaBackend(std::shared_ptr<const CudaModel> model, const BackendOptions& opt)
    : Backend(model->cfg, opt), model_(std::move(model)), s_(std::make_unique<State>()) {
  const ModelConfig& cfg = model_->cfg;
  State& s = *s_;
  s.device = model_->device;
  KVSCOPE_CUDA(cudaSetDevice(s.device));
  s.layout = model_->layout;
  s.cap = opt.max_tokens;
  s.hd = cfg.head_dim;
  s.S = s.layout.n_segments();
  s.H = cfg.n_heads;
  s.g = s.layout.n_kv_heads;
  s.L = cfg.n_layers;
  s.V = cfg.vocab_size;
  s.d = cfg.hidden;
  for (const auto& l : model_->layers) {
    s.qkv_w = std::max(s.qkv_w, l.qkv.out);
    s.gu_w = std::max(s.gu_w, l.gate_up.out);
  }
  s.max_in = std::max({cfg.hidden, cfg.q_dim(), cfg.intermediate});

  // What this backend needs before the first call (a decode step with every
  // layer captured and a statistic rule active needs nothing more).
  const int64_t seg_slots = int64_t(s.S) * s.cap;
  s.region = kv_region_rows(s.cap);
  const int64_t seg_rows = int64_t(s.S) * s.region;
  s.off_starts = std::size_t(s.S);
  s.off_tokens = s.off_starts + std::size_t(s.S);
  s.off_weights = s.off_tokens + s.cap;
  s.off_jobs = s.off_weights + s.cap;
  s.off_maps = s.off_jobs + cuda::kCompactJobInts * std::size_t(s.S);
  s.stage_ints = s.off_maps + std::size_t(seg_slots);
  const int splits = cuda::pv_splits(s.cap);
  const double need = 2.0 * seg_rows * s.hd * 2                               // K, V
                      + 2.0 * seg_slots * 4                                    // positions, statistics
                      + 4.0 * s.stage_ints                                     // staging
                      + 4.0 * (4.0 * s.d + s.qkv_w + s.H * s.hd + s.gu_w + cfg.intermediate)  // activations
                      + 4.0 * s.H * s.cap * 2 + 4.0 * s.H * splits * s.hd      // scores, gumbel, partials
                      + 4.0 * s.g * s.cap * 2                                  // statistic accumulators
                      + 4.0 * s.L * s.H * s.cap * 2                            // captures of every layer
                      + 4.0 * s.V * 2 + kBlasWorkspace;                        // logits, sampling, cuBLAS
  std::size_t free_b = 0, total_b = 0;
  cuda::memory_info(&free_b, &total_b);
  if (need > double(free_b))
    throw Error("cuda", "memory",
                "needs " + cuda::format_gb(need) + " GB, " + cuda::format_gb(double(free_b)) +
                    " GB free (KV cache and buffers for " + std::to_string(s.cap) + " tokens)");

  s.map.assign(s.S, {});
  s.map_from.assign(s.S, 0);
  s.dirty.assign(s.S, 0);
  s.start.assign(s.S, 0);

  KVSCOPE_CUDA(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
  s.blas = std::make_unique<cuda::Blas>(s.stream);

  s.k = DeviceBuffer(std::size_t(seg_rows) * s.hd * 2, "KV cache");
  s.v = DeviceBuffer(std::size_t(seg_rows) * s.hd * 2, "KV cache");
  s.pos = DeviceBuffer(std::size_t(seg_slots) * 4, "KV positions");
  s.stats = DeviceBuffer(std::size_t(seg_slots) * 4, "slot statistics");
  KVSCOPE_CUDA(cudaMemsetAsync(s.stats.get(), 0, s.stats.bytes(), s.stream));
  s.kv = cuda::KvCache{cuda::kv_type_for(model_->wtype), s.k.get(), s.v.get(), s.pos.as<int>(), s.stats.as<float>(),
                       s.cap, s.hd, s.region, nullptr};

  for (int b = 0; b < 2; ++b) {
    KVSCOPE_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&s.host_stage[b]), s.stage_ints * 4, cudaHostAllocDefault));
    KVSCOPE_CUDA(cudaEventCreateWithFlags(&s.stage_done[b], cudaEventDisableTiming));
  }
  s.dev_stage = DeviceBuffer(s.stage_ints * 4, "staging");
  s.kv.start = s.dev_stage.as<int>() + s.off_starts;
  KVSCOPE_CUDA(cudaMemsetAsync(s.dev_stage.get(), 0, s.dev_stage.bytes(), s.stream));
  KVSCOPE_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&s.token_host), 4, cudaHostAllocDefault));
  KVSCOPE_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&s.stats_host), std::size_t(seg_slots) * 4,
                             cudaHostAllocDefault));
  s.sample_scratch = DeviceBuffer(std::size_t(s.V) * 4, "sampling scratch");
  s.token_dev = DeviceBuffer(4, "sampled token");
  s.mean_acc = DeviceBuffer(std::size_t(s.g) * s.cap * 4, "slot statistic accumulator");

  SlotStatRule every;  // decode with any rule: Max needs [g][1][cap], Gumbel [H][1][cap]
  every.source = StatSource::GumbelSoftmax;
  every.reduce = ReaderReduce::Max;
  ensure_workspace(1, 1, int64_t(s.L) * s.H * s.cap, every);
}

CudaBackend::~CudaBackend() = default;

std::string CudaBackend::name() const { return "cuda: " + model_->device_name; }

const ModelConfig& CudaBackend::config() const { return model_->cfg; }

std::unique_ptr<Backend> CudaBackend::spawn(const BackendOptions& opt) const {
  return std::make_unique<CudaBackend>(model_, opt);
}

std::unique_ptr<Backend> CudaBackend::clone() {
  State& s = *s_;
  KVSCOPE_CUDA(cudaSetDevice(s.device));
  push_state({}, {});  // pending evictions applied: the device cache matches the book
  auto copy = std::make_unique<CudaBackend>(model_, options());
  State& c = *copy->s_;
  // The copy's stream waits for this one's work; both caches are [segment][cap].
  KVSCOPE_CUDA(cudaStreamSynchronize(s.stream));
  using Pair = std::pair<DeviceBuffer*, const DeviceBuffer*>;
  for (auto [dst, src] : {Pair{&c.k, &s.k}, Pair{&c.v, &s.v}, Pair{&c.pos, &s.pos}, Pair{&c.stats, &s.stats}})
    KVSCOPE_CUDA(cudaMemcpyAsync(dst->get(), src->get(), src->bytes(), cudaMemcpyDeviceToDevice, c.stream));
  KVSCOPE_CUDA(cudaStreamSynchronize(c.stream));
  c.start = s.start;  // the rows were copied as they lie
  copy->copy_sequence(*this);
  return copy;
}

int64_t CudaBackend::device_bytes() const {
  const State& s = *s_;
  int64_t n = int64_t(kBlasWorkspace);
  for (const DeviceBuffer* b : {&s.k, &s.v, &s.pos, &s.stats, &s.dev_stage, &s.x, &s.h, &s.qkv, &s.att,
                                &s.gu, &s.act, &s.split, &s.scores, &s.partial, &s.gumbel, &s.mean_acc, &s.max_acc,
                                &s.logits, &s.cap_logits, &s.cap_probs, &s.sample_scratch, &s.token_dev})
    n += int64_t(b->bytes());
  return n;
}

// Grows the workspace; never called with larger needs during decode, whose
// sizes were allocated by the constructor.
void CudaBackend::ensure_workspace(int rows, int logit_rows, int64_t capture_floats, const SlotStatRule& rule) {
  State& s = *s_;
  const bool grow_rows = rows > s.rows;
  const int qc = s.qc_for(rows);
  const bool grow_chunk = qc > s.q_chunk;
  const bool grow_gumbel = rule.source == StatSource::GumbelSoftmax && qc > s.gumbel_chunk;
  const bool grow_max = rule.source != StatSource::None && rule.reduce == ReaderReduce::Max && rows > s.max_rows;
  const bool grow_logits = logit_rows > s.logit_rows;
  const bool grow_capture = capture_floats > s.capture_floats;
  if (!(grow_rows || grow_chunk || grow_gumbel || grow_max || grow_logits || grow_capture)) return;
  KVSCOPE_CUDA(cudaStreamSynchronize(s.stream));  // nothing in flight may use what is freed
  const std::size_t r = std::size_t(std::max(rows, s.rows));
  if (grow_rows) {
    s.x = DeviceBuffer();  // free first: the new buffers may need the room
    s.h = DeviceBuffer();
    s.qkv = DeviceBuffer();
    s.att = DeviceBuffer();
    s.gu = DeviceBuffer();
    s.act = DeviceBuffer();
    s.split = DeviceBuffer();
    s.x = DeviceBuffer(r * s.d * 4, "activations");
    s.h = DeviceBuffer(r * s.d * 4, "activations");
    s.qkv = DeviceBuffer(r * s.qkv_w * 4, "activations");
    s.att = DeviceBuffer(r * std::size_t(s.H) * s.hd * 4, "activations");
    s.gu = DeviceBuffer(r * s.gu_w * 4, "activations");
    s.act = DeviceBuffer(r * std::size_t(model_->cfg.intermediate) * 4, "activations");
    if (r > 1) s.split = DeviceBuffer(cuda::linear_scratch_bytes(int(r), s.max_in), "activations");
    s.rows = int(r);
  }
  if (grow_chunk) {
    s.scores = DeviceBuffer();
    s.partial = DeviceBuffer();
    s.scores = DeviceBuffer(std::size_t(s.H) * qc * s.cap * 4, "attention scores");
    s.partial = DeviceBuffer(std::size_t(s.H) * qc * cuda::pv_splits(s.cap) * s.hd * 4, "attention partial sums");
    s.q_chunk = qc;
  }
  if (grow_gumbel) {
    s.gumbel = DeviceBuffer();
    s.gumbel = DeviceBuffer(std::size_t(s.H) * qc * s.cap * 4, "Keyformer scores");
    s.gumbel_chunk = qc;
  }
  if (grow_max) {
    s.max_acc = DeviceBuffer();
    s.max_acc = DeviceBuffer(std::size_t(s.g) * rows * s.cap * 4, "slot statistic accumulator");
    s.max_rows = rows;
  }
  if (grow_logits) {
    s.logits = DeviceBuffer();
    s.last_logits = nullptr;
    s.logits = DeviceBuffer(std::size_t(logit_rows) * s.V * 4, "logits");
    s.logit_rows = logit_rows;
  }
  if (grow_capture) {
    s.cap_logits = DeviceBuffer();
    s.cap_probs = DeviceBuffer();
    s.cap_logits = DeviceBuffer(std::size_t(capture_floats) * 4, "attention captures");
    s.cap_probs = DeviceBuffer(std::size_t(capture_floats) * 4, "attention captures");
    s.capture_floats = capture_floats;
  }
}

// One host -> device copy: segment lengths (the book's) and start rows, this
// call's tokens and statistic row weights, and the pending evictions, which
// are applied right after. Each segment's rows move as place_rows() says
// (kv/row_moves.h): the shorter side, with room for the book's length,
// which already counts this call's tokens.
void CudaBackend::push_state(std::span<const int> tokens, const std::vector<float>& row_weights) {
  State& s = *s_;
  const int b = s.stage_next;
  s.stage_next ^= 1;
  KVSCOPE_CUDA(cudaEventSynchronize(s.stage_done[b]));  // the copy two pushes ago (long done in practice)
  int* hs = s.host_stage[b];
  for (int seg = 0; seg < s.S; ++seg) hs[seg] = kv().len(seg);
  std::copy(tokens.begin(), tokens.end(), hs + s.off_tokens);
  if (!row_weights.empty()) std::memcpy(hs + s.off_weights, row_weights.data(), row_weights.size() * 4);
  int n_jobs = 0;
  std::size_t maps_used = 0;
  for (int seg = 0; seg < s.S; ++seg) {
    const int len_after = kv().len(seg);
    RowMoves moves;  // no eviction: every slot stays
    if (s.dirty[seg]) {
      moves = plan_row_moves(s.map[seg], s.map_from[seg]);
    } else {
      const int on_device = len_after - int(tokens.size());
      if (s.start[seg] + len_after <= s.region) continue;  // the appends fit where the segment lies
      moves.kept = moves.first_hole = on_device;
    }
    const RowPlacement place = place_rows(moves, s.start[seg], s.region, len_after);
    if (place.rows_moved() > 0 || moves.first_hole < moves.kept) {
      const cuda::CompactJob job{seg,
                                 moves.kept,
                                 s.dirty[seg] ? int(maps_used) : -1,
                                 moves.first_hole,
                                 s.start[seg],
                                 place.dst_start,
                                 place.move_begin,
                                 place.move_end,
                                 place.rotate_begin,
                                 place.rotate_end};
      std::memcpy(hs + s.off_jobs + cuda::kCompactJobInts * n_jobs++, &job, sizeof job);
      if (s.dirty[seg]) {
        std::copy(s.map[seg].begin(), s.map[seg].end(), hs + s.off_maps + maps_used);
        maps_used += s.map[seg].size();
      }
    }
    s.start[seg] = place.dst_start;
    s.dirty[seg] = 0;
    s.map[seg].clear();
  }
  std::copy(s.start.begin(), s.start.end(), hs + s.off_starts);
  const std::size_t ints = n_jobs ? s.off_maps + maps_used : s.off_jobs;
  KVSCOPE_CUDA(cudaMemcpyAsync(s.dev_stage.get(), hs, ints * 4, cudaMemcpyHostToDevice, s.stream));
  KVSCOPE_CUDA(cudaEventRecord(s.stage_done[b], s.stream));
  if (n_jobs) {
    // The kernel reads each job's rows from src_start and writes them from
    // dst_start; the staged starts are already the new ones, read by the
    // kernels after it.
    const bool compacted = options().positions == PositionMode::Compacted && model_->inv_freq;
    cuda::compact(s.kv, reinterpret_cast<const cuda::CompactJob*>(s.dev_stage.as<int>() + s.off_jobs), n_jobs,
                  s.dev_stage.as<int>() + s.off_maps,
                  compacted ? model_->inv_freq : nullptr, int(model_->inv_freq_host.size()), s.stream);
  }
}

// This backend's own limit: no sequence longer than the model's sliding
// window. The session refuses those for every backend before they get here;
// the CPU backend computes them when called directly (its mask is the same
// rule as attention.cu's), so this is the one refusal the two do not share.
void CudaBackend::check_backend_limits(int n) const {
  const ModelConfig& cfg = model_->cfg;
  if (cfg.sliding_window > 0 && tokens_seen() + n > cfg.sliding_window)
    throw Error("forward", "sliding_window",
                "sequences longer than the model's sliding window (" + std::to_string(cfg.sliding_window) +
                    ") are not supported");
}

void CudaBackend::do_forward(std::span<const int> tokens, const ForwardOptions& opt, ForwardOutput& out) {
  const ModelConfig& cfg = model_->cfg;
  State& s = *s_;
  const int n = static_cast<int>(tokens.size());
  const int d = cfg.hidden, H = cfg.n_heads, S = s.S, V = cfg.vocab_size;
  KVSCOPE_CUDA(cudaSetDevice(s.device));

  const int cap_first = opt.capture_last_query_only ? n - 1 : 0;
  const int first_row = opt.all_logits ? 0 : n - 1;
  const int rows = n - first_row;
  // Before the book changes: may throw for memory.
  ensure_workspace(n, rows, capture_floats(opt, n), opt.stats);
  const int first_pos = begin_forward(n, opt, out);
  const bool stats_on = opt.stats.active();
  // ExpectedAttention: every layer's queries before RoPE come to the host,
  // where the moments are summed by the CPU's code (expected_attention.h).
  const bool moments = stats_on && opt.stats.source == StatSource::Expected;
  std::vector<float> q_host;
  if (moments) q_host.resize(std::size_t(s.L) * n * cfg.q_dim());
  push_state(tokens, stat_row_weights());

  cudaStream_t st = s.stream;
  const int* lens = s.dev_lens();
  float* x = s.x.as<float>();
  float* hbuf = s.h.as<float>();
  auto norm = [&](const float* w, const float* b, const float* in, int nrows, float* o) {
    if (cfg.norm == NormKind::LayerNorm) cuda::layer_norm(in, nrows, d, w, b, cfg.norm_eps, o, st);
    else cuda::rms_norm(in, nrows, d, w, cfg.norm_eps, o, st);
  };
  auto copy_rows = [&](const float* from, int nrows, float* to) {
    KVSCOPE_CUDA(cudaMemcpyAsync(to, from, std::size_t(nrows) * d * 4, cudaMemcpyDeviceToDevice, st));
  };
  auto linear = [&](const cuda::DeviceLinear& W, const float* in, int nrows, float* o, bool acc) {
    cuda::linear(W, in, nrows, o, acc, s.split.get(), s.split.bytes(), s.blas->get(), st);
  };
  auto mlp = [&](const CudaModel::Layer& L) {  // x += down(act(h W_up) [* silu gate])
    const int ff = cfg.intermediate;
    linear(L.gate_up, hbuf, n, s.gu.as<float>(), false);
    if (cfg.gated_mlp) {
      cuda::silu_mul(s.gu.as<float>(), n, ff, s.act.as<float>(), st);  // SiLU is the only gated activation
      linear(L.down, s.act.as<float>(), n, x, true);
    } else {
      const int64_t m = int64_t(n) * ff;
      if (cfg.act == Activation::GeluTanh) cuda::gelu_tanh(s.gu.as<float>(), m, st);
      else if (cfg.act == Activation::GeluErf) cuda::gelu_erf(s.gu.as<float>(), m, st);
      else if (cfg.act == Activation::Relu) cuda::relu(s.gu.as<float>(), m, st);
      else cuda::silu(s.gu.as<float>(), m, st);
      linear(L.down, s.gu.as<float>(), n, x, true);
    }
  };

  const int* dev_tokens = s.dev_stage.as<int>() + s.off_tokens;
  if (model_->project_in.empty()) {
    cuda::embed(model_->wtype, model_->tok_emb, model_->emb_ld, model_->pos_emb, model_->pos_ld, dev_tokens, n, d,
                first_pos + cfg.position_offset, x, st);
  } else {
    // OPT's narrower embedding: gathered into s.gu (free until the first
    // MLP, and wider), projected in, then the positions added (the CPU's order).
    cuda::embed(model_->wtype, model_->tok_emb, model_->emb_ld, nullptr, 0, dev_tokens, n, cfg.embed_width(), 0,
                s.gu.as<float>(), st);
    linear(model_->project_in, s.gu.as<float>(), n, x, false);
    if (model_->pos_emb)
      cuda::add_positions(model_->wtype, model_->pos_emb, model_->pos_ld, n, d, first_pos + cfg.position_offset, x, st);
  }
  const bool compacted = options().positions == PositionMode::Compacted;
  cuda::RopeArgs rope{model_->inv_freq, int(model_->inv_freq_host.size()), n, first_pos, compacted, lens};
  const float scale = 1.0f / std::sqrt(static_cast<float>(s.hd));
  const int group = s.layout.group_size();
  int64_t next_capture = 0;  // captured layers lie in cap_logits / cap_probs in layer order
  for (int l = 0; l < s.L; ++l) {
    const CudaModel::Layer& L = model_->layers[l];
    const int kvl = s.layout.source_of_layer[l];
    const int seg0 = s.layout.segment(kvl, 0);
    // A post-norm block (OPT-350m) reads x itself; the others its norm.
    if (cfg.post_norm) copy_rows(x, n, hbuf);
    else norm(L.attn_norm_w, L.attn_norm_b, x, n, hbuf);
    linear(L.qkv, hbuf, n, s.qkv.as<float>(), false);
    const int stride = L.qkv.out;
    if (cfg.clip_qkv > 0) cuda::clamp(s.qkv.as<float>(), int64_t(n) * stride, cfg.clip_qkv, st);  // MPT: q, k and v
    if (L.q_norm_w) {  // Qwen3: each head of q and k normalised before RoPE (and before the cache)
      cuda::rms_norm_heads(s.qkv.as<float>(), n, stride, 0, H, s.hd, L.q_norm_w, cfg.norm_eps, st);
      if (L.owns_kv && L.k_norm_w)
        cuda::rms_norm_heads(s.qkv.as<float>(), n, stride, cfg.q_dim(), cfg.n_kv_heads, s.hd, L.k_norm_w, cfg.norm_eps,
                             st);
    }
    if (moments)
      KVSCOPE_CUDA(cudaMemcpy2DAsync(q_host.data() + std::size_t(l) * n * cfg.q_dim(), std::size_t(cfg.q_dim()) * 4,
                                     s.qkv.as<float>(), std::size_t(stride) * 4, std::size_t(cfg.q_dim()) * 4, n,
                                     cudaMemcpyDeviceToHost, st));
    if (L.owns_kv) cuda::append_kv(s.qkv.as<float>(), stride, cfg.q_dim(), cfg.q_dim() + cfg.kv_dim(), s.g, seg0,
                                   rope, s.kv, st);
    cuda::rope_q(s.qkv.as<float>(), stride, H, s.hd, group, seg0, rope, st);

    cuda::AttentionArgs a;
    a.q = s.qkv.as<float>();
    a.q_stride = stride;
    a.kv = s.kv;
    a.seg_len = lens;
    a.seg0 = seg0;
    a.group = group;
    a.n_heads = H;
    a.n = n;
    a.first_pos = first_pos;
    a.window = cfg.sliding_window;
    a.alibi_slopes = model_->alibi_slopes;
    a.alibi_slots = options().positions == PositionMode::Compacted;
    a.scale = scale;
    for (int kvh = 0; kvh < s.g; ++kvh) a.max_len = std::max(a.max_len, kv().len(seg0 + kvh));
    a.layer = l;
    a.out = s.att.as<float>();
    a.out_stride = cfg.q_dim();
    if (capture_place(l) >= 0) {
      a.capture_logits = s.cap_logits.as<float>() + next_capture;
      a.capture_probs = s.cap_probs.as<float>() + next_capture;
      a.capture_first = cap_first;
      next_capture += int64_t(out.attention[capture_place(l)].probs.size());
    }
    a.scores = s.scores.as<float>();
    a.partial = s.partial.as<float>();
    a.q_chunk = s.qc_for(n);  // what ensure_workspace sized scores, partials and the Keyformer rows for
    if (stats_on) {
      a.stats.rule = opt.stats;
      if (opt.stats.from_cache()) a.stats.rule.source = StatSource::None;  // scored after attention, from the cache
      a.stats.row_weight = reinterpret_cast<const float*>(s.dev_stage.as<int>() + s.off_weights);
      a.stats.readers = static_cast<float>(readers(seg0));
      a.stats.mean_acc = s.mean_acc.as<float>();
      a.stats.max_acc = s.max_acc.as<float>();
      a.stats.gumbel_rows = s.gumbel.as<float>();
      if (l == s.layout.owners[kvl] && !opt.stats.from_cache()) cuda::clear_stat_acc(a.stats, s.g, n, s.cap, st);
    }
    cuda::attention(a, st);
    if (stats_on && l == s.layout.last_reader(kvl)) {
      if (opt.stats.source == StatSource::Cur || opt.stats.source == StatSource::LagKv)
        cuda::cache_scores(s.kv, opt.stats, lens, seg0, s.g, st);
      else if (opt.stats.source == StatSource::KeyNorm || opt.stats.source == StatSource::KeyDiff)
        cuda::key_scores(s.kv, opt.stats.source, lens, seg0, s.g, st);
      // Leverage: scored on the host after the call (leverage_scores_on_host).
      else cuda::finish_stats(a.stats, stat_carry(), lens, seg0, s.g, n, a.max_len, s.kv.stats, s.cap, st);
    }

    if (cfg.parallel_residual) {
      // NeoX: x + attn(ln1(x)) + mlp(ln2(x)): ln2 reads x before the attention output is added.
      norm(L.mlp_norm_w, L.mlp_norm_b, x, n, hbuf);
      linear(L.o, s.att.as<float>(), n, x, true);
      mlp(L);
    } else if (cfg.post_norm) {
      // OPT-350m: x = ln1(x + attn(x)); x = ln2(x + mlp(x)).
      linear(L.o, s.att.as<float>(), n, x, true);
      norm(L.attn_norm_w, L.attn_norm_b, x, n, hbuf);
      copy_rows(hbuf, n, x);
      mlp(L);
      norm(L.mlp_norm_w, L.mlp_norm_b, x, n, hbuf);
      copy_rows(hbuf, n, x);
    } else {
      linear(L.o, s.att.as<float>(), n, x, true);
      norm(L.mlp_norm_w, L.mlp_norm_b, x, n, hbuf);
      mlp(L);
    }
    // As the layer's work is queued (the device runs it later): a prompt
    // pass on a GPU is short, the host loop is what a check can cut.
    if (opt.between_layers) opt.between_layers(l);
  }

  if (model_->final_norm_w)
    norm(model_->final_norm_w, model_->final_norm_b, x + std::size_t(first_row) * d, rows, hbuf);
  else copy_rows(x + std::size_t(first_row) * d, rows, hbuf);  // OPT-350m has no final norm
  const float* head_in = hbuf;
  if (!model_->project_out.empty()) {  // OPT: back to the embedding's width (s.gu is free again)
    linear(model_->project_out, hbuf, rows, s.gu.as<float>(), false);
    head_in = s.gu.as<float>();
  }
  linear(model_->lm_head, head_in, rows, s.logits.as<float>(), false);
  s.last_logits = s.logits.as<float>() + std::size_t(rows - 1) * V;

  // What the caller asked for comes back now, into the rows begin_forward()
  // shaped in `out` (each captured layer in its place there, read from the
  // device buffers in layer order).
  bool copied = false;
  int64_t capture_at = 0;
  for (int l = 0; l < s.L; ++l) {
    if (capture_place(l) < 0) continue;
    AttentionRows& a = out.attention[capture_place(l)];
    const std::size_t total = a.probs.size();
    if (opt.capture_logits)
      KVSCOPE_CUDA(cudaMemcpyAsync(a.logits.data(), s.cap_logits.as<float>() + capture_at, total * 4,
                                   cudaMemcpyDeviceToHost, st));
    KVSCOPE_CUDA(
        cudaMemcpyAsync(a.probs.data(), s.cap_probs.as<float>() + capture_at, total * 4, cudaMemcpyDeviceToHost, st));
    capture_at += int64_t(total);
    copied = true;
  }

  const int max_len = kv().max_len();
  if (stats_on && max_len > 0) {
    KVSCOPE_CUDA(cudaMemcpy2DAsync(s.stats_host, std::size_t(max_len) * 4, s.kv.stats, std::size_t(s.cap) * 4,
                                   std::size_t(max_len) * 4, S, cudaMemcpyDeviceToHost, st));
    copied = true;
  }
  if (opt.logits_to_host) {
    out.n_logits = rows;
    out.logits.resize(std::size_t(rows) * V);
    KVSCOPE_CUDA(cudaMemcpyAsync(out.logits.data(), s.logits.get(), std::size_t(rows) * V * 4,
                                 cudaMemcpyDeviceToHost, st));
    copied = true;
  } else {
    out.logits.clear();
    out.n_logits = 0;
  }
  if (copied || moments) KVSCOPE_CUDA(cudaStreamSynchronize(st));
  if (stats_on && max_len > 0)  // a million floats for a 7B model: runs of segments in parallel
    parallel_runs(S, runs_for(S, kv().total_slots()), [&](int, int seg) {
      const float* src = s.stats_host + std::size_t(seg) * max_len;
      stats_[seg].assign(src, src + kv().len(seg));
    });
  if (stats_on && opt.stats.source == StatSource::Leverage) leverage_scores_on_host();
  if (moments) {
    query_moments_.ensure(s.L, H, s.hd);
    for (int l = 0; l < s.L; ++l)
      for (int h = 0; h < H; ++h)
        query_moments_.add(l, h, q_host.data() + std::size_t(l) * n * cfg.q_dim(), n, cfg.q_dim(), first_pos,
                           opt.stats.sinks);
    for (int seg = 0; seg < S; ++seg) {
      const std::vector<float> keys = read_segment(s.k.get(), seg), values = read_segment(s.v.get(), seg);
      expected_scores(seg, keys.data(), values.data(), opt.stats,
                      [&](int) -> const std::vector<float>& { return model_->inv_freq_host; });
    }
  }
  if (opt.value_weights) update_value_weights();
  // After everything here: the statistics reach the host only now.
  if (opt.alongside_head) opt.alongside_head();
}

bool CudaBackend::has_last_logits() const { return s_->last_logits != nullptr; }

int CudaBackend::do_sample(const SamplingParams& p, uint64_t step) {
  State& s = *s_;
  KVSCOPE_CUDA(cudaSetDevice(s.device));
  cuda::sample(s.last_logits, s.V, p, step, s.sample_scratch.as<float>(), s.token_dev.as<int>(), s.stream);
  KVSCOPE_CUDA(cudaMemcpyAsync(s.token_host, s.token_dev.get(), 4, cudaMemcpyDeviceToHost, s.stream));
  KVSCOPE_CUDA(cudaStreamSynchronize(s.stream));
  return *s.token_host;
}

// The rows move at the next push: until then the device holds old_len
// slots, and `keep` is composed with the evictions not yet applied there.
void CudaBackend::do_retain(int seg, std::span<const int> keep, int old_len) {
  State& s = *s_;
  if (!s.dirty[seg]) s.map_from[seg] = old_len;  // what the device holds now
  // Composed in place (keep[i] >= i, so m[keep[i]] is read before anything
  // overwrites it) and in storage kept from step to step: a session evicts
  // from every segment every step, over a thousand of them for a 7B model.
  // In Compacted mode every kept key is rotated to its new slot on the
  // device at the push too.
  std::vector<int>& m = s.map[seg];
  if (s.dirty[seg]) {
    for (std::size_t i = 0; i < keep.size(); ++i) m[i] = m[keep[i]];
    m.resize(keep.size());
  } else {
    m.assign(keep.begin(), keep.end());
  }
  s.dirty[seg] = 1;
}

void CudaBackend::do_reset() {
  State& s = *s_;
  for (auto& m : s.map) m.clear();
  std::fill(s.dirty.begin(), s.dirty.end(), 0);
  std::fill(s.start.begin(), s.start.end(), 0);  // staged at the next push
}

void CudaBackend::on_stats_cleared() {
  State& s = *s_;
  KVSCOPE_CUDA(cudaSetDevice(s.device));
  KVSCOPE_CUDA(cudaMemsetAsync(s.kv.stats, 0, s.stats.bytes(), s.stream));
}

std::vector<float> CudaBackend::read_row(const void* base, int seg, int slot) {
  State& s = *s_;
  if (seg < 0 || seg >= s.S || slot < 0 || slot >= kv().len(seg))
    throw Error("cuda", "read_row", "slot outside the segment");
  KVSCOPE_CUDA(cudaSetDevice(s.device));
  push_state({}, {});  // applies pending evictions
  std::vector<uint16_t> bits(s.hd);
  const std::size_t off = (std::size_t(seg) * s.region + s.start[seg] + slot) * s.hd * 2;
  KVSCOPE_CUDA(cudaMemcpyAsync(bits.data(), static_cast<const char*>(base) + off, std::size_t(s.hd) * 2,
                               cudaMemcpyDeviceToHost, s.stream));
  KVSCOPE_CUDA(cudaStreamSynchronize(s.stream));
  std::vector<float> row(s.hd);
  for (int i = 0; i < s.hd; ++i) row[i] = cuda::from_bits(s.kv.type, bits[i]);
  return row;
}

// StatSource::Leverage: the CPU backend's code (leverage_scores.h) on the
// keys read back from the device, widened from 16 bits. A Cholesky of
// head_dim^2 per segment is host work in both backends; this costs one
// copy of the keys a step, which the policy's users accept for its rule.
void CudaBackend::leverage_scores_on_host() {
  State& s = *s_;
  for (int seg = 0; seg < s.S; ++seg) {
    const int len = kv().len(seg);
    std::vector<float> keys = read_segment(s.k.get(), seg);
    unrotate_keys(keys.data(), len, s.hd, kv().rope_positions(seg).data(), model_->inv_freq_host);
    stats_[seg].resize(len);
    leverage_scores(keys.data(), len, s.hd, stats_[seg].data());
  }
}

// The kv().len(seg) rows of segment seg of the device's keys (base s.k) or
// values (s.v), widened from 16 bits: as they are after the last call,
// before evictions not yet pushed.
std::vector<float> CudaBackend::read_segment(const void* base, int seg) {
  State& s = *s_;
  std::vector<uint16_t> bits(std::size_t(kv().len(seg)) * s.hd);
  const std::size_t off = (std::size_t(seg) * s.region + s.start[seg]) * s.hd * 2;
  KVSCOPE_CUDA(cudaMemcpyAsync(bits.data(), static_cast<const char*>(base) + off, bits.size() * 2,
                               cudaMemcpyDeviceToHost, s.stream));
  KVSCOPE_CUDA(cudaStreamSynchronize(s.stream));
  std::vector<float> rows(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) rows[i] = cuda::from_bits(s.kv.type, bits[i]);
  return rows;
}

void CudaBackend::compute_value_weights(const std::vector<ValueWeightJob>& jobs) {
  State& s = *s_;
  const KvLayout& lay = kv().layout();
  int most = 0;
  for (const auto& j : jobs) most = std::max(most, j.count);
  cuda::DeviceBuffer out(std::size_t(most) * 4, "value weights");
  for (const auto& j : jobs) {
    const int layer = lay.owners[j.seg / lay.n_kv_heads], G = lay.group_size();
    cuda::value_weights(model_->layers[layer].o, s.kv, j.seg, j.first, j.count, (j.seg % lay.n_kv_heads) * G, G,
                        out.as<float>(), s.stream);
    KVSCOPE_CUDA(cudaMemcpyAsync(value_weights_[j.seg].data() + j.first, out.get(), std::size_t(j.count) * 4,
                                 cudaMemcpyDeviceToHost, s.stream));
    KVSCOPE_CUDA(cudaStreamSynchronize(s.stream));
  }
}

std::vector<float> CudaBackend::read_key(int seg, int slot) { return read_row(s_->k.get(), seg, slot); }
std::vector<float> CudaBackend::read_value(int seg, int slot) { return read_row(s_->v.get(), seg, slot); }

}  // namespace kvscope
