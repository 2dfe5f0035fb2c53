#include "backend/cpu/cpu_backend.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "backend/cpu/cache_scores_cpu.h"
#include "backend/cpu/decode_attention.h"
#include "backend/leverage_scores.h"
#include "backend/parallel.h"
#include "backend/sampler.h"
#include "common/freed_heap.h"
#include "io/dtype.h"
#include "kv/row_moves.h"
#include "model/rope.h"

namespace kvscope {
namespace {

std::vector<float> f32(const WeightTensor& t) { return t.empty() ? std::vector<float>{} : t.to_f32(); }

}  // namespace

std::shared_ptr<const CpuModel> CpuModel::create(const ModelConfig& cfg, const ModelWeights& w, WeightFormat format) {
  auto m = std::make_shared<CpuModel>();
  m->cfg = cfg;
  m->format = format;
  const bool half = format == WeightFormat::F16;
  // The table stays fp32 under f16 (a lookup reads one row, not the table).
  m->tok_emb = cpu::Linear::from(w.tok_emb, WeightTensor{}, half ? WeightFormat::F32 : format, "embed_tokens");
  m->pos_emb = f32(w.pos_emb);
  m->final_norm_w = f32(w.final_norm_w);
  m->final_norm_b = f32(w.final_norm_b);
  // A tied head shares the embedding's values; converting twice costs memory
  // only (none when both stay in the file's blocks), and keeps the head a
  // plain Linear.
  m->lm_head = cpu::Linear::from(w.lm_head, w.lm_head_b, format, "lm_head");
  m->project_in = cpu::Linear::from(w.project_in, WeightTensor{}, format, "project_in");
  m->project_out = cpu::Linear::from(w.project_out, WeightTensor{}, format, "project_out");
  for (const auto& L : w.layers) {
    CpuModel::Layer l;
    l.attn_norm_w = f32(L.attn_norm_w);
    l.attn_norm_b = f32(L.attn_norm_b);
    l.mlp_norm_w = f32(L.mlp_norm_w);
    l.mlp_norm_b = f32(L.mlp_norm_b);
    l.q_norm_w = f32(L.q_norm_w);
    l.k_norm_w = f32(L.k_norm_w);
    l.post_attn_norm_w = f32(L.post_attn_norm_w);
    l.post_mlp_norm_w = f32(L.post_mlp_norm_w);
    const std::string at = "layer " + std::to_string(m->layers.size()) + " ";
    l.q = cpu::Linear::from(L.wq, L.bq, format, at + "q");
    l.k = cpu::Linear::from(L.wk, L.bk, format, at + "k");
    l.v = cpu::Linear::from(L.wv, L.bv, format, at + "v");
    l.o = cpu::Linear::from(L.wo, L.bo, format, at + "o");
    l.up = cpu::Linear::from(L.w_up, L.b_up, format, at + "up");
    l.gate = cpu::Linear::from(L.w_gate, L.b_gate, format, at + "gate");
    l.down = cpu::Linear::from(L.w_down, L.b_down, format, at + "down");
    m->layers.push_back(std::move(l));
  }
  m->inv_freq = rope_inv_freq(cfg);
  m->inv_freq_local = rope_inv_freq_local(cfg);
  return m;
}

namespace {

// Bytes of one tensor as CpuModel holds it: a matrix read in place as its
// file stores it under stored, else fp32 (or half for f16's matrices).
int64_t held_bytes(const WeightTensor& t, WeightFormat format, bool matrix) {
  if (t.empty()) return 0;
  if (cpu::Linear::reads_in_place(t, format)) return int64_t(t.stored_bytes());
  return t.numel() * (format == WeightFormat::F16 && matrix ? 2 : 4);
}

}  // namespace

int64_t CpuModel::host_bytes(const ModelWeights& w, WeightFormat format) {
  int64_t n = held_bytes(w.tok_emb, format == WeightFormat::F16 ? WeightFormat::F32 : format, false) +
              held_bytes(w.pos_emb, format, false) + held_bytes(w.project_in, format, true) +
              held_bytes(w.project_out, format, true);
  // A tied head read in place shares the table's blocks; converted, it is a copy.
  const bool shared = w.lm_head.data == w.tok_emb.data && cpu::Linear::reads_in_place(w.lm_head, format);
  if (!shared) n += held_bytes(w.lm_head, format, true);
  // Norms and biases: fp32 whatever the format.
  n += 4 * (w.final_norm_w.numel() + w.final_norm_b.numel() + w.lm_head_b.numel());
  for (const auto& L : w.layers) {
    for (const WeightTensor* t : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_up, &L.w_gate, &L.w_down})
      n += held_bytes(*t, format, true);
    for (const WeightTensor* t :
         {&L.attn_norm_w, &L.attn_norm_b, &L.bq, &L.bk, &L.bv, &L.bo, &L.mlp_norm_w, &L.mlp_norm_b, &L.b_up, &L.b_gate,
          &L.b_down, &L.q_norm_w, &L.k_norm_w, &L.post_attn_norm_w, &L.post_mlp_norm_w})
      n += 4 * t->numel();
  }
  return n;
}

int64_t CpuModel::decode_read_bytes(const ModelWeights& w, WeightFormat format) {
  int64_t n = held_bytes(w.lm_head, format, true);
  for (const auto& L : w.layers)
    for (const WeightTensor* t : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_up, &L.w_gate, &L.w_down})
      n += held_bytes(*t, format, true);
  return n;
}

CpuBackend::CpuBackend(std::shared_ptr<const CpuModel> model, const BackendOptions& opt)
    : Backend(model->cfg, opt), model_(std::move(model)) {
  cpu::use_single_threaded_blas();
  layout_ = kv().layout();
  hd_ = model_->cfg.head_dim;
  // Each region a whole number of pages, so that every segment's starts on
  // a page: the rows a segment holds take the pages they fill and no
  // share of one its neighbour also touches (SmolLM2, 27 + 32 tokens: the
  // cache's pages 3.2 -> 2.8 MiB). The rows added are slack eviction can
  // use; a page of them takes memory only once a row is stored there.
  region_ = region_rows(opt.max_tokens, hd_);
  start_.assign(layout_.n_segments(), 0);
  const int64_t n = int64_t(layout_.n_segments()) * region_ * hd_;
  k_ = ZeroedFloats(static_cast<std::size_t>(n));
  v_ = ZeroedFloats(static_cast<std::size_t>(n));
  contrib_.assign(layout_.n_segments(), {});
  shared_maxima_.assign(layout_.n_segments(), {});
}

