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
#include "engine_worker.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "io/atomic_file.h"
#include "session/exporter.h"
#include "session/informative_head.h"

namespace kvscope::gui {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// "h2o k=49 w=24 s=0 (kv-head)": the numbers the policy runs with now.
std::string policy_label(const Session& s) {
  const ResolvedPolicy& r = s.policy().resolved();
  if (s.policy().kind() == PolicyKind::Full) return "full cache";
  char buf[160];
  std::snprintf(buf, sizeof(buf), "%s k=%d w=%d s=%d (%s)", policy_name(s.policy().kind()), r.k, r.w, r.s,
                granularity_name(r.granularity));
  return buf;
}

// A session's settings without a fork block: the worker keeps the fork
// itself (it is a relation between A and B, not a setting of either).
SessionConfig without_fork(SessionConfig c) {
  c.fork.reset();
  return c;
}

// Rewrites an exported session.json with `cfg`, keeping the exporter's
// "resolved" block; untouched when nothing differs, so the file stays
// byte-identical to the CLI's.
void rewrite_session_json(const std::filesystem::path& file, const SessionConfig& cfg) {
  std::ifstream in(file);
  const nlohmann::json written = nlohmann::json::parse(in);
  nlohmann::json j = cfg.to_json();
  if (written.contains("resolved")) j["resolved"] = written["resolved"];
  if (j == written) return;
  write_text_file(file, j.dump(2) + "\n");
}

// A policy error of the fork branch, named as the session file's field.
Error fork_policy_error(const Error& e, const std::string& source) {
  return Error(source, "", std::string("fork.") + session_file_error(e, "").what());
}

}  // namespace

struct EngineWorker::Impl {
  // --- shared with the UI thread, under mu ---
  mutable std::mutex mu;
  std::condition_variable cv;
  struct Command {
    std::function<void()> run;
    uint64_t epoch = 0;
    std::string task;
  };
  std::deque<Command> queue;
  bool stop = false, running = false;
  WorkerStatus status;
  std::shared_ptr<const PublishedRun> pub_a, pub_b;
  std::shared_ptr<const FullReference> full_ref;
  std::map<std::pair<int, bool>, std::shared_ptr<const std::vector<float>>> filled;
  std::atomic<uint64_t> cancel_epoch{0};

  // --- the worker thread's own ---
  uint64_t epoch = 0;  // of the running command
  std::shared_ptr<const ModelBundle> bundle;  // A's model
  std::string bundle_path;                    // its directory (absolute)
  std::shared_ptr<Session> A, B;
  uint64_t gen_a = 0, gen_b = 0, last_gen = 0;
  std::optional<ForkConfig> fork_cfg;
  HeadChoice head;
  Clock::time_point next_tick = Clock::now();
  bool play_fast = false;               // play's ticks come faster than frames
  std::atomic<bool> dirty{false};       // A or B stepped since the last snapshot (idle() reads it)
  Clock::time_point last_publish;
  double last_ms_a = 0, last_ms_b = 0;  // step times of the unpublished step
  std::thread thread;

  Impl() { thread = std::thread([this] { loop(); }); }
  ~Impl() {
    {
      std::lock_guard lk(mu);
      stop = true;
      status.playing = false;
    }
    cancel_epoch.fetch_add(1);
    cv.notify_all();
    thread.join();
  }

  void post(std::string task, std::function<void()> fn) {
    {
      std::lock_guard lk(mu);
      queue.push_back({std::move(fn), cancel_epoch.load(), std::move(task)});
    }
    cv.notify_all();
  }

