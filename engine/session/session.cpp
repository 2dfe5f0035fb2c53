#include "session/session.h"

#include "io/interrupt.h"

#include <algorithm>
#include <cmath>

#include "backend/parallel.h"
#include "common/error.h"
#include "io/figure_settings.h"
#include "io/interrupt.h"
#include "policy/selection.h"
#include "session/generator.h"
#include "session/session_config.h"
#include "session/session_file.h"

namespace kvscope {
namespace {

// Scatters one captured row (slot order) to absolute positions.
std::vector<float> by_position(const AttentionRows& a, int head, const std::vector<int>& pos, int positions) {
  std::vector<float> out(positions, 0.0f);
  const float* r = a.prob_row(head, a.n_queries - 1);
  for (int j = 0; j < a.row_len[head]; ++j)
    if (pos[j] < positions) out[pos[j]] = r[j];
  return out;
}

// Between the layers of the prompt's pass: a front end's Ctrl-C
// (io/interrupt.h) stops a long prompt within a layer. The test pause
// point lets the tests send the signal at a known moment inside the pass.
void prompt_pass_check(int layer) {
  if (layer == 0) test_pause_point("prompt", "");
  check_interrupt();
}

}  // namespace

RunTokens plan_run_tokens(const ModelBundle& bundle, const SessionConfig& cfg) {
  const int vocab = bundle.config().vocab_size;
  RunTokens run;
  run.prompt = cfg.prompt_ids.empty() ? bundle.tokenizer->encode(cfg.prompt, true) : cfg.prompt_ids;
  if (run.prompt.empty()) throw Error::setting("prompt", "the prompt has no tokens");
  for (int t : run.prompt)
    if (t < 0 || t >= vocab)
      throw Error::setting("prompt_ids", "token id " + std::to_string(t) + " outside the vocabulary");
  if (!cfg.continuation_ids.empty()) {
    run.continuation = cfg.continuation_ids;
    for (int t : run.continuation)
      if (t < 0 || t >= vocab)
        throw Error::setting("continuation_ids", "token id " + std::to_string(t) + " outside the vocabulary");
    run.planned_new = static_cast<int>(run.continuation.size());
    run.steps_field = "continuation_ids";
  } else if (cfg.continuation) {
    run.continuation = bundle.tokenizer->encode(*cfg.continuation, false);
    run.planned_new = static_cast<int>(run.continuation.size());
    run.steps_field = "continuation";
  } else {
    run.planned_new = cfg.max_new_tokens;
  }
  const int positions = bundle.config().max_positions;
  if (int64_t(run.prompt.size()) + run.planned_new > positions)
    throw Error::setting("prompt", std::to_string(run.prompt.size()) + " tokens + " + std::to_string(run.planned_new) +
                                       " new tokens exceed the model's maximum positions (" +
                                       std::to_string(positions) + ")");
  return run;
}

Session::Session(std::shared_ptr<const ModelBundle> bundle, SessionConfig cfg)
    : bundle_(std::move(bundle)), cfg_(std::move(cfg)) {
  try {
    build();
  } catch (const Error& e) {
    // Settings read from a session file are named by that file and field.
    if (cfg_.source.empty()) throw;
    throw e.in_file(cfg_.source);
  }
}

void Session::build() {
  // One seed keys every draw (sampling, Keyformer's noise, the random
  // policy), as in a session file, whatever a caller left in the copies.
  cfg_.policy.seed = cfg_.seed;
  for (auto& ch : cfg_.policy_changes) ch.policy.seed = cfg_.seed;
  model_cfg_ = bundle_->config();
  weights_ = bundle_->files.weights;
  convert_sharing(model_cfg_, weights_, cfg_.sharing);
  const int L = model_cfg_.n_layers, H = model_cfg_.n_heads;

  RunTokens run = plan_run_tokens(*bundle_, cfg_);
  const std::string steps_field = run.steps_field;
  tokens_ = std::move(run.prompt);
  continuation_ = std::move(run.continuation);
  prompt_len_ = static_cast<int>(tokens_.size());
  planned_new_ = run.planned_new;
  // Mistral's sliding window: attention beyond it is a mask in transformers
  // that kvscope does not reproduce yet, so a run that would reach it is
  // refused here, before anything is computed or written.
  if (model_cfg_.sliding_window > 0 && model_cfg_.sliding_layers.empty() &&
      prompt_len_ + planned_new_ > model_cfg_.sliding_window)
    throw Error::setting("prompt", std::to_string(prompt_len_) + " tokens + " + std::to_string(planned_new_) +
                                       " new tokens exceed the model's sliding window (sliding_window = " +
                                       std::to_string(model_cfg_.sliding_window) +
                                       "), which kvscope does not support; shorten the prompt or the generation");
  // Heatmaps cropped past the last position the run can reach: known now,
  // not after the run (a run that stops early at EOS is checked again when
  // its figures are drawn).
  if (const PositionRange crop = PositionRange::parse(cfg_.export_opts.positions, "export.positions");
      !crop.all() && crop.last >= prompt_len_ + planned_new_)
    throw Error::setting("export.positions", crop.str() + " reaches past the run's last position (" +
                                                 std::to_string(prompt_len_ + planned_new_ - 1) + ": " +
                                                 std::to_string(prompt_len_) + " prompt + " +
                                                 std::to_string(planned_new_) + " new tokens, from 0)");
  policy_ = make_policy(resolve_policy(cfg_.policy, prompt_len_, model_cfg_.max_positions));
  for (std::size_t i = 0; i < cfg_.policy_changes.size(); ++i) {
    // Validated now, not mid-run.
    const auto& ch = cfg_.policy_changes[i];
    const std::string field = "policy_changes[" + std::to_string(i) + "]";
    if (ch.from_step > planned_new_)
      throw Error::setting(field + ".from_step", "step " + std::to_string(ch.from_step) + " comes after the run's last (" +
                                                std::to_string(planned_new_) + " new tokens)");
    try {
      resolve_policy(ch.policy, prompt_len_, model_cfg_.max_positions);
    } catch (const Error& e) {
      // "policy.budget: ..." -> "policy_changes[i].policy.budget: ..."
      throw e.under(field);
    }
    if (ch.policy.positions != cfg_.policy.positions)
      throw Error::setting(field + ".policy.positions", "the position mode cannot change during a run");
  }

  auto check_layer = [&](int l, const std::string& field) {
    if (l < 0 || l >= L)
      throw Error::setting(field, "unknown layer " + std::to_string(l) + " (the model has layers 0.." + std::to_string(L - 1) + ")");
  };
  auto check_head = [&](int h, const std::string& field) {
    if (h < 0 || h >= H)
      throw Error::setting(field, "unknown head " + std::to_string(h) + " (the model has heads 0.." + std::to_string(H - 1) + ")");
  };
  check_layer(cfg_.export_opts.csv_layer(), "export.layer");
  check_head(cfg_.export_opts.csv_head(), "export.head");
  for (const auto& [l, h] : cfg_.export_opts.heatmaps) {
    check_layer(l, "export.heatmaps");
    check_head(h, "export.heatmaps");
  }

  const Device device = resolve_device(cfg_.device, model_cfg_);
  forecast_ = plan_recording(
      model_cfg_, prompt_len_, planned_new_, cfg_.recording,
      host_kv_configs(device == Device::Cpu, model_cfg_, bundle_->config(), cfg_.recording.metrics), steps_field);
  metrics_ = cfg_.recording.metrics;

  BackendOptions bo;
  bo.max_tokens = forecast_.positions + 1;
  bo.positions = cfg_.policy.positions;
  bo.weights = parse_weight_format(cfg_.weights);
  backend_ = make_backend(device, model_cfg_, weights_, bo, prepared_weights(device, bo.weights));
  if (metrics_) {
    BackendOptions so = bo;
    so.positions = PositionMode::Original;
    shadow_ = backend_->spawn(so);
    const ModelConfig& native = bundle_->config();
    if (native.n_kv_heads != model_cfg_.n_kv_heads || native.n_kv_layers != model_cfg_.n_kv_layers)
      native_ = make_backend(resolve_device(cfg_.device, native), native, bundle_->files.weights, so);
  }
  recorder_ = Recorder(KvLayout::from_config(model_cfg_), forecast_.rows, forecast_.positions, forecast_.layers,
                       forecast_.heads);
}

// The bundle's prepared weights when they were made for this device,
// sharing layout and format; else made now and kept there for the next
// session.
std::shared_ptr<const PreparedWeights> Session::prepared_weights(Device device, WeightFormat format) const {
  ModelBundle::PreparedSlot& slot = *bundle_->prepared;
  const std::string key =
      std::to_string(static_cast<int>(device)) + "|" + cfg_.sharing.str() + "|" + weight_format_name(format);
  {
    std::lock_guard lock(slot.mutex);
    if (slot.key == key) return std::static_pointer_cast<const PreparedWeights>(slot.value);
  }
  auto made = prepare_weights(device, model_cfg_, weights_, format);
  if (made) {
    std::lock_guard lock(slot.mutex);
    slot.key = key;
    slot.value = made;
  }
  return made;
}

std::vector<int> Session::capture_layers() const {
  if (metrics_) {
    std::vector<int> all(model_cfg_.n_layers);
    for (int l = 0; l < model_cfg_.n_layers; ++l) all[l] = l;
    return all;
  }
  return recorder_.attention_layers();
}

ForwardOptions Session::forward_options(bool capture, std::function<void()> alongside_head) const {
  ForwardOptions fo;
  fo.alongside_head = std::move(alongside_head);
  if (capture) fo.capture_layers = capture_layers();
  fo.capture_last_query_only = true;
  fo.capture_logits = false;
  fo.logits_to_host = metrics_ || !continuation_.empty();
  StepContext ctx{std::max(row_, 0), planned_new_};
  fo.stats = policy_->stat_rule(ctx);
  fo.value_weights = policy_->resolved().critical;
  if (row_ <= 0) fo.between_layers = prompt_pass_check;
  return fo;
}

void Session::run_forward(std::span<const int> toks, bool capture, std::function<void()> alongside_head) {
  backend_->forward(toks, forward_options(capture, std::move(alongside_head)), out_);
}

// The full-cache run the metrics compare against: same tokens, same
// captured layers, no statistic and no eviction.
ForwardOptions Session::shadow_options() const {
  ForwardOptions so;
  so.capture_layers = capture_layers();
  so.capture_last_query_only = true;
  so.capture_logits = false;
  if (row_ <= 0) so.between_layers = prompt_pass_check;
  return so;
}

void Session::run_native_forward(std::span<const int> toks) {
  if (!native_) return;
  ForwardOptions no;  // logits only
  no.capture_logits = false;
  native_->forward(toks, no, native_out_);
}

void Session::run_shadow_forward(std::span<const int> toks) {
  shadow_->forward(toks, shadow_options(), shadow_out_);
  run_native_forward(toks);
}

// While nothing has been evicted (always after a one-shot prompt; after a
// streaming one only if every token was kept), the prompt's pass is the
// full-cache run's too: the run's statistics change no K, V or logits, and
// its captures are the shadow's (the same layers, the last query row). So
// the shadow is a copy made before the first eviction, not the prompt
// computed again: half the prefill of a session with metrics, and the
// second pass's activations are not held beside every page of the weights.
void Session::shadow_the_prompt(std::span<const int> prompt) {
  if (!backend_->holds_every_token()) return run_shadow_forward(prompt);
  shadow_.reset();  // its empty cache goes before the copy's is made
  shadow_ = backend_->clone_as_full_cache();
  shadow_out_ = out_;
  run_native_forward(prompt);
}

namespace {
const float* last_logits(const ForwardOutput& o, int vocab) {
  return o.logits.data() + (o.n_logits - 1) * size_t(vocab);
}
}  // namespace

const float* Session::policy_logits() const { return last_logits(out_, model_cfg_.vocab_size); }
const float* Session::shadow_logits() const { return last_logits(shadow_out_, model_cfg_.vocab_size); }
const float* Session::native_logits() const {
  return last_logits(native_ ? native_out_ : shadow_out_, model_cfg_.vocab_size);
}

void Session::normalize_logits() {
  const int V = model_cfg_.vocab_size;
  if (!out_.logits.empty()) norm_ = logits_norm(policy_logits(), V);
  if (!metrics_) return;
  shadow_norm_ = logits_norm(shadow_logits(), V);
  if (native_) native_norm_ = logits_norm(native_logits(), V);
}

void Session::prefill() {
  if (prompt_forward_pending_) return finish_prefill();
  if (started()) throw Error("session", "", "already started");
  const std::span<const int> prompt(tokens_.data(), prompt_len_);
  row_ = 0;
  const SlotValues value_weights = [&](int s) -> const std::vector<float>& { return backend_->value_weights(s); };
  if (cfg_.policy.prefill == PrefillMode::OneShot) {
    run_forward(prompt, true);
  } else {
    // TOVA's language-modelling setup: the policy acts after every prompt token.
    for (int i = 0; i < prompt_len_; ++i) {
      run_forward(prompt.subspan(i, 1), i + 1 == prompt_len_);
      if (i + 1 < prompt_len_) {
        const auto choice = choose_slots(
            *policy_, backend_->kv(), [&](int s) -> const std::vector<float>& { return backend_->slot_stats(s); }, i,
            streaming_prefill_step(i), &value_weights);
        recorder_.record_events(0, backend_->kv(), choice, policy_->ranking() == Ranking::Statistic,
                                [&](int s) -> const std::vector<float>& { return backend_->slot_stats(s); }, tokens_,
                                policy_->evicts());
        if (policy_->evicts() && choice.dropped > 0)
          for (int s = 0; s < backend_->kv().layout().n_segments(); ++s) backend_->retain(s, choice.keep[s]);
      }
    }
  }
  if (metrics_) shadow_the_prompt(prompt);
  finish_prefill();
}

void Session::finish_prefill() {
  prompt_forward_pending_ = false;
  normalize_logits();
  evict_and_record(0);
  if (planned_new_ == 0) finished_ = true;
  else choose_next_token();
}

SlotStatRule Session::prefill_stat_rule() const { return policy_->stat_rule(StepContext{0, planned_new_}); }

void Session::run_prompt_forward() {
  if (started()) throw Error("session", "", "already started");
  if (cfg_.policy.prefill != PrefillMode::OneShot)
    throw Error("session", "", "a streaming prefill evicts inside the prompt; it cannot be shared");
  row_ = 0;
  run_forward(std::span<const int>(tokens_.data(), prompt_len_), true);
  if (metrics_) shadow_the_prompt(std::span<const int>(tokens_.data(), prompt_len_));
  prompt_forward_pending_ = true;
}

bool Session::can_share_prefill(const Session& w) const {
  const SlotStatRule a = prefill_stat_rule(), b = w.prefill_stat_rule();
  const bool same_rule = a.source == b.source && a.decay == b.decay && a.reduce == b.reduce && a.noise == b.noise &&
                         a.tau == b.tau && a.seed == b.seed && a.last_rows == b.last_rows && a.span == b.span &&
                         a.variant == b.variant && a.sinks == b.sinks &&
                         policy_->resolved().critical == w.policy_->resolved().critical;
  // Everything else the forward pass reads: the model and its sharing
  // conversion, the weights, the device, the position mode, the tokens,
  // the run's length (the backend's capacity) and what is captured.
  const SharingLayout &s = cfg_.sharing, &t = w.cfg_.sharing;
  return !started() && w.prompt_forward_pending_ && cfg_.policy.prefill == PrefillMode::OneShot && same_rule &&
         bundle_ == w.bundle_ && s.kind == t.kind && s.kv_heads == t.kv_heads && s.kv_layers == t.kv_layers &&
         cfg_.weights == w.cfg_.weights && cfg_.device == w.cfg_.device &&
         cfg_.policy.positions == w.cfg_.policy.positions && tokens_ == w.tokens_ && planned_new_ == w.planned_new_ &&
         metrics_ == w.metrics_ && continuation_.empty() == w.continuation_.empty() &&
         capture_layers() == w.capture_layers();
}

void Session::prefill_from(Session& w) {
  if (!can_share_prefill(w))
    throw Error("session", "", "the prompt's forward pass of another session cannot stand for this one's");
  backend_ = w.backend_->clone();
  if (w.shadow_) shadow_ = w.shadow_->clone();
  if (w.native_) native_ = w.native_->clone();
  out_ = w.out_;
  shadow_out_ = w.shadow_out_;
  native_out_ = w.native_out_;
  row_ = 0;
  finish_prefill();
}

bool Session::step() {
  if (!started() || prompt_forward_pending_) prefill();
  if (finished_) return false;
  for (const auto& ch : cfg_.policy_changes)
    if (ch.from_step == row_ + 1) {
      const PolicyKind before = policy_->kind();
      policy_ = make_policy(resolve_policy(ch.policy, prompt_len_, model_cfg_.max_positions));
      if (ch.policy.kind != before) backend_->clear_slot_stats();
    }
  const int tok = *next_token_;
  tokens_.push_back(tok);
  ++row_;
  const int one[1] = {tok};
  // Choosing, recording and the attention metrics read only the layers'
  // captures, statistics and the caches' positions: the backend runs them
  // alongside its output head, and the eviction after them.
  StepMetrics m = step_identity(row_);
  auto alongside = [this, &m] {
    choose_and_record(row_);
    if (metrics_) attention_metrics(m);  // before eviction: recall is over what this step attended to
    evict();
  };
  if (metrics_) {
    // The policy run and its full-cache reference step together: decode
    // reads the weights once for both (the same bits as one after the
    // other). The native model, under a sharing conversion, has weights of
    // its own.
    backend_->forward_pair(one, forward_options(true, alongside), out_, *shadow_, shadow_options(), shadow_out_);
    run_native_forward(one);
  } else {
    run_forward(one, true, alongside);
  }
  normalize_logits();
  if (metrics_) logits_metrics(m);
  add_metrics(std::move(m));
  const bool eos = continuation_.empty() && cfg_.stop_at_eos && bundle_->is_eos(tok);
  if (row_ >= planned_new_ || eos) {
    finished_ = true;
    return false;
  }
  choose_next_token();
  return true;
}

void Session::run_to_end() {
  if (!started() || prompt_forward_pending_) prefill();
  while (step()) {
  }
}

void Session::set_policy(const PolicyParams& p) {
  PolicyParams q = p;
  q.seed = cfg_.seed;
  if (q.positions != cfg_.policy.positions)
    throw Error::setting("policy.positions", "the position mode cannot change during a run; replay the session instead");
  const PolicyKind before = policy_->kind();
  auto next = make_policy(resolve_policy(q, prompt_len_, model_cfg_.max_positions));
  if (!started()) {
    cfg_.policy = q;
  } else {
    // Remembered so that a replay of this session makes the same change.
    std::erase_if(cfg_.policy_changes, [&](const auto& c) { return c.from_step >= row_ + 1; });
    cfg_.policy_changes.push_back({row_ + 1, q});
    if (q.kind != before) backend_->clear_slot_stats();
  }
  policy_ = std::move(next);
}

void Session::choose_next_token() {
  if (!continuation_.empty()) {
    next_token_ = continuation_[row_];
  } else {
    SamplingParams sp = cfg_.sampling;
    sp.seed = cfg_.seed;
    next_token_ = backend_->sample(sp, static_cast<uint64_t>(row_));
  }
  // The pending metrics row gets the NLL of the token that follows it.
  auto& m = recorder_.last_metrics();
  m.next_token = *next_token_;
  if (!out_.logits.empty()) {
    m.nll = token_nll(policy_logits(), norm_, *next_token_);
    m.argmax = norm_.argmax;
  }
  if (metrics_) {
    m.nll_full = token_nll(shadow_logits(), shadow_norm_, *next_token_);
    m.nll_native = token_nll(native_logits(), native_norm(), *next_token_);
  }
}

void Session::evict_and_record(int row) {
  choose_and_record(row);
  StepMetrics m = step_metrics(row);  // before eviction: recall is over what this step attended to
  evict();
  add_metrics(std::move(m));
}

void Session::choose_and_record(int row) {
  auto stats = [&](int s) -> const std::vector<float>& { return backend_->slot_stats(s); };
  const int newest = static_cast<int>(tokens_.size()) - 1;
  const SlotValues value_weights = [&](int s) -> const std::vector<float>& { return backend_->value_weights(s); };
  choose_slots(*policy_, backend_->kv(), stats, newest, row, choice_, selection_scratch_, &value_weights);
  const bool has_stat = policy_->ranking() == Ranking::Statistic;
  recorder_.record(row, backend_->kv(), choice_, has_stat, stats, out_.attention, row, tokens_, policy_->evicts());
}

void Session::evict() {
  if (!policy_->evicts() || choice_.dropped == 0) return;
  // Segments in parallel (Backend::retain allows it): on a GPU this host
  // bookkeeping runs while the device waits for the next step.
  const int S = backend_->kv().layout().n_segments();
  parallel_runs(S, runs_for(S, backend_->kv().total_slots()), [&](int, int s) { backend_->retain(s, choice_.keep[s]); });
}

// Which step and token a metrics row is about (the newest token fed).
StepMetrics Session::step_identity(int row) const {
  StepMetrics m;
  m.step = row;
  m.position = static_cast<int>(tokens_.size()) - 1;
  m.token = tokens_.back();
  return m;
}

StepMetrics Session::step_metrics(int row) const {
  StepMetrics m = step_identity(row);
  if (metrics_) {
    attention_metrics(m);
    logits_metrics(m);
  }
  return m;
}

void Session::logits_metrics(StepMetrics& m) const {
  const int V = model_cfg_.vocab_size;
  m.kl = kl_divergence(shadow_logits(), shadow_norm_, policy_logits(), norm_, V);
  m.top1_agree = shadow_norm_.argmax == norm_.argmax ? 1 : 0;
  if (native_) {
    m.kl_native = kl_divergence(native_logits(), native_norm_, policy_logits(), norm_, V);
    m.top1_agree_native = native_norm_.argmax == norm_.argmax ? 1 : 0;
  } else {  // the checkpoint's own layout: the shadow run is the native model
    m.kl_native = m.kl;
    m.top1_agree_native = m.top1_agree;
  }
}

// Attention recall and ideal similarity, averaged over every recorded
// (layer, head). One task per head: at long contexts this is a millisecond
// of work per step (a 2048-position row per head, 270 heads in SmolLM2).
// Each task writes its own slot and the sums run in a fixed order, so the
// result is the same bits for any thread count, and inside a pool task
// (where the step runs it alongside the output head) the loop simply runs
// in order. The full-cache run never evicts, so its slots are its
// positions in order and its row is read in place.
void Session::attention_metrics(StepMetrics& m) const {
  const KvLayout& lay = backend_->kv().layout();
  const int H = model_cfg_.n_heads;
  const int P = static_cast<int>(tokens_.size());
  const int n_heads = static_cast<int>(out_.attention.size()) * H;
  std::vector<HeadAgreement> agree(n_heads);
  parallel_for(n_heads, [&](int t) {
    thread_local AgreementScratch scratch;
    thread_local std::vector<float> scattered;
    const auto& a = out_.attention[t / H];
    const auto& f = shadow_out_.attention[t / H];
    const int h = t % H;
    const auto& full_pos = shadow_->kv().positions(lay.segment_of(f.layer, h));
    std::span<const float> full(f.prob_row(h, f.n_queries - 1), f.row_len[h]);
    const bool in_place = static_cast<int>(full_pos.size()) == P && (P == 0 || full_pos.back() == P - 1);
    if (!in_place) {
      scattered = by_position(f, h, full_pos, P);
      full = scattered;
    }
    agree[t] = head_agreement({a.prob_row(h, a.n_queries - 1), static_cast<std::size_t>(a.row_len[h])},
                              backend_->kv().positions(lay.segment_of(a.layer, h)), full,
                              policy_->segment_budget(lay, lay.segment_of(a.layer, h)), scratch);
  });
  double recall_sum = 0, sim_sum = 0;
  for (int t = 0; t < n_heads; ++t) {
    recall_sum += agree[t].recall;
    sim_sum += agree[t].similarity;
  }
  m.attention_recall = n_heads ? recall_sum / n_heads : StepMetrics::nan;
  m.ideal_similarity = n_heads ? sim_sum / n_heads : StepMetrics::nan;
}

// Sizes are of the cache after this step's eviction.
void Session::add_metrics(StepMetrics m) {
  m.kv_slots = backend_->kv().total_slots();
  m.kv_bytes = kv_bytes();
  m.kv_bytes_full = kv_bytes_full();
  m.kv_bytes_native = kv_bytes_native();
  recorder_.add_metrics(m);
}

int64_t Session::kv_bytes() const {
  return backend_->kv().total_slots() * 2 * model_cfg_.head_dim * static_cast<int64_t>(backend_->kv_element_bytes());
}

int64_t Session::kv_bytes_full() const {
  return KvLayout::from_config(model_cfg_).bytes(static_cast<int64_t>(tokens_.size()), backend_->kv_element_bytes());
}

int64_t Session::kv_bytes_native() const {
  return KvLayout::from_config(bundle_->config()).bytes(static_cast<int64_t>(tokens_.size()), backend_->kv_element_bytes());
}

std::string Session::text_of(int position) const {
  const int id = tokens_.at(position);
  return bundle_->tokenizer->token_text(id);
}

Session::Session(Session& from, ForkTag)
    : bundle_(from.bundle_),
      cfg_(from.cfg_),
      model_cfg_(from.model_cfg_),
      weights_(from.weights_),
      backend_(from.backend_->clone()),
      shadow_(from.shadow_ ? from.shadow_->clone() : nullptr),
      native_(from.native_ ? from.native_->clone() : nullptr),
      policy_(make_policy(from.policy_->resolved())),
      recorder_(from.recorder_),
      tokens_(from.tokens_),
      continuation_(from.continuation_),
      prompt_len_(from.prompt_len_),
      planned_new_(from.planned_new_),
      row_(from.row_),
      next_token_(from.next_token_),
      finished_(from.finished_),
      prompt_forward_pending_(from.prompt_forward_pending_),
      metrics_(from.metrics_),
      forecast_(from.forecast_),
      out_(from.out_),
      shadow_out_(from.shadow_out_),
      native_out_(from.native_out_),
      norm_(from.norm_),
      shadow_norm_(from.shadow_norm_),
      native_norm_(from.native_norm_) {}

std::unique_ptr<Session> Session::fork() { return std::unique_ptr<Session>(new Session(*this, ForkTag{})); }

std::unique_ptr<Session> Session::replay_to(int row, const std::function<bool(int)>& progress) const {
  if (row < 0 || row > row_)
    throw Error("replay", "", "row " + std::to_string(row) + " has not been run (rows 0.." + std::to_string(row_) + ")");
  SessionConfig c = cfg_;
  std::erase_if(c.policy_changes, [&](const auto& ch) { return ch.from_step > row; });
  auto replay = std::make_unique<Session>(bundle_, c);
  replay->prefill();
  if (progress && !progress(0)) return nullptr;
  while (replay->current_row() < row && replay->step())
    if (progress && !progress(replay->current_row())) return nullptr;
  return replay;
}

std::vector<float> Session::layer_attention(int layer) const {
  const int rows = recorder_.rows_recorded(), P = recorder_.positions(), H = model_cfg_.n_heads;
  if (layer < 0 || layer >= model_cfg_.n_layers)
    throw Error("layer", "", "unknown layer " + std::to_string(layer) + " (the model has layers 0.." +
                                 std::to_string(model_cfg_.n_layers - 1) + ")");
  const Recorder* rec = &recorder_;
  std::unique_ptr<Session> replay;
  if (!recorder_.records_layer(layer)) {
    // Deterministic replay: same tokens, same draws, this layer recorded.
    SessionConfig c = cfg_;
    c.recording.layers = {layer};
    c.recording.heads.clear();
    c.recording.metrics = false;
    replay = std::make_unique<Session>(bundle_, c);
    replay->prefill();
    while (replay->current_row() < row_ && replay->step()) {
    }
    rec = &replay->recorder();
  }
  std::vector<float> out(size_t(rows) * H * P);
  for (int r = 0; r < rows; ++r)
    for (int h = 0; h < H; ++h)
      for (int p = 0; p < P; ++p) out[(size_t(r) * H + h) * P + p] = rec->attention(r, layer, h, p);
  return out;
}

}  // namespace kvscope