int CpuBackend::region_rows(int capacity, int head_dim) {
  return kv_region_rows_paged(capacity, head_dim, ZeroedPages::page_bytes());
}

std::unique_ptr<Backend> CpuBackend::spawn(const BackendOptions& opt) const {
  return std::make_unique<CpuBackend>(model_, opt);
}

void CpuBackend::do_reset() {
  std::fill(start_.begin(), start_.end(), 0);
  k_.release(0, k_.size());
  v_.release(0, v_.size());
}

// Rows [row0, row1) of segment seg's region no longer hold a slot, and
// neither do its rows below row0 (`below` vacant) or above row1 (`above`):
// the whole pages of the vacant run go back (ZeroedPages::release), so the
// cache's memory follows the slots held as eviction moves them through the
// region. Widening to the vacant side's page edge (within the region) is
// what frees a page a window leaves one row at a time.
void CpuBackend::release_rows(int seg, int64_t row0, int64_t row1, VacantSide vacant) {
  const int64_t page = int64_t(ZeroedPages::page_bytes() / sizeof(float));
  const int64_t base = int64_t(seg) * region_ * hd_, end = base + int64_t(region_) * hd_;
  int64_t lo = base + row0 * hd_, hi = base + row1 * hd_;
  if (vacant == VacantSide::Below) lo = std::max(base, lo / page * page);
  if (vacant == VacantSide::Above) hi = std::min(end, (hi + page - 1) / page * page);
  if (hi <= lo) return;
  k_.release(std::size_t(lo), std::size_t(hi - lo));
  v_.release(std::size_t(lo), std::size_t(hi - lo));
}

void CpuBackend::do_retain(int seg, std::span<const int> keep, int old_len) {
  move_kept_rows(seg, keep, old_len);
  if (options().positions == PositionMode::Compacted) {
    // StreamingLLM's pos-shift: a kept key moves to the rotation of its new
    // slot; rotations compose, so rotating by the difference is exact.
    const std::vector<int>& rope = kv().rope_positions(seg);  // the rotations the kept keys have
    const auto& inv_freq = model_->inv_freq_of(layout_.owners[seg / layout_.n_kv_heads]);
    for (std::size_t i = 0; i < rope.size(); ++i) {
      const int delta = static_cast<int>(i) - rope[i];
      if (delta != 0) rope_rotate(key_mut(seg, static_cast<int>(i)), inv_freq, static_cast<float>(delta));
    }
  }
}

// Closes the holes of evicted slots by moving whichever side is shorter:
// the kept slots after the first hole down, or those before the last hole
// up (the segment then starts later in its region). A decode step of a
// window or StreamingLLM cache evicts the oldest unprotected slot, so only
// the sinks move, not the whole cache. Runs of consecutive slots move in
// one memmove each, ordered so that no source is overwritten before it is
// read.
void CpuBackend::move_kept_rows(int seg, std::span<const int> keep, int old_len) {
  const RowMoves plan = plan_row_moves(keep, old_len);
  const int kept = plan.kept, gone = plan.gone, first_hole = plan.first_hole, in_place_tail = plan.in_place_tail;
  if (gone == 0) return;
  float* K = k_.data() + int64_t(seg) * region_ * hd_;
  float* V = v_.data() + int64_t(seg) * region_ * hd_;
  const int64_t from = start_[seg];
  auto move_run = [&](int64_t dst_row, int64_t src_row, int rows) {
    std::memmove(K + dst_row * hd_, K + src_row * hd_, sizeof(float) * size_t(rows) * hd_);
    std::memmove(V + dst_row * hd_, V + src_row * hd_, sizeof(float) * size_t(rows) * hd_);
  };
  if (!plan.up_is_shorter()) {
    for (int i = first_hole; i < kept;) {  // ascending: destinations lie below every later source
      int j = i;
      while (j + 1 < kept && keep[j + 1] == keep[j] + 1) ++j;
      move_run(from + i, from + keep[i], j - i + 1);
      i = j + 1;
    }
    release_rows(seg, from + kept, from + old_len, VacantSide::Above);
  } else {
    const int64_t to = from + gone;  // new slot i goes to row to + i
    for (int i = in_place_tail - 1; i >= 0;) {  // descending: destinations lie above every earlier source
      int j = i;
      while (j > 0 && keep[j - 1] == keep[j] - 1) --j;
      move_run(to + j, from + keep[j], i - j + 1);
      i = j - 1;
    }
    start_[seg] = static_cast<int>(to);
    release_rows(seg, from, to, VacantSide::Below);
  }
}

// Before appending n slots: a segment whose rows would run past its region
// moves back to its region's start (every region_ - capacity evictions from
// the front at most, so a copy of the cache that rarely).
void CpuBackend::make_room(int seg, int n) {
  const int len = kv().len(seg);
  if (start_[seg] + len + n <= region_) return;
  float* K = k_.data() + int64_t(seg) * region_ * hd_;
  float* V = v_.data() + int64_t(seg) * region_ * hd_;
  std::memmove(K, K + int64_t(start_[seg]) * hd_, sizeof(float) * size_t(len) * hd_);
  std::memmove(V, V + int64_t(start_[seg]) * hd_, sizeof(float) * size_t(len) * hd_);
  release_rows(seg, std::max(len, start_[seg]), int64_t(start_[seg]) + len, VacantSide::Above);
  start_[seg] = 0;
}

