// The thread that owns the sessions. The UI posts commands (open, step,
// play, apply, fork, replay, export, ...) and reads what was published;
// it never waits on the engine. Bad input (a model that fails to load, a
// malformed session file, an impossible budget) becomes an error message
// and leaves the sessions as they were.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "published_run.h"
#include "reports/figure_export.h"
#include "session/session_file.h"

namespace kvscope::gui {

// How a changed setting takes effect (the user chooses).
enum class ApplyMode {
  FromNow,  // Session::set_policy: the next step on; the past stays as it was
  Replay,   // the whole run again from the prompt with the new settings, to the same step
};

// The attention of one layer under a full cache along A's tokens, for the
// "difference against the full cache" view: a teacher-forced full-cache
// session on exactly the tokens A saw. [rows][heads][positions].
struct FullReference {
  uint64_t generation = 0;  // A's generation it was computed for
  int layer = 0, rows = 0, heads = 0, positions = 0;
  std::vector<float> attention;
};

struct WorkerStatus {
  bool busy = false;         // a command is running
  std::string task;          // "prefill", "replay to step 40", "export", ...
  double progress = -1;      // 0..1 when known, else -1
  bool playing = false;
  double play_steps_per_s = 8;
  std::string error;         // the last error's one-line message ("" = none)
  uint64_t error_serial = 0; // bumps with every new error, so the UI shows each one
  std::string message;       // the last informational message (e.g. "continued from step 12: 20 later steps dropped")
  uint64_t message_serial = 0;
  std::vector<std::filesystem::path> last_export;  // files the last export wrote
};

class EngineWorker {
 public:
  EngineWorker();
  ~EngineWorker();  // cancels and joins

  // --- commands (return at once; run in order on the worker) ---
  // Builds a new session A from `cfg` (model "" = bundled), prefills it and
  // drops any fork. On error A stays as it was.
  void open(SessionConfig cfg);
  // A session file (kvscope::load_session_file): its fork block (if any)
  // makes B at fork.at_step, and the session then runs `steps` steps (or to
  // the file's view.step when steps < 0).
  void open_file(const std::filesystem::path& path, int steps = -1);
  void step(int n = 1);       // A and B (when forked) together; a step from a scrubbed row `from_row` < A's rows-1 first replays to it
  void step_from(int from_row, int n = 1);
  void play(bool on);
  void set_play_speed(double steps_per_s);
  void reset();               // A again from its prompt (row 0), fork dropped
  // New policy for A (or for B when `target_fork`), by `mode`. A sharing
  // change always replays (the cache layout changes).
  void apply(PolicyParams p, SharingLayout sharing, ApplyMode mode, bool target_fork = false);
  // B = A.fork() at A's current row (or at `at_row` < current: a replay to
  // it first), then B.set_policy(p).
  void fork(PolicyParams p, std::optional<int> at_row = std::nullopt);
  void drop_fork();
  // The full-cache attention of `layer` along A's tokens (published in full_reference()).
  void request_full_reference(int layer);
  // Fills in the attention of a layer the recorder did not keep (replay).
  void fill_layer(int layer);
  // Everything the CLI's `run --export DIR` writes, from the same exporter
  // (and DIR/fork for B), plus the current view's figures (figure_export's
  // export_view) for (layer, head).
  void export_all(std::filesystem::path dir, int layer, int head, FigureExportOptions figures);
  // The current session (fork block included) as a session file; `view`,
  // when given, replaces the session's view block (what the window shows now).
  void save_session(std::filesystem::path file, std::optional<ViewConfig> view = std::nullopt);
  void cancel();              // stops the running command (a replay, a run of N steps, play)

  // --- reading (any thread; cheap) ---
  // A snapshot follows every step; while a run of steps or fast play goes
  // on, at most one per 10 ms (a frame), and always one after the last.
  std::shared_ptr<const PublishedRun> a() const;
  std::shared_ptr<const PublishedRun> b() const;  // nullptr without a fork
  std::shared_ptr<const FullReference> full_reference() const;
  WorkerStatus status() const;
  // Replayed attention of a layer the recorder did not keep, when filled.
  std::shared_ptr<const std::vector<float>> filled_layer(int layer, bool fork) const;
  bool idle() const;  // nothing queued, nothing running, not playing (for --exit and tests)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvscope::gui