  // ---------------------------------------------------------------- loop
  void loop() {
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

  static Clock::duration play_period(double steps_per_s) {
    // At high speeds the steps themselves set the pace.
    if (steps_per_s <= 0 || steps_per_s >= 1000) return Clock::duration::zero();
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / steps_per_s));
  }

  // Errors never leave the thread: they become the status line, and play
  // stops (a failing step would fail again on the next tick).
  void guarded(const std::function<void()>& fn) {
    try {
      fn();
    } catch (const std::exception& e) {
      set_error(e.what());
    } catch (...) {
      set_error("unexpected error in the engine worker");
    }
  }

  // ---------------------------------------------------------------- status
  bool canceled() const { return cancel_epoch.load() != epoch; }

  void set_error(const std::string& msg) {
    std::lock_guard lk(mu);
    status.error = msg;
    ++status.error_serial;
    status.playing = false;
  }
  void set_message(const std::string& msg) {
    std::lock_guard lk(mu);
    status.message = msg;
    ++status.message_serial;
  }
  void set_task(const std::string& task, double progress = -1) {
    std::lock_guard lk(mu);
    status.task = task;
    status.progress = progress;
  }
  void set_progress(double p) {
    std::lock_guard lk(mu);
    status.progress = p;
  }
  // A progress callback for Session::replay_to: rows done of `target`,
  // false (stop) once cancelled.
  std::function<bool(int)> progress_to(int target) {
    return [this, target](int row) {
      set_progress(target > 0 ? double(row) / target : 1.0);
      return !canceled();
    };
  }
  void note_canceled(const std::string& what) { set_message(what + " canceled; nothing changed"); }

  // ---------------------------------------------------------------- publishing
  // A's settings as they would be saved: the session's own plus the fork.
  SessionConfig merged_config() const {
    SessionConfig c = A->config();
    c.fork = fork_cfg;
    return c;
  }

  // `prev`: the last snapshot of this side, whose token texts are reused
  // when it is of the same session (positions only ever get appended).
  std::shared_ptr<const PublishedRun> snapshot(const std::shared_ptr<Session>& s, uint64_t gen, double ms,
                                               SessionConfig cfg, const PublishedRun* prev) const {
    auto p = std::make_shared<PublishedRun>();
    p->session = s;
    p->generation = gen;
    p->rows = s->recorder().rows_recorded();
    p->finished = s->finished();
    p->config = std::move(cfg);
    p->policy_label = policy_label(*s);
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
    p->last_step_ms = ms;
    p->device = s->backend().name();
    p->recorded_layers = s->recorder().attention_layers();
    p->informative_layer = head.layer;
    p->informative_head = head.head;
    return p;
  }

  // Step times < 0: the last ones measured (a new session opened by
  // stepping keeps showing what its steps cost).
  void publish(double ms_a = -1, double ms_b = -1) {
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

  // After a step: published unless the last snapshot is younger than a
  // frame and more steps follow at once. A snapshot copies every token,
  // metric and eviction so far, which for a long run of a big model costs
  // more than a step; the UI draws at most once a frame anyway. Whatever
  // is left unpublished goes out when the command ends or play stops.
  void publish_step(double ms_a, double ms_b, bool more_follow) {
    const auto frame = std::chrono::milliseconds(10);
    if (more_follow && Clock::now() - last_publish < frame) {
      dirty = true;
      last_ms_a = ms_a;
      last_ms_b = ms_b;
      return;
    }
    publish(ms_a, ms_b);
  }
  void flush() {
    if (dirty) publish(last_ms_a, last_ms_b);
  }

  // Installs a new A (and B), each a new generation.
  void install(std::shared_ptr<Session> a, std::shared_ptr<Session> b, std::optional<ForkConfig> fork) {
    if (a != A) gen_a = ++last_gen;
    if (b && b != B) gen_b = ++last_gen;
    A = std::move(a);
    B = std::move(b);
    fork_cfg = B ? std::move(fork) : std::nullopt;
    publish();
  }

  // ---------------------------------------------------------------- stepping
  // One step of A and B (each while it has steps left). False when neither
  // could step.
  bool step_pair(Session& a, Session* b, double* ms_a = nullptr, double* ms_b = nullptr) {
    bool stepped = false;
    if (!a.finished()) {
      const auto t0 = Clock::now();
      a.step();
      if (ms_a) *ms_a = ms_since(t0);
      stepped = true;
    }
    if (b && !b->finished()) {
      const auto t0 = Clock::now();
      b->step();
      if (ms_b) *ms_b = ms_since(t0);
      stepped = true;
    }
    return stepped;
  }

  bool below(const Session& s, int row) const { return !s.finished() && s.current_row() < row; }

  // Steps a and b (not yet published) until both reach `row` or end;
  // false when cancelled. `done` counts steps already taken of `total`.
  bool advance(Session& a, Session* b, int row, int done, int total) {
    while (below(a, row) || (b && below(*b, row))) {
      if (canceled()) return false;
      // Timed like a step of the transport, so the status bar shows what a
      // step costs after a replay or an opened session too.
      if (below(a, row)) {
        const auto t0 = Clock::now();
        a.step();
        last_ms_a = ms_since(t0);
      }
      if (b && below(*b, row)) {
        const auto t0 = Clock::now();
        b->step();
        last_ms_b = ms_since(t0);
      }
      ++done;
      set_progress(total > 0 ? std::min(1.0, double(done) / total) : -1);
    }
    return true;
  }

  // B = A's settings up to `at_row`, then policy p: a fork of `a` itself
  // when it is at that row, else a replay of it to there.
  std::shared_ptr<Session> branch(Session& a, int at_row, const PolicyParams& p) {
    std::shared_ptr<Session> b;
    if (at_row == a.current_row()) b = a.fork();
    else b = a.replay_to(at_row, progress_to(at_row));
    if (!b) return nullptr;  // cancelled
    try {
      b->set_policy(p);
    } catch (const Error& e) {
      throw fork_policy_error(e, a.config().source);
    }
    return b;
  }

  // A from `cfg`, prefilled, with B forked at fork->at_step, both run to
  // `target` (-1: to the end). Nothing installed; empty when cancelled.
  struct Built {
    std::shared_ptr<Session> a, b;
    HeadChoice head;
  };
  std::optional<Built> build(std::shared_ptr<const ModelBundle> model, const SessionConfig& cfg,
                             const std::optional<ForkConfig>& fork, int target) {
    Built r;
    set_task("prefill");
    r.a = std::make_shared<Session>(std::move(model), without_fork(cfg));
    r.a->prefill();
    r.head = informative_head(*r.a);
    if (target < 0) target = r.a->planned_new_tokens();
    if (fork) {
      if (fork->at_step < 0 || fork->at_step > r.a->planned_new_tokens())
        throw Error(cfg.source, "fork.at_step", "step " + std::to_string(fork->at_step) + " is outside the run (0.." +
                                                    std::to_string(r.a->planned_new_tokens()) + ")");
      set_task("run to the fork at step " + std::to_string(fork->at_step), 0);
      if (!advance(*r.a, nullptr, fork->at_step, 0, std::max(target, fork->at_step))) return std::nullopt;
      if (r.a->current_row() < fork->at_step)
        throw Error(cfg.source, "fork.at_step", "the run ended at step " + std::to_string(r.a->current_row()));
      r.b = branch(*r.a, fork->at_step, fork->policy);
    }
    set_task("run to step " + std::to_string(target), 0);
    if (!advance(*r.a, r.b.get(), target, r.a->current_row(), target)) return std::nullopt;
    return r;
  }

  // ---------------------------------------------------------------- commands
  void do_open(SessionConfig cfg) {
    // Absolute, so that a saved or exported session reruns from anywhere.
    cfg.model = absolute_model_path(cfg.model);
    // Loading a model is the slow part of opening: keep the one A runs on.
    auto model = bundle && bundle_path == cfg.model ? bundle : bundle_for(cfg.model);
    auto r = build(model, cfg, std::nullopt, 0);
    if (!r) return note_canceled("open");
    bundle = std::move(model);  // only now: replays of A need A's model
    bundle_path = cfg.model;
    head = r->head;
    install(r->a, nullptr, std::nullopt);
  }

  void do_open_file(const std::filesystem::path& path, int steps) {
    SessionFile f = load_session_file(path.string());
    const int target = steps >= 0 ? steps : f.cfg.view.step.value_or(-1);
    auto r = build(f.bundle, f.cfg, f.cfg.fork, target);
    if (!r) return note_canceled("open " + path.string());
    bundle = f.bundle;
    bundle_path = f.cfg.model;
    head = r->head;
    install(r->a, r->b, f.cfg.fork);
  }

  void do_step(int n) {
    if (!A) throw Error("step", "", "no session is open");
    set_task(n == 1 ? "step" : "run " + std::to_string(n) + " steps", 0);
    for (int i = 0; i < n; ++i) {
      if (canceled()) return;
      double ms_a = 0, ms_b = 0;
      if (!step_pair(*A, B.get(), &ms_a, &ms_b)) break;
      publish_step(ms_a, ms_b, i + 1 < n);
      set_progress(double(i + 1) / n);
    }
  }

  bool play_tick() {
    if (!A) return false;
    double ms_a = 0, ms_b = 0;
    if (!step_pair(*A, B.get(), &ms_a, &ms_b)) return false;
    const bool more = !A->finished() || (B && !B->finished());
    // Only fast play skips snapshots: at a few steps a second each is shown.
    publish_step(ms_a, ms_b, more && play_fast);
    return more;
  }

  void do_step_from(int row, int n) {
    if (!A) throw Error("step", "", "no session is open");
    const int latest = A->current_row();
    if (row < 0 || row >= latest) return do_step(n);
    set_task("replay to step " + std::to_string(row), 0);
    std::shared_ptr<Session> a = A->replay_to(row, progress_to(row));
    if (!a) return note_canceled("replay to step " + std::to_string(row));
    std::shared_ptr<Session> b;
    std::string fork_note;
    if (B && fork_cfg) {
      // The fork goes back with A when its point survives, else it goes.
      // B may have ended (EOS) before `row`.
      if (row > fork_cfg->at_step) b = B->replay_to(std::min(row, B->current_row()), progress_to(row));
      else if (row == fork_cfg->at_step) b = branch(*a, row, fork_cfg->policy);
      else fork_note = "; the fork at step " + std::to_string(fork_cfg->at_step) + " was dropped";
      if (!b && fork_note.empty()) return note_canceled("replay to step " + std::to_string(row));
    }
    install(a, b, fork_cfg);
    set_message("continued from step " + std::to_string(row) + ": steps " + std::to_string(row + 1) + ".." +
                std::to_string(latest) + " of the old run dropped" + fork_note);
    do_step(n);
  }

  void do_reset() {
    if (!A) return;
    const bool had_changes = !A->config().policy_changes.empty();
    set_task("reset", 0);
    std::shared_ptr<Session> a = A->replay_to(0, progress_to(0));
    if (!a) return note_canceled("reset");
    install(a, nullptr, std::nullopt);
    set_message(had_changes ? "reset to the prompt; the policy changes made during the run were dropped"
                            : "reset to the prompt");
  }

  void do_apply(const PolicyParams& p, const SharingLayout& sharing, ApplyMode mode, bool target_fork) {
    if (!A) throw Error("apply", "", "no session is open");
    if (target_fork && !B) throw Error("apply", "", "there is no fork to apply it to");
    Session& s = target_fork ? *B : *A;
    const bool sharing_changed = sharing.str() != s.config().sharing.str();
    if (sharing_changed && target_fork)
      throw Error("--sharing", "", "the fork shares A's cache layout; change the sharing of A (it replays both)");
    if (mode == ApplyMode::FromNow && !sharing_changed) {
      s.set_policy(p);  // resolves before it changes anything: a bad budget leaves s as it was
      if (target_fork) note_fork_change(p);
      publish();
      return;
    }
    if (target_fork) return replay_fork(p);
    replay_a(p, sharing, mode == ApplyMode::FromNow);
  }

  // A again from the prompt under (p, sharing), to A's current row; the
  // fork (if any) is made again from the new A.
  void replay_a(const PolicyParams& p, const SharingLayout& sharing, bool forced) {
    SessionConfig c = merged_config();
    c.policy = p;
    c.sharing = sharing;
    c.policy_changes.clear();
    const int row = A->current_row();
    auto r = build(bundle, c, fork_cfg, row);
    if (!r) return note_canceled("replay");
    head = r->head;
    install(r->a, r->b, fork_cfg);
    set_message((forced ? "the sharing layout changed, so the run was replayed from the prompt to step "
                        : "replayed from the prompt to step ") +
                std::to_string(r->a->current_row()));
  }

  // A fork block holds one policy from at_step + 1 on: a change of B at
  // its fork point is that policy; a later one a saved session cannot hold.
  void note_fork_change(const PolicyParams& p) {
    if (!fork_cfg) return;
    if (B->current_row() == fork_cfg->at_step) {
      fork_cfg->policy = p;
      return;
    }
    set_message("the fork's new policy applies from step " + std::to_string(B->current_row() + 1) +
                "; a saved or exported session keeps the fork's policy from step " +
                std::to_string(fork_cfg->at_step + 1) + " (apply with Replay to make it the fork's policy)");
  }

  // B again from its fork point under p, to A's current row.
  void replay_fork(const PolicyParams& p) {
    const int at = fork_cfg ? fork_cfg->at_step : B->current_row();
    set_task("replay the fork", 0);
    std::shared_ptr<Session> b = branch(*A, at, p);
    if (!b || !advance(*b, nullptr, A->current_row(), at, A->current_row())) return note_canceled("replay of the fork");
    install(A, b, ForkConfig{at, p});
  }

  void do_fork(const PolicyParams& p, std::optional<int> at_row) {
    if (!A) throw Error("fork", "", "no session is open");
    const int at = std::clamp(at_row.value_or(A->current_row()), 0, A->current_row());
    set_task("fork at step " + std::to_string(at), 0);
    std::shared_ptr<Session> b = branch(*A, at, p);
    if (!b) return note_canceled("fork");
    // A fork made at an earlier step catches up with A.
    if (!advance(*b, nullptr, A->current_row(), at, A->current_row())) return note_canceled("fork");
    install(A, b, ForkConfig{at, p});
  }

  void do_drop_fork() { install(A, nullptr, std::nullopt); }

  void do_full_reference(int layer) {
    if (!A) throw Error("full reference", "", "no session is open");
    SessionConfig c = without_fork(A->config());
    c.policy = PolicyParams{};
    c.policy_changes.clear();
    c.prompt_ids.assign(A->tokens().begin(), A->tokens().begin() + A->prompt_length());
    c.continuation_ids = A->generated();
    c.continuation.reset();
    c.max_new_tokens = static_cast<int>(c.continuation_ids.size());
    c.recording.layers = {layer};
    c.recording.metrics = false;
    set_task("full-cache reference of layer " + std::to_string(layer), 0);
    Session ref(bundle, c);
    ref.prefill();
    if (!advance(ref, nullptr, ref.planned_new_tokens(), 0, ref.planned_new_tokens()))
      return note_canceled("full-cache reference");
    publish_full_reference(ref, layer);
  }

  // The reference's rows laid out over A's positions (A plans more
  // positions than it has generated so far).
  void publish_full_reference(const Session& ref, int layer) {
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

  void do_fill_layer(int layer) {
    if (!A) throw Error("layer", "", "no session is open");
    set_task("replay layer " + std::to_string(layer));
    auto a = std::make_shared<const std::vector<float>>(A->layer_attention(layer));
    auto b = B ? std::make_shared<const std::vector<float>>(B->layer_attention(layer)) : nullptr;
    std::lock_guard lk(mu);
    filled[{layer, false}] = std::move(a);
    if (b) filled[{layer, true}] = std::move(b);
  }

  void do_export(const std::filesystem::path& dir, int layer, int head_, const FigureExportOptions& figures) {
    if (!A) throw Error("export", "", "no session is open");
    set_task("export to " + dir.string());
    std::vector<std::filesystem::path> written;
    for (const auto& f : export_session(*A, dir)) written.push_back(dir / f);
    rewrite_session_json(dir / "session.json", merged_config());
    if (B)
      for (const auto& f : export_session(*B, dir / "fork")) written.push_back(dir / "fork" / f);
    for (const auto& f : export_view(*A, layer, head_, dir, figures)) written.push_back(f);
    {
      std::lock_guard lk(mu);
      status.last_export = written;
    }
    set_message("exported " + std::to_string(written.size()) + " files to " + dir.string());
  }

  void do_save(const std::filesystem::path& file, const std::optional<ViewConfig>& view) {
    if (!A) throw Error("save", "", "no session is open");
    SessionConfig c = merged_config();
    if (view) c.view = *view;
    c.save(file);
    set_message("saved " + file.string());
  }
};

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