// Readies this backend's own part of a call of n tokens around the base's
// begin_forward(): the rows the new slots go to, the statistic's
// contributions. Returns the first new position.
int CpuBackend::prepare_forward(int n, const ForwardOptions& opt, ForwardOutput& out) {
  const int S = layout_.n_segments();
  for (int s = 0; s < S; ++s) make_room(s, n);  // before the book counts the new slots
  const int first_pos = begin_forward(n, opt, out);
  if (opt.stats.active() && !opt.stats.from_cache()) {
    // One row a segment: a mean over readers adds straight into it, a max
    // once a block of rows has every reader's maximum (attention_task).
    for (int s = 0; s < S; ++s) contrib_[s].assign(kv().len(s), 0.0f);
  }
  return first_pos;
}

// What a call of several query rows sized by their number: each thread's
// block of scores and of maxima (block rows x slots), the statistic's
// contributions (a row of slots) and MLKV's shared rows of maxima.
void CpuBackend::release_prompt_scratch() {
  head_scratch_.clear();
  head_scratch_.shrink_to_fit();
  for (auto& c : contrib_) std::vector<float>().swap(c);
  for (auto& m : shared_maxima_) std::vector<float>().swap(m);
}

std::size_t CpuBackend::contribution_bytes() const {
  std::size_t floats = 0;
  for (const auto& c : contrib_) floats += c.capacity();
  for (const auto& m : shared_maxima_) floats += m.capacity();
  return floats * sizeof(float);
}

std::size_t CpuBackend::scratch_bytes() const {
  std::size_t floats = contribution_bytes() / sizeof(float);
  for (const auto* v : {&x_, &h_, &q_, &kn_, &vn_, &att_, &o_, &up_, &gate_, &mlp_, &emb_}) floats += v->capacity();
  for (const HeadScratch& s : head_scratch_) {
    const auto& k = s.keyformer;  // 4-byte elements, like the floats
    floats += s.scores.capacity() + s.maxima.capacity() + k.block.capacity() + k.draws.capacity() +
              k.word_at.capacity() + k.z.capacity();
  }
  return floats * sizeof(float);
}

// ExpectedAttention's moments of this call's n queries of `layer`, before
// RoPE rotates them (their heads in parallel: hd^2 / 2 products a row).
void CpuBackend::add_query_moments(int layer, int n, const float* q, int first_pos, int sinks) {
  const int H = model_->cfg.n_heads;
  query_moments_.ensure(model_->cfg.n_layers, H, hd_);
  parallel_for(H, [&](int h) { query_moments_.add(layer, h, q, n, H * hd_, first_pos, sinks); });
}

// This call's K/V rows [row0, row0 + n) of kn / vn into the cache, keys
// rotated; then the queries' rotation.
void CpuBackend::append_kv_and_rotate(int layer, int n, const float* kn, const float* vn, float* q) {
  const auto& cfg = model_->cfg;
  const int H = cfg.n_heads;
  const auto& inv_freq = model_->inv_freq_of(layer);
  if (!model_->layers[layer].k.empty()) {
    const int kvl = layout_.source_of_layer[layer];
    for (int i = 0; i < n; ++i) {
      for (int g = 0; g < layout_.n_kv_heads; ++g) {
        const int seg = layout_.segment(kvl, g);
        const int slot = kv().len(seg) - n + i;
        float* kd = key_mut(seg, slot);
        std::memcpy(kd, &kn[(size_t(i) * layout_.n_kv_heads + g) * hd_], sizeof(float) * hd_);
        std::memcpy(value_mut(seg, slot), &vn[(size_t(i) * layout_.n_kv_heads + g) * hd_], sizeof(float) * hd_);
        if (!inv_freq.empty()) rope_rotate(kd, inv_freq, static_cast<float>(new_rope_pos(i, seg)));
      }
    }
  }
  if (!inv_freq.empty()) {
    for (int i = 0; i < n; ++i)
      for (int h = 0; h < H; ++h)
        rope_rotate(&q[(size_t(i) * H + h) * hd_], inv_freq,
                    static_cast<float>(new_rope_pos(i, layout_.segment_of(layer, h))));
  }
}

void CpuBackend::do_forward(std::span<const int> tokens, const ForwardOptions& opt, ForwardOutput& out) {
  Lane lane{this, tokens, &opt, &out};
  forward_lanes(std::span<Lane>(&lane, 1));
}

void CpuBackend::do_forward_pair(std::span<const int> tokens, const ForwardOptions& opt, ForwardOutput& out,
                                 Backend& other, const ForwardOptions& other_opt, ForwardOutput& other_out) {
  auto* o = dynamic_cast<CpuBackend*>(&other);
  // Paired only where it gives each run the bits it would get alone: one
  // token each (the matrix-vector path, cpu/matvec.h), the same weights.
  if (!o || o == this || o->model_ != model_ || tokens.size() != 1)
    return Backend::do_forward_pair(tokens, opt, out, other, other_opt, other_out);
  Lane lanes[2] = {{this, tokens, &opt, &out}, {o, tokens, &other_opt, &other_out}};
  forward_lanes(lanes);
}

