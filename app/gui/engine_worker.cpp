// The worker thread: it alone touches the sessions. Commands are closures
// queued under `mu`; each runs with the lock released and publishes
// immutable snapshots, so the UI thread only ever holds the lock long
// enough to copy a shared_ptr or the status.
//
// Cancelling works by epoch: every command remembers the cancel epoch of
// the moment it was posted, and cancel() bumps it. A long command (a
// replay, a run of N steps) checks between steps and in the replay's
// progress callback; so does one still waiting in the queue when the user
// cancels, without any flag having to be reset at the right moment.
//
// This file is that machinery: the thread and its queue, the status, the
// snapshots and the public methods. What each command does to the sessions
// is engine_worker_commands.cpp; it never takes `mu` itself, only through
// the setters and publishers here.
#include "engine_worker.h"

#include <algorithm>
#include <cstdio>

#include "engine_worker_impl.h"
#include "error_words.h"
#include "policy/policy_summary.h"

namespace kvscope::gui {
namespace {

// "h2o k=49 w=24 s=0 kv_head": the numbers the policy that made `row` ran
// with, in the engine's words (the CLI's run summary prints the same); the
// full cache needs no numbers. Not the session's current policy: after an
// Apply "from this step on" that one is the next step's.
std::string policy_label(const Session& s, const SessionConfig& cfg, int row) {
  const PolicyParams& p = policy_at_row(cfg, row);
  if (p.kind == PolicyKind::Full) return "full cache";
  return policy_summary(resolve_policy(p, s.prompt_length(), s.model_config().max_positions));
}

Clock::duration play_period(double steps_per_s) {
  // At high speeds the steps themselves set the pace.
  if (steps_per_s <= 0 || steps_per_s >= 1000) return Clock::duration::zero();
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / steps_per_s));
}

}  // namespace

EngineWorker::Impl::Impl() { thread = std::thread([this] { loop(); }); }

EngineWorker::Impl::~Impl() {
  {
    std::lock_guard lk(mu);
    stop = true;
    status.playing = false;
  }
  cancel_epoch.fetch_add(1);
  cv.notify_all();
  thread.join();
}

void EngineWorker::Impl::post(std::string task, std::function<void()> fn) {
  {
    std::lock_guard lk(mu);
    queue.push_back({std::move(fn), cancel_epoch.load(), std::move(task)});
  }
  cv.notify_all();
}

// ------------------------------------------------------------------ loop
void EngineWorker::Impl::loop() {
  std::unique_lock lk(mu);
  while (!stop) {
    if (!queue.empty()) {
      Command c = std::move(queue.front());
      queue.pop_front();
      running = true;
      status.busy = true;
      status.task = c.task;
      status.progress = -1;
      lk.unlock();
      epoch = c.epoch;
      guarded(c.run);
      guarded([this] { flush(); });
      lk.lock();
      running = false;
      status.busy = false;
      status.task.clear();
      status.progress = -1;
    } else if (status.playing) {
      const auto now = Clock::now();
      if (now < next_tick) {
        cv.wait_until(lk, next_tick);
        continue;
      }
      next_tick = now + play_period(status.play_steps_per_s);
      play_fast = next_tick - now < std::chrono::milliseconds(10);
      running = true;
      lk.unlock();
      epoch = cancel_epoch.load();
      bool more = false;
      guarded([&] { more = play_tick(); });
      lk.lock();
      running = false;
      if (!more) status.playing = false;
    } else if (dirty) {
      running = true;  // play stopped between snapshots
      lk.unlock();
      guarded([this] { flush(); });
      lk.lock();
      running = false;
    } else {
      cv.wait(lk);
    }
  }
}

void EngineWorker::Impl::guarded(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    set_error(in_window_words(e));  // "budget k: ...", not the engine's field path
  } catch (const std::exception& e) {
    set_error(e.what());
  } catch (...) {
    set_error("unexpected error in the engine worker");
  }
}

// ------------------------------------------------------------------ status
void EngineWorker::Impl::set_error(const std::string& msg) {
  std::lock_guard lk(mu);
  status.error = msg;
  ++status.error_serial;
  status.playing = false;
}

void EngineWorker::Impl::set_message(const std::string& msg) {
  std::lock_guard lk(mu);
  status.message = msg;
  ++status.message_serial;
}

void EngineWorker::Impl::set_task(const std::string& task, double progress) {
  std::lock_guard lk(mu);
  status.task = task;
  status.progress = progress;
}

void EngineWorker::Impl::set_progress(double p) {
  std::lock_guard lk(mu);
  status.progress = p;
}

std::function<bool(int)> EngineWorker::Impl::progress_to(int target) {
  return [this, target](int row) {
    set_progress(target > 0 ? double(row) / target : 1.0);
    return !canceled();
  };
}

