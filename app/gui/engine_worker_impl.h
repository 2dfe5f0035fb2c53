// EngineWorker's insides, shared by its two halves: engine_worker.cpp (the
// thread, the command queue, the status and the publishing of snapshots:
// the threading contract is written there) and engine_worker_commands.cpp
// (what each command does to the sessions). Private to those two files.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "engine_worker.h"
#include "reports/informative_head.h"

namespace kvscope::gui {

using Clock = std::chrono::steady_clock;

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
  // Why the last open failed ("" once one succeeds): a step or an export
  // asked for while no session is open says it, rather than only that
  // nothing is open (a scripted --steps after a refused prompt).
  std::string open_failure;
  [[noreturn]] void no_session(const char* command) const;
  template <class F>
  void remembering_open_failure(F&& open);
  uint64_t gen_a = 0, gen_b = 0, last_gen = 0;
  std::optional<ForkConfig> fork_cfg;
  HeadChoice head;
  Clock::time_point next_tick = Clock::now();
  bool play_fast = false;               // play's ticks come faster than frames
  std::atomic<bool> dirty{false};       // A or B stepped since the last snapshot (idle() reads it)
  Clock::time_point last_publish;
  double last_ms_a = 0, last_ms_b = 0;  // step times of the unpublished step
  std::thread thread;

  Impl();
  ~Impl();  // stops, cancels and joins

  // ---- engine_worker.cpp: the queue, the status, publishing
  void post(std::string task, std::function<void()> fn);
  void loop();
  // Errors never leave the thread: they become the status line, and play
  // stops (a failing step would fail again on the next tick).
  void guarded(const std::function<void()>& fn);

  bool canceled() const { return cancel_epoch.load() != epoch; }
  void set_error(const std::string& msg);
  void set_message(const std::string& msg);
  void set_task(const std::string& task, double progress = -1);
  void set_progress(double p);
  // A progress callback for Session::replay_to: rows done of `target`,
  // false (stop) once cancelled.
  std::function<bool(int)> progress_to(int target);
  void note_canceled(const std::string& what) { set_message(what + " canceled; nothing changed"); }

  // A's settings as they would be saved: the session's own plus the fork.
  SessionConfig merged_config() const;
  // `prev`: the last snapshot of this side, whose token texts are reused
  // when it is of the same session (positions only ever get appended).
  std::shared_ptr<const PublishedRun> snapshot(const std::shared_ptr<Session>& s, uint64_t gen, double ms,
                                               SessionConfig cfg, const PublishedRun* prev) const;
  // Step times < 0: the last ones measured (a new session opened by
  // stepping keeps showing what its steps cost).
  void publish(double ms_a = -1, double ms_b = -1);
  // After a step: published unless the last snapshot is younger than a
  // frame and more steps follow at once (flush() publishes what is left).
  void publish_step(double ms_a, double ms_b, bool more_follow);
  void flush();
  // Installs a new A (and B), each a new generation, and publishes.
  void install(std::shared_ptr<Session> a, std::shared_ptr<Session> b, std::optional<ForkConfig> fork);
  // The full-cache reference of `layer` laid out over A's positions.
  void publish_full_reference(const Session& ref, int layer);
  // A layer's replayed attention for A (and B when forked).
  void publish_filled_layer(int layer, std::shared_ptr<const std::vector<float>> a,
                            std::shared_ptr<const std::vector<float>> b);
  void set_last_export(std::vector<std::filesystem::path> files);

  // ---- engine_worker_commands.cpp: stepping and the commands
  bool step_pair(Session& a, Session* b, double* ms_a = nullptr, double* ms_b = nullptr);
  bool below(const Session& s, int row) const { return !s.finished() && s.current_row() < row; }
  bool advance(Session& a, Session* b, int row, int done, int total);
  std::shared_ptr<Session> branch(Session& a, int at_row, const PolicyParams& p);
  struct Built {
    std::shared_ptr<Session> a, b;
    HeadChoice head;
  };
  std::optional<Built> build(std::shared_ptr<const ModelBundle> model, const SessionConfig& cfg,
                             const std::optional<ForkConfig>& fork, int target);
  bool play_tick();

  void do_open(SessionConfig cfg);
  void do_open_file(const std::filesystem::path& path, int steps);
  void open_now(SessionConfig cfg);
  void open_file_now(const std::filesystem::path& path, int steps);
  void do_step(int n);
  void do_step_from(int row, int n);
  void do_reset();
  void do_apply(const PolicyParams& p, const SharingLayout& sharing, ApplyMode mode, bool target_fork);
  void replay_a(const PolicyParams& p, const SharingLayout& sharing, bool forced);
  void note_fork_change(const PolicyParams& p);
  void replay_fork(const PolicyParams& p);
  void do_fork(const PolicyParams& p, std::optional<int> at_row);
  void do_drop_fork();
  void do_full_reference(int layer);
  void do_fill_layer(int layer);
  void do_export(const std::filesystem::path& dir, int layer, int head_, const FigureExportOptions& figures);
  void do_save(const std::filesystem::path& file, const std::optional<ViewConfig>& view);
};

}  // namespace kvscope::gui