// One forward call for one or more sequences of the same model: their rows
// are stacked through every matrix product (the weights read once for all)
// and kept apart in the caches, the attention and the outputs. The
// scratch is this backend's. Every lane's call was checked by the base.
void CpuBackend::forward_lanes(std::span<Lane> lanes) {
  const auto& cfg = model_->cfg;
  const int d = cfg.hidden;
  int N = 0;
  for (Lane& ln : lanes) {
    ln.row0 = N;
    ln.n = static_cast<int>(ln.tokens.size());
    ln.first_pos = ln.be->prepare_forward(ln.n, *ln.opt, *ln.out);
    N += ln.n;
  }

  x_.resize(size_t(N) * d);
  h_.resize(size_t(N) * d);
  // OPT's narrower embedding: the rows are gathered, then projected in.
  const int e = cfg.embed_width();
  if (!model_->project_in.empty()) {
    emb_.resize(size_t(N) * e);
    for (const Lane& ln : lanes)
      for (int i = 0; i < ln.n; ++i)
        model_->tok_emb.rows_to_f32(ln.tokens[i], ln.tokens[i] + 1, &emb_[size_t(ln.row0 + i) * e]);
    cpu::linear(emb_.data(), N, model_->project_in, x_.data());
  }
  for (const Lane& ln : lanes)
    for (int i = 0; i < ln.n; ++i) {
      float* xr = &x_[size_t(ln.row0 + i) * d];
      if (model_->project_in.empty()) model_->tok_emb.rows_to_f32(ln.tokens[i], ln.tokens[i] + 1, xr);
      if (cfg.learned_positions) {
        const float* p = &model_->pos_emb[size_t(ln.first_pos + i + cfg.position_offset) * d];
        for (int j = 0; j < d; ++j) xr[j] += p[j];
      }
      if (cfg.embed_scale != 1.0) {
        // Gemma: embedding * the scale as an fp32 tensor (sqrt(hidden) rounded once).
        const float scale = static_cast<float>(cfg.embed_scale);
        for (int j = 0; j < d; ++j) xr[j] *= scale;
      }
    }
  q_.resize(size_t(N) * cfg.q_dim());
  kn_.resize(size_t(N) * cfg.kv_dim());
  vn_.resize(size_t(N) * cfg.kv_dim());
  att_.resize(size_t(N) * cfg.q_dim());
  o_.resize(size_t(N) * d);
  // A gated MLP's up product is held a slice at a time (gated_linear), and
  // a block's MLP output goes to o_ once the attention's has been added,
  // so only a parallel residual keeps a row of its own for it.
  if (cfg.gated_mlp) gate_.resize(size_t(N) * cfg.intermediate);
  else up_.resize(size_t(N) * cfg.intermediate);
  if (cfg.parallel_residual) mlp_.resize(size_t(N) * d);

  auto norm = [&](const std::vector<float>& w, const std::vector<float>& b, const float* in, float* o, int rows) {
    if (cfg.norm == NormKind::LayerNorm) cpu::layer_norm(in, rows, d, w.data(), b.empty() ? nullptr : b.data(), cfg.norm_eps, o);
    else cpu::rms_norm(in, rows, d, w.data(), cfg.norm_eps, o);
  };
  auto mlp = [&](const CpuModel::Layer& L, const float* in, float* o) {
    if (cfg.gated_mlp) {
      cpu::gated_linear(in, N, L.gate, L.up, cfg.act, gate_.data());
      cpu::linear(gate_.data(), N, L.down, o);
    } else {
      cpu::linear(in, N, L.up, up_.data());
      const int64_t m = int64_t(N) * cfg.intermediate;
      if (cfg.act == Activation::GeluTanh) cpu::gelu_tanh(up_.data(), m);
      else if (cfg.act == Activation::GeluErf) cpu::gelu_erf(up_.data(), m);
      else if (cfg.act == Activation::Relu) cpu::relu(up_.data(), m);
      else cpu::silu(up_.data(), m);
      cpu::linear(up_.data(), N, L.down, o);
    }
  };

  const int qd = cfg.q_dim(), kvd = cfg.kv_dim();
  for (int l = 0; l < cfg.n_layers; ++l) {
    const auto& L = model_->layers[l];
    // A post-norm block (OPT-350m) reads x itself; the others its norm.
    const float* ain = x_.data();
    if (!cfg.post_norm) {
      norm(L.attn_norm_w, L.attn_norm_b, x_.data(), h_.data(), N);
      ain = h_.data();
    }
    cpu::linear(ain, N, L.q, q_.data());
    if (!L.k.empty()) {
      cpu::linear(ain, N, L.k, kn_.data());
      cpu::linear(ain, N, L.v, vn_.data());
    }
    if (cfg.clip_qkv > 0) {  // MPT: q, k and v clamped after the fused projection
      const float c = cfg.clip_qkv;
      auto clip = [c](std::vector<float>& v, size_t count) {
        for (size_t j = 0; j < count; ++j) v[j] = std::clamp(v[j], -c, c);
      };
      clip(q_, size_t(N) * qd);
      if (!L.k.empty()) {
        clip(kn_, size_t(N) * kvd);
        clip(vn_, size_t(N) * kvd);
      }
    }
    if (cfg.qk_norm) {  // Gemma 3: each head of q and k normalised over head_dim, before RoPE
      cpu::rms_norm(q_.data(), N * cfg.n_heads, hd_, L.q_norm_w.data(), cfg.norm_eps, q_.data());
      if (!L.k.empty()) cpu::rms_norm(kn_.data(), N * cfg.n_kv_heads, hd_, L.k_norm_w.data(), cfg.norm_eps, kn_.data());
    }
    // Every lane's attention tasks in one parallel_for, so two runs' heads
    // share the threads (3 KV heads each: 6 tasks on 2 threads, not 2 x 3).
    int tasks = 0;
    for (Lane& ln : lanes) {
      CpuBackend& be = *ln.be;
      if (ln.opt->stats.source == StatSource::Expected)
        be.add_query_moments(l, ln.n, q_.data() + size_t(ln.row0) * qd, ln.first_pos, ln.opt->stats.sinks);
      be.append_kv_and_rotate(l, ln.n, kn_.data() + size_t(ln.row0) * kvd, vn_.data() + size_t(ln.row0) * kvd,
                              q_.data() + size_t(ln.row0) * qd);
      ln.capture = be.capture_place(l) >= 0 ? &ln.out->attention[be.capture_place(l)] : nullptr;
      ln.task0 = tasks;
      tasks += be.attention_tasks(ln.n, ln.opt->stats);
    }
    parallel_for(tasks, [&](int t) {
      std::size_t i = lanes.size() - 1;
      while (lanes[i].task0 > t) --i;
      const Lane& ln = lanes[i];
      ln.be->attention_task(t - ln.task0, l, ln.n, q_.data() + size_t(ln.row0) * qd, att_.data() + size_t(ln.row0) * qd,
                            ln.capture, ln.opt->stats, ln.opt->capture_last_query_only, ln.opt->capture_logits);
    });
    cpu::linear(att_.data(), N, L.o, o_.data());
    if (cfg.parallel_residual) {
      // NeoX: x + attn(ln1(x)) + mlp(ln2(x)), both branches from the same x
      // (GPT-J: ln2 is ln1).
      norm(L.mlp_norm_w, L.mlp_norm_b, x_.data(), h_.data(), N);
      mlp(L, h_.data(), mlp_.data());
      for (size_t j = 0; j < size_t(N) * d; ++j) x_[j] = x_[j] + o_[j] + mlp_[j];
    } else if (cfg.post_norm) {
      // OPT-350m: x = ln1(x + attn(x)); x = ln2(x + mlp(x)).
      for (size_t j = 0; j < size_t(N) * d; ++j) x_[j] += o_[j];
      norm(L.attn_norm_w, L.attn_norm_b, x_.data(), x_.data(), N);
      mlp(L, x_.data(), o_.data());
      for (size_t j = 0; j < size_t(N) * d; ++j) x_[j] += o_[j];
      norm(L.mlp_norm_w, L.mlp_norm_b, x_.data(), x_.data(), N);
    } else {
      // Gemma 3 normalises each branch's output before adding it.
      if (cfg.sandwich_norm) cpu::rms_norm(o_.data(), N, d, L.post_attn_norm_w.data(), cfg.norm_eps, o_.data());
      for (size_t j = 0; j < size_t(N) * d; ++j) x_[j] += o_[j];
      norm(L.mlp_norm_w, L.mlp_norm_b, x_.data(), h_.data(), N);
      mlp(L, h_.data(), o_.data());
      if (cfg.sandwich_norm) cpu::rms_norm(o_.data(), N, d, L.post_mlp_norm_w.data(), cfg.norm_eps, o_.data());
      for (size_t j = 0; j < size_t(N) * d; ++j) x_[j] += o_[j];
    }
    for (const Lane& ln : lanes)
      if (ln.opt->between_layers) ln.opt->between_layers(l);
  }
  for (const Lane& ln : lanes) {
    if (ln.opt->stats.active()) ln.be->finish_stats(ln.n, ln.opt->stats);
    if (ln.opt->value_weights) ln.be->update_value_weights();
  }
  // The head over the rows whose logits are wanted. One lane writes
  // straight into its output; paired lanes (one row each, consecutive)
  // share one product and are copied out.
  const int V = cfg.vocab_size;
  const bool single = lanes.size() == 1;
  const Lane& first = lanes.front();
  const int head_row0 = single ? (first.opt->all_logits ? 0 : N - 1) : 0;
  const int rows = N - head_row0;
  if (model_->final_norm_w.empty())  // OPT-350m has none
    std::memcpy(h_.data(), x_.data() + size_t(head_row0) * d, sizeof(float) * size_t(rows) * d);
  else norm(model_->final_norm_w, model_->final_norm_b, x_.data() + size_t(head_row0) * d, h_.data(), rows);
  const float* head_in = h_.data();
  if (!model_->project_out.empty()) {  // OPT: back to the embedding's width
    emb_.resize(size_t(rows) * e);
    cpu::linear(h_.data(), rows, model_->project_out, emb_.data());
    head_in = emb_.data();
  }
  // A prompt's rows are returned before the head is read: the head is the
  // largest matrix (Gemma 3's 262,144 rows) and its pages would otherwise
  // come in while the prompt's activations (~36 KB a token) and each
  // thread's attention scratch (a block of rows over the prompt) are still
  // held. What is left is the head's input rows (one, unless every row's
  // logits are asked for). Decode steps (one row a lane) keep theirs, so
  // they allocate nothing.
  bool any_prompt = false;
  for (const Lane& ln : lanes)
    if (ln.n > 1) {
      ln.be->release_prompt_scratch();
      any_prompt = true;
    }
  if (any_prompt) {
    for (std::vector<float>* rows_of : {&x_, &q_, &kn_, &vn_, &att_, &o_, &up_, &gate_, &mlp_})
      std::vector<float>().swap(*rows_of);
    // The head reads its rows from h_, or from emb_ after OPT's projection.
    std::vector<float>& kept = model_->project_out.empty() ? h_ : emb_;
    std::vector<float>& gone = model_->project_out.empty() ? emb_ : h_;
    std::vector<float>().swap(gone);
    kept.resize(size_t(rows) * (model_->project_out.empty() ? d : e));
    kept.shrink_to_fit();
    head_in = kept.data();
    return_freed_heap();
  }
  float* logits;
  // One row the caller does not take (a generator's step): computed where
  // sample() reads it, not into the output and then copied (Gemma 3's
  // 262,144 logits were 1 MB held twice).
  const bool only_for_sampling = single && rows == 1 && !first.opt->logits_to_host;
  if (only_for_sampling) {
    first.out->n_logits = 0;
    first.out->logits.clear();
    first.be->last_logits_.resize(V);
    logits = first.be->last_logits_.data();
  } else if (single) {
    first.out->n_logits = rows;
    first.out->logits.resize(size_t(rows) * V);
    logits = first.out->logits.data();
  } else {
    pair_logits_.resize(size_t(rows) * V);
    logits = pair_logits_.data();
  }
  bool any_alongside = false;
  for (const Lane& ln : lanes) any_alongside = any_alongside || bool(ln.opt->alongside_head);
  if (!any_alongside) {
    cpu::linear(head_in, rows, model_->lm_head, logits);
  } else {
    // The callers' work is task 0, the head's bands the rest: whichever
    // thread finishes first takes the remaining bands, so the two overlap
    // however long each is.
    // The head's bands are linear()'s, so its logits are the same bits.
    const cpu::LinearBands bands = cpu::linear_bands(model_->lm_head, rows);
    parallel_for(1 + bands.count, [&](int t) {
      if (t == 0) {
        for (const Lane& ln : lanes)
          if (ln.opt->alongside_head) ln.opt->alongside_head();
        return;
      }
      cpu::linear_band(head_in, rows, model_->lm_head, logits, bands, t - 1);
    });
  }
  for (const Lane& ln : lanes) {
    if (only_for_sampling) break;  // nothing to hand out or copy
    ForwardOutput& out = *ln.out;
    if (!single) {  // one row each, in lane order
      out.n_logits = 1;
      out.logits.assign(logits + size_t(ln.row0) * V, logits + size_t(ln.row0 + 1) * V);
    }
    ln.be->last_logits_.assign(out.logits.end() - V, out.logits.end());
    if (!ln.opt->logits_to_host) {
      out.logits.clear();
      out.n_logits = 0;
    }
  }
}