void EngineWorker::Impl::set_last_export(std::vector<std::filesystem::path> files) {
  std::lock_guard lk(mu);
  status.last_export = std::move(files);
}

// ------------------------------------------------------------------ publishing
SessionConfig EngineWorker::Impl::merged_config() const {
  SessionConfig c = A->config();
  c.fork = fork_cfg;
  return c;
}

std::shared_ptr<const PublishedRun> EngineWorker::Impl::snapshot(const std::shared_ptr<Session>& s, uint64_t gen,
                                                                 double ms, SessionConfig cfg,
                                                                 const PublishedRun* prev) const {
  auto p = std::make_shared<PublishedRun>();
  p->session = s;
  p->generation = gen;
  p->rows = s->recorder().rows_recorded();
  p->finished = s->finished();
  p->config = std::move(cfg);
  p->policy_label = policy_label(*s, p->config, std::max(p->rows - 1, 0));
  p->tokens = s->tokens();
  if (prev && prev->generation == gen && prev->token_text.size() <= p->tokens.size()) p->token_text = prev->token_text;
  p->token_text.reserve(p->tokens.size());
  for (int i = static_cast<int>(p->token_text.size()); i < static_cast<int>(p->tokens.size()); ++i)
    p->token_text.push_back(s->text_of(i));
  p->prompt_length = s->prompt_length();
  p->positions = s->recorder().positions();
  p->metrics = s->recorder().metrics();
  p->events = s->recorder().events();
  p->kv_bytes = s->kv_bytes();
  p->kv_bytes_full = s->kv_bytes_full();
  p->kv_bytes_native = s->kv_bytes_native();
  p->kv_element_bytes = s->backend().kv_element_bytes();
  p->last_step_ms = ms;
  p->device = s->backend().name();
  for (int l : s->recorder().attention_layers())
    if (s->recorder().records_layer(l)) p->recorded_layers.push_back(l);  // every head of it
  p->informative_layer = head.layer;
  p->informative_head = head.head;
  return p;
}

void EngineWorker::Impl::publish(double ms_a, double ms_b) {
  if (ms_a >= 0) last_ms_a = ms_a;
  if (ms_b >= 0) last_ms_b = ms_b;
  ms_a = last_ms_a;
  ms_b = last_ms_b;
  std::shared_ptr<const PublishedRun> prev_a, prev_b;
  {
    std::lock_guard lk(mu);
    prev_a = pub_a;
    prev_b = pub_b;
  }
  auto a = A ? snapshot(A, gen_a, ms_a, merged_config(), prev_a.get()) : nullptr;
  auto b = B ? snapshot(B, gen_b, ms_b, B->config(), prev_b.get()) : nullptr;
  dirty = false;
  last_publish = Clock::now();
  std::lock_guard lk(mu);
  // Layers filled for an older session are of no use to the new one.
  if (pub_a && a && pub_a->generation != a->generation) std::erase_if(filled, [](auto& kv) { return !kv.first.second; });
  if (!b || (pub_b && pub_b->generation != b->generation)) std::erase_if(filled, [](auto& kv) { return kv.first.second; });
  pub_a = std::move(a);
  pub_b = std::move(b);
}

// A snapshot copies every token, metric and eviction so far, which for a
// long run of a big model costs more than a step; the UI draws at most
// once a frame anyway. Whatever is left unpublished goes out when the
// command ends or play stops.
void EngineWorker::Impl::publish_step(double ms_a, double ms_b, bool more_follow) {
  const auto frame = std::chrono::milliseconds(10);
  if (more_follow && Clock::now() - last_publish < frame) {
    dirty = true;
    last_ms_a = ms_a;
    last_ms_b = ms_b;
    return;
  }
  publish(ms_a, ms_b);
}

void EngineWorker::Impl::flush() {
  if (dirty) publish(last_ms_a, last_ms_b);
}

void EngineWorker::Impl::install(std::shared_ptr<Session> a, std::shared_ptr<Session> b,
                                 std::optional<ForkConfig> fork) {
  if (a != A) gen_a = ++last_gen;
  if (b && b != B) gen_b = ++last_gen;
  A = std::move(a);
  B = std::move(b);
  fork_cfg = B ? std::move(fork) : std::nullopt;
  publish();
}