int CpuBackend::do_sample(const SamplingParams& p, uint64_t step) { return sample_token(last_logits_, p, step); }

// Whether this call's attention tasks are KV heads (their query heads
// together) rather than query heads: always when the query heads add to
// the same statistic (in head order, so they stay together); for a decode
// step also when there are at least as many KV heads as threads, since one
// pass over a KV head's keys serves all its query heads (SmolLM2 at 2048
// tokens on 2 threads: 15.8 -> 12.6 ms a step, bench/NOTES.md) but fewer
// tasks than threads would leave threads idle (one KV head under MQA).
// The kernels give a head the same bits alone or grouped, so the choice
// only changes speed.
bool CpuBackend::tasks_by_kv_head(int n, const SlotStatRule& rule) const {
  return rule.active() || (n == 1 && layout_.n_kv_heads >= pool_threads());
}

// The number of attention tasks of a layer in this call (tasks_by_kv_head
// says which); the capture rows were shaped by begin_forward().
// Scratch is per thread, not per task: a prompt's scores are a row over
// the prompt per row of a block of kQueryBlock rows (0.5 MB for SmolLM2 at
// 966 tokens), and only pool_threads() of a layer's tasks (9 query heads)
// run at once.
int CpuBackend::attention_tasks(int n, const SlotStatRule& rule) {
  if (head_scratch_.size() < size_t(pool_threads())) head_scratch_.resize(pool_threads());
  return tasks_by_kv_head(n, rule) ? layout_.n_kv_heads : model_->cfg.n_heads;
}

void CpuBackend::attention_task(int t, int layer, int n, const float* q, float* out, AttentionRows* capture,
                                const SlotStatRule& rule, bool last_only, bool capture_logits) {
  const int G = layout_.group_size();
  const bool by_group = tasks_by_kv_head(n, rule);
  const int h0 = by_group ? t * G : t, h1 = by_group ? h0 + G : t + 1;
  HeadScratch& scratch = head_scratch_[pool_thread_index()];
  const int first_captured = last_only ? n - 1 : 0;
  // Query rows [i0, i1) through the task's heads.
  const auto attend = [&](int i0, int i1) {
    if (n == 1) {
      attend_group(layer, h0, h1 - h0, q, out, capture, rule, capture_logits, scratch);
      return;
    }
    for (int h = h0; h < h1; ++h)
      attend_rows(layer, h, n, i0, i1, q, out, capture, rule, first_captured, capture_logits, scratch);
  };
  if (!takes_row_maxima(rule)) {
    if (n == 1) attend(0, 1);
    else  // head by head: a mean adds each head's rows in this order
      for (int h = h0; h < h1; ++h)
        for (int i0 = 0; i0 < n; i0 += kQueryBlock)
          attend_rows(layer, h, n, i0, std::min(n, i0 + kQueryBlock), q, out, capture, rule, first_captured,
                      capture_logits, scratch);
    return;
  }
  // A max over readers (by_group: the task's heads are the segment's in
  // this layer): a block of rows takes its maxima over the heads, then
  // joins the segment's sum in row order (the weighted sum of every row's
  // maximum), so only a block's maxima are held. Where several layers read
  // the segment (MLKV), the rows' maxima wait in shared_maxima_ from its
  // first reading layer to its last, which sums them.
  const int seg = layout_.segment_of(layer, h0);
  const int len = kv().len(seg);
  const int kv_layer = layout_.source_of_layer[layer];
  const int first = layout_.first_reader(kv_layer), last = layout_.last_reader(kv_layer);
  const bool shared = first != last;
  if (shared && layer == first) shared_maxima_[seg].assign(size_t(n) * len, 0.0f);
  for (int i0 = 0; i0 < n; i0 += kQueryBlock) {
    const int i1 = std::min(n, i0 + kQueryBlock);
    if (shared) {
      scratch.maxima_rows = shared_maxima_[seg].data() + size_t(i0) * len;
    } else {
      scratch.maxima.assign(size_t(i1 - i0) * len, 0.0f);
      scratch.maxima_rows = scratch.maxima.data();
    }
    scratch.maxima_row0 = i0;
    attend(i0, i1);
    if (layer == last) sum_row_maxima(seg, i0, i1, scratch.maxima_rows);
  }
  if (shared && layer == last) std::vector<float>().swap(shared_maxima_[seg]);
}

// Query rows [i0, i1) of head h of a prompt (n > 1 query rows): scores,
// mask, the statistic's row, softmax, capture and P V. A block's scores
// and P V stop at the last key its last row may see, so the causal half of
// the n x n square is mostly never computed (about half the work of a long
// prefill). Blocks are cut by the shape alone, so the bits do not depend
// on the thread count; only a block's scores are held (a row over the
// prompt per row: 128 x 966 floats for SmolLM2 at 966 tokens, not 966 x 966).
void CpuBackend::attend_rows(int layer, int h, int n, int i0, int i1, const float* q, float* out,
                             AttentionRows* capture, const SlotStatRule& rule, int first_captured, bool capture_logits,
                             HeadScratch& scratch) {
  const auto& cfg = model_->cfg;
  const int qstride = cfg.q_dim();
  const float scale = cfg.attention_scale();
  const int seg = layout_.segment_of(layer, h);
  const int len = kv().len(seg);
  const int base = len - n;       // slots before this call's tokens
  const int visible = base + i1;  // keys the block's rows may attend to
  scratch.scores.resize(size_t(i1 - i0) * len);
  float* S = scratch.scores.data();
  // S = scale * Q_h K^T. (A decode step's one query takes attend_group's
  // pass instead: sgemm would pack the whole K, and below V, into its
  // buffers first, a copy of the cache per head and step.)
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, i1 - i0, visible, hd_, scale,
              q + size_t(i0) * qstride + size_t(h) * hd_, qstride, key(seg, 0), hd_, 0.0f, S, len);
  for (int i = i0; i < i1; ++i)
    finish_row(layer, h, i, n, S + size_t(i - i0) * len, capture, rule, first_captured, capture_logits, scratch);
  // O_h = P V.
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, i1 - i0, hd_, visible, 1.0f, S, len, value(seg, 0), hd_, 0.0f,
              out + size_t(i0) * qstride + size_t(h) * hd_, qstride);
}