// The reference's rows laid out over A's positions (A plans more
// positions than it has generated so far).
void EngineWorker::Impl::publish_full_reference(const Session& ref, int layer) {
  auto fr = std::make_shared<FullReference>();
  fr->generation = gen_a;
  fr->layer = layer;
  fr->rows = ref.recorder().rows_recorded();
  fr->heads = ref.model_config().n_heads;
  fr->positions = A->recorder().positions();
  const int P = ref.recorder().positions();
  const std::vector<float> att = ref.layer_attention(layer);
  fr->attention.assign(size_t(fr->rows) * fr->heads * fr->positions, 0.0f);
  for (int r = 0; r < fr->rows; ++r)
    for (int h = 0; h < fr->heads; ++h)
      std::copy_n(att.begin() + (size_t(r) * fr->heads + h) * P, std::min(P, fr->positions),
                  fr->attention.begin() + (size_t(r) * fr->heads + h) * fr->positions);
  std::lock_guard lk(mu);
  full_ref = std::move(fr);
}

void EngineWorker::Impl::publish_filled_layer(int layer, std::shared_ptr<const std::vector<float>> a,
                                              std::shared_ptr<const std::vector<float>> b) {
  std::lock_guard lk(mu);
  filled[{layer, false}] = std::move(a);
  if (b) filled[{layer, true}] = std::move(b);
}

// ------------------------------------------------------------------ public

EngineWorker::EngineWorker() : impl_(std::make_unique<Impl>()) {}
EngineWorker::~EngineWorker() = default;

void EngineWorker::open(SessionConfig cfg) {
  impl_->post("open", [this, cfg = std::move(cfg)] { impl_->do_open(cfg); });
}
void EngineWorker::open_file(const std::filesystem::path& path, int steps) {
  impl_->post("open " + path.string(), [this, path, steps] { impl_->do_open_file(path, steps); });
}
void EngineWorker::step(int n) {
  impl_->post("step", [this, n] { impl_->do_step(n); });
}
void EngineWorker::step_from(int from_row, int n) {
  impl_->post("step", [this, from_row, n] { impl_->do_step_from(from_row, n); });
}
void EngineWorker::play(bool on) {
  {
    std::lock_guard lk(impl_->mu);
    impl_->status.playing = on;
    impl_->next_tick = Clock::now();
  }
  impl_->cv.notify_all();
}
void EngineWorker::set_play_speed(double steps_per_s) {
  {
    std::lock_guard lk(impl_->mu);
    impl_->status.play_steps_per_s = steps_per_s;
  }
  impl_->cv.notify_all();
}
void EngineWorker::reset() {
  impl_->post("reset", [this] { impl_->do_reset(); });
}
void EngineWorker::apply(PolicyParams p, SharingLayout sharing, ApplyMode mode, bool target_fork) {
  impl_->post("apply", [=, this] { impl_->do_apply(p, sharing, mode, target_fork); });
}
void EngineWorker::fork(PolicyParams p, std::optional<int> at_row) {
  impl_->post("fork", [=, this] { impl_->do_fork(p, at_row); });
}
void EngineWorker::drop_fork() {
  impl_->post("drop fork", [this] { impl_->do_drop_fork(); });
}
void EngineWorker::request_full_reference(int layer) {
  impl_->post("full-cache reference", [this, layer] { impl_->do_full_reference(layer); });
}
void EngineWorker::fill_layer(int layer) {
  impl_->post("replay layer", [this, layer] { impl_->do_fill_layer(layer); });
}
void EngineWorker::export_all(std::filesystem::path dir, int layer, int head, FigureExportOptions figures) {
  impl_->post("export", [=, this] { impl_->do_export(dir, layer, head, figures); });
}
void EngineWorker::save_session(std::filesystem::path file, std::optional<ViewConfig> view) {
  impl_->post("save", [this, file, view] { impl_->do_save(file, view); });
}
void EngineWorker::cancel() {
  {
    std::lock_guard lk(impl_->mu);
    impl_->status.playing = false;
  }
  impl_->cancel_epoch.fetch_add(1);
  impl_->cv.notify_all();
}

std::shared_ptr<const PublishedRun> EngineWorker::a() const {
  std::lock_guard lk(impl_->mu);
  return impl_->pub_a;
}
std::shared_ptr<const PublishedRun> EngineWorker::b() const {
  std::lock_guard lk(impl_->mu);
  return impl_->pub_b;
}
std::shared_ptr<const FullReference> EngineWorker::full_reference() const {
  std::lock_guard lk(impl_->mu);
  return impl_->full_ref;
}
WorkerStatus EngineWorker::status() const {
  std::lock_guard lk(impl_->mu);
  return impl_->status;
}
std::shared_ptr<const std::vector<float>> EngineWorker::filled_layer(int layer, bool fork) const {
  std::lock_guard lk(impl_->mu);
  const auto it = impl_->filled.find({layer, fork});
  return it == impl_->filled.end() ? nullptr : it->second;
}
bool EngineWorker::idle() const {
  std::lock_guard lk(impl_->mu);
  return impl_->queue.empty() && !impl_->running && !impl_->status.playing && !impl_->dirty;
}

}  // namespace kvscope::gui