// A decode step (one query) of query heads [h0, h0 + G), which share one KV
// segment: their scores in one pass over the keys (up to four heads a
// pass), then each head's outputs in a pass over the values
// (cpu/decode_attention.h).
void CpuBackend::attend_group(int layer, int h0, int G, const float* q, float* out, AttentionRows* capture,
                              const SlotStatRule& rule, bool capture_logits, HeadScratch& scratch) {
  const float scale = model_->cfg.attention_scale();
  const int seg = layout_.segment_of(layer, h0);
  const int len = kv().len(seg);
  scratch.scores.resize(size_t(G) * len);
  float* S = scratch.scores.data();
  cpu::decode_scores(key(seg, 0), len, hd_, q + size_t(h0) * hd_, hd_, G, scale, S, len);
  for (int g = 0; g < G; ++g)
    finish_row(layer, h0 + g, 0, 1, S + size_t(g) * len, capture, rule, 0, capture_logits, scratch);
  cpu::decode_values(value(seg, 0), len, hd_, S, len, G, out + size_t(h0) * hd_, hd_);
}

// Query row i (of n in this call) of head h, its scores in `row`: the mask,
// the statistic's row, the softmax (in place) and the capture.
void CpuBackend::finish_row(int layer, int h, int i, int n, float* row, AttentionRows* capture, const SlotStatRule& rule,
                            int first_captured, bool capture_logits, HeadScratch& scratch) {
  const int window = model_->cfg.window_of(layer);
  const float neg_inf = -std::numeric_limits<float>::infinity();
  const int seg = layout_.segment_of(layer, h);
  const int len = kv().len(seg);
  const int base = len - n;
  const auto& pos = kv().positions(seg);
  for (int j = base + i + 1; j < len; ++j) row[j] = neg_inf;  // causal: later new tokens
  if (window > 0) {  // a sliding layer sees the keys at p - window < q <= p
    const int qpos = pos[base + i];
    for (int j = 0; j <= base + i; ++j)
      if (qpos - pos[j] >= window) row[j] = neg_inf;
  }
  const auto& slopes = model_->cfg.alibi_slopes;
  if (!slopes.empty()) {
    // ALiBi: slope * (key position - query position), a distance in the
    // text (original) or in the cache's slots (compacted: the evicted
    // tokens' gaps closed), formed as transformers forms it (an integer
    // distance times the fp32 slope).
    const float slope = slopes[h];
    const int q = base + i;
    if (options().positions == PositionMode::Compacted)
      for (int j = 0; j <= q; ++j) row[j] += static_cast<float>(j - q) * slope;
    else
      for (int j = 0; j <= q; ++j) row[j] += static_cast<float>(pos[j] - pos[q]) * slope;
  }
  const bool cap_row = capture && i >= first_captured;
  if (cap_row && capture_logits)
    std::memcpy(capture->logits.data() + capture->offset[h] + size_t(i - first_captured) * len, row,
                sizeof(float) * len);
  if (rule.source == StatSource::GumbelSoftmax) {
    // Keyformer scores from the pre-softmax logits plus noise, at temperature tau.
    const float inv = cpu::keyformer_exp_row(rule, static_cast<uint32_t>(pos[base + i]), static_cast<uint32_t>(layer),
                                             static_cast<uint32_t>(h), pos.data(), row, len, scratch.keyformer);
    accumulate_stats(seg, i, scratch.keyformer.z.data(), inv, rule, scratch);
  }
  // The row's masked tail is exactly 0 after the softmax: only the
  // visible part runs through it (the same bits as the whole row).
  const int seen = base + i + 1;
  cpu::softmax_row(row, seen);
  std::fill(row + seen, row + len, 0.0f);
  if (cap_row)
    std::memcpy(capture->probs.data() + capture->offset[h] + size_t(i - first_captured) * len, row,
                sizeof(float) * len);
  if (rule.source == StatSource::Attention) accumulate_stats(seg, i, row, 1.0f, rule, scratch);
}

}  // namespace kvscope

namespace kvscope {

// Adds one reader's f row, f_j = e[j] * scale, for query row `row` of this
// call to its segment's contributions. The scale is
// Keyformer's softmax normalisation (1 for attention rows, which come
// normalised): multiplied here, it saves the row a pass of its own, and
// f_j is rounded as a normalised row would be. A max over readers keeps
// the row's maximum where the task points (attention_task), summed later.
void CpuBackend::accumulate_stats(int seg, int row, const float* e, float scale, const SlotStatRule& rule,
                                  HeadScratch& scratch) {
  auto& c = contrib_[seg];
  const int len = kv().len(seg);
  if (rule.reduce == ReaderReduce::Max) {
    float* r = scratch.maxima_rows + size_t(row - scratch.maxima_row0) * len;
    for (int j = 0; j < len; ++j) r[j] = std::max(r[j], e[j] * scale);
  } else {
    // Row weight decay^(rows-1-row) is applied here for the mean, so the
    // contributions need no per-row storage.
    const float w = stat_row_weights()[row] / static_cast<float>(readers(seg));
    for (int j = 0; j < len; ++j) c[j] += w * (e[j] * scale);
  }
}

bool CpuBackend::takes_row_maxima(const SlotStatRule& rule) const {
  return rule.active() && !rule.from_cache() && rule.reduce == ReaderReduce::Max;
}

// Rows [i0, i1)'s maxima (at `rows`), weighted, into the segment's sum, in
// row order: S[j] = sum_i w_i max_r f_{r,i}[j], rows added one by one from
// the first.
void CpuBackend::sum_row_maxima(int seg, int i0, int i1, const float* rows) {
  float* total = contrib_[seg].data();
  const int len = kv().len(seg);
  for (int i = i0; i < i1; ++i) {
    const float w = stat_row_weights()[i];
    const float* r = rows + size_t(i - i0) * len;
    for (int j = 0; j < len; ++j) total[j] += w * r[j];
  }
}

void CpuBackend::finish_stats(int n, const SlotStatRule& rule) {
  if (rule.from_cache()) {
    if (rule.source == StatSource::Expected) {
      parallel_runs(
          layout_.n_segments(), runs_for(layout_.n_segments(), kv().total_slots() * hd_ * hd_), [&](int, int seg) {
            expected_scores(seg, key(seg, 0), value(seg, 0), rule,
                            [&](int layer) -> const std::vector<float>& { return model_->inv_freq_of(layer); });
          });
      return;
    }
    if (rule.source == StatSource::Leverage) {
      // O(len hd^2) a segment: segments in parallel, each with its own copy of its keys.
      parallel_runs(layout_.n_segments(), runs_for(layout_.n_segments(), kv().total_slots() * hd_), [&](int, int seg) {
        const int len = kv().len(seg);
        std::vector<float> keys(key(seg, 0), key(seg, 0) + static_cast<std::size_t>(len) * hd_);
        unrotate_keys(keys.data(), len, hd_, kv().rope_positions(seg).data(),
                      model_->inv_freq_of(layout_.owners[seg / layout_.n_kv_heads]));
        leverage_scores(keys.data(), len, hd_, stats_[seg].data());
      });
      return;
    }
    for (int seg = 0; seg < layout_.n_segments(); ++seg) {
      if (rule.source == StatSource::Cur || rule.source == StatSource::LagKv)
        cpu::cache_scores(key(seg, 0), value(seg, 0), kv().len(seg), hd_, rule, stats_[seg].data());
      else key_scores(seg, rule.source);
    }
    return;
  }
  const float carry = stat_carry();
  for (int seg = 0; seg < layout_.n_segments(); ++seg) {
    const int len = kv().len(seg);
    const float* total = contrib_[seg].data();  // this call's rows, weighted and summed
    float* st = stats_[seg].data();
    const int carried = len - n;  // slots from before this call; the call's own tokens start at 0
    for (int j = 0; j < carried; ++j) st[j] = carry * st[j] + total[j];
    for (int j = std::max(carried, 0); j < len; ++j) st[j] = 0.0f + total[j];
  }
}

// CriticalKV's value weights (Backend::value_weights): for each slot, the
// mean over the query heads q of its KV head of sum_o |sum_d v_d W_o[o][q hd + d]|,
// with the owning layer's output projection, summed in that order. Jobs
// (segments) in parallel.
void CpuBackend::compute_value_weights(const std::vector<ValueWeightJob>& jobs) {
  const int G = layout_.group_size();
  int64_t work = 0;
  for (const auto& j : jobs) work += int64_t(j.count) * G * hd_;
  parallel_runs(static_cast<int>(jobs.size()), runs_for(static_cast<int>(jobs.size()), work * 64), [&](int, int i) {
    const ValueWeightJob& job = jobs[i];
    const int layer = layout_.owners[job.seg / layout_.n_kv_heads];
    const int h = job.seg % layout_.n_kv_heads;
    const cpu::Linear& W = model_->layers[layer].o;
    // The columns of this KV head's query heads, W_o[o][hG hd, (h+1)G hd),
    // in fp32: read in place from an fp32 matrix, else widened once per job.
    const int width = G * hd_;
    const float* cols = nullptr;
    std::size_t stride = 0;
    std::vector<float> widened;
    if (const float* f = W.fp32()) {
      cols = f + std::size_t(h) * width;
      stride = std::size_t(W.in);
    } else {
      widened.resize(std::size_t(W.out) * width);
      W.columns_to_f32(h * width, (h + 1) * width, widened.data());
      cols = widened.data();
      stride = std::size_t(width);
    }
    for (int j = job.first; j < job.first + job.count; ++j) {
      const float* v = value(job.seg, j);
      float total = 0.0f;
      for (int q = 0; q < G; ++q)
        for (int o = 0; o < W.out; ++o) {
          const float* w = cols + std::size_t(o) * stride + std::size_t(q) * hd_;
          float acc = 0.0f;
          for (int d = 0; d < hd_; ++d) acc += v[d] * w[d];
          total += std::fabs(acc);
        }
      value_weights_[job.seg][j] = total / static_cast<float>(G);
    }
  });
}

// slot_stats.h's key scores of one segment, in the loop order the CUDA
// kernel uses (slots, then dimensions, each summed in ascending order).
void CpuBackend::key_scores(int seg, StatSource source) {
  const int len = kv().len(seg);
  float* st = stats_[seg].data();
  key_norm_.resize(len);
  for (int j = 0; j < len; ++j) {
    const float* k = key(seg, j);
    float sq = 0.0f;
    for (int d = 0; d < hd_; ++d) sq += k[d] * k[d];
    key_norm_[j] = std::sqrt(sq);
  }
  if (source == StatSource::KeyNorm) {
    for (int j = 0; j < len; ++j) st[j] = -key_norm_[j];
    return;
  }
  key_anchor_.assign(hd_, 0.0f);
  for (int d = 0; d < hd_; ++d) {
    float sum = 0.0f;
    for (int j = 0; j < len; ++j) sum += key(seg, j)[d] / std::max(key_norm_[j], kKeyNormEps);
    key_anchor_[d] = sum / static_cast<float>(len);
  }
  float an = 0.0f;
  for (int d = 0; d < hd_; ++d) an += key_anchor_[d] * key_anchor_[d];
  an = std::sqrt(an);
  for (int j = 0; j < len; ++j) {
    const float* k = key(seg, j);
    float dot = 0.0f;
    for (int d = 0; d < hd_; ++d) dot += k[d] * key_anchor_[d];
    st[j] = -dot / std::max(key_norm_[j] * an, kKeyCosEps);
  }
}

}  // namespace kvscope
