// What the worker's commands do to the sessions, on the worker thread
// (engine_worker.cpp runs them, one at a time, and owns the locking): open
// a model or a session file, step, play, replay from a scrubbed row, reset,
// apply a policy, fork, the full-cache reference, replayed layers, export
// and save. A command builds its new sessions aside and installs them only
// when it finishes, so a failed or cancelled command leaves A and B as
// they were. The fork itself is built by the engine (session/fork_session.h),
// as for `kvscope-cli run`.
#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "engine_worker_impl.h"
#include "error_words.h"
#include "io/atomic_file.h"
#include "io/json_file.h"
#include "reports/exporter.h"
#include "reports/provenance.h"
#include "session/fork_session.h"

namespace kvscope::gui {
namespace {

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// A session's settings without a fork block: the worker keeps the fork
// itself (it is a relation between A and B, not a setting of either).
SessionConfig without_fork(SessionConfig c) {
  c.fork.reset();
  return c;
}

// Rewrites an exported session.json with `cfg`, keeping the exporter's
// "resolved" and "provenance" blocks; untouched when nothing differs, so the
// file stays byte-identical to the CLI's (but for the command line).
void rewrite_session_json(const std::filesystem::path& file, const SessionConfig& cfg) {
  std::ifstream in(file);
  const nlohmann::json written = nlohmann::json::parse(in);
  nlohmann::json j = cfg.to_json();
  for (const char* kept : {"resolved", "provenance"})
    if (written.contains(kept)) j[kept] = written[kept];
  if (j == written) return;
  write_text_file(file, json_text(j) + "\n");
}

}  // namespace

// ------------------------------------------------------------------ stepping
// One step of A and B (each while it has steps left). False when neither
// could step.
bool EngineWorker::Impl::step_pair(Session& a, Session* b, double* ms_a, double* ms_b) {
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

// Steps a and b (not yet published) until both reach `row` or end;
// false when cancelled. `done` counts steps already taken of `total`.
bool EngineWorker::Impl::advance(Session& a, Session* b, int row, int done, int total) {
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

// B = A's settings up to `at_row`, then policy p (session/fork_session.h);
// nullptr when cancelled.
std::shared_ptr<Session> EngineWorker::Impl::branch(Session& a, int at_row, const PolicyParams& p) {
  return branch_session(a, at_row, p, progress_to(at_row));
}

// A from `cfg`, prefilled, with B forked at fork->at_step, both run to
// `target` (-1: to the end). Nothing installed; empty when cancelled.
std::optional<EngineWorker::Impl::Built> EngineWorker::Impl::build(std::shared_ptr<const ModelBundle> model,
                                                                   const SessionConfig& cfg,
                                                                   const std::optional<ForkConfig>& fork, int target) {
  Built r;
  set_task("prefill");
  r.a = std::make_shared<Session>(std::move(model), without_fork(cfg));
  r.a->prefill();
  r.head = informative_head(*r.a);
  if (target < 0) target = r.a->planned_new_tokens();
  if (fork) {
    check_fork(*r.a, fork->at_step, fork->policy);  // before running to it
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

bool EngineWorker::Impl::play_tick() {
  if (!A) return false;
  double ms_a = 0, ms_b = 0;
  if (!step_pair(*A, B.get(), &ms_a, &ms_b)) return false;
  const bool more = !A->finished() || (B && !B->finished());
  // Only fast play skips snapshots: at a few steps a second each is shown.
  publish_step(ms_a, ms_b, more && play_fast);
  return more;
}

// ------------------------------------------------------------------ commands
void EngineWorker::Impl::no_session(const char* command) const {
  throw Error(
      command, "",
      open_failure.empty() ? "no session is open" : "no session is open (opening failed: " + open_failure + ")");
}

template <class F>
void EngineWorker::Impl::remembering_open_failure(F&& open) {
  try {
    open();
    open_failure.clear();
  } catch (const Error& e) {
    open_failure = in_window_words(e);
    throw;
  } catch (const std::exception& e) {
    open_failure = e.what();
    throw;
  }
}

void EngineWorker::Impl::do_open(SessionConfig cfg) {
  remembering_open_failure([&] { open_now(std::move(cfg)); });
}

void EngineWorker::Impl::do_open_file(const std::filesystem::path& path, int steps) {
  remembering_open_failure([&] { open_file_now(path, steps); });
}

void EngineWorker::Impl::open_now(SessionConfig cfg) {
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

void EngineWorker::Impl::open_file_now(const std::filesystem::path& path, int steps) {
  SessionFile f = load_session_file(path.string());
  const int target = steps >= 0 ? steps : f.cfg.view.step.value_or(-1);
  auto r = build(f.bundle, f.cfg, f.cfg.fork, target);
  if (!r) return note_canceled("open " + path.string());
  bundle = f.bundle;
  bundle_path = f.cfg.model;
  head = r->head;
  install(r->a, r->b, f.cfg.fork);
}

void EngineWorker::Impl::do_step(int n) {
  if (!A) no_session("step");
  set_task(n == 1 ? "step" : "run " + std::to_string(n) + " steps", 0);
  for (int i = 0; i < n; ++i) {
    if (canceled()) return;
    double ms_a = 0, ms_b = 0;
    if (!step_pair(*A, B.get(), &ms_a, &ms_b)) break;
    publish_step(ms_a, ms_b, i + 1 < n);
    set_progress(double(i + 1) / n);
  }
}

void EngineWorker::Impl::do_step_from(int row, int n) {
  if (!A) no_session("step");
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

void EngineWorker::Impl::do_reset() {
  if (!A) return;
  const bool had_changes = !A->config().policy_changes.empty();
  set_task("reset", 0);
  std::shared_ptr<Session> a = A->replay_to(0, progress_to(0));
  if (!a) return note_canceled("reset");
  install(a, nullptr, std::nullopt);
  set_message(had_changes ? "reset to the prompt; the policy changes made during the run were dropped"
                          : "reset to the prompt");
}

void EngineWorker::Impl::do_apply(const PolicyParams& p, const SharingLayout& sharing, ApplyMode mode,
                                  bool target_fork) {
  if (!A) no_session("apply");
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
void EngineWorker::Impl::replay_a(const PolicyParams& p, const SharingLayout& sharing, bool forced) {
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
void EngineWorker::Impl::note_fork_change(const PolicyParams& p) {
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
void EngineWorker::Impl::replay_fork(const PolicyParams& p) {
  const int at = fork_cfg ? fork_cfg->at_step : B->current_row();
  set_task("replay the fork", 0);
  std::shared_ptr<Session> b = branch(*A, at, p);
  if (!b || !advance(*b, nullptr, A->current_row(), at, A->current_row())) return note_canceled("replay of the fork");
  install(A, b, ForkConfig{at, p});
}

void EngineWorker::Impl::do_fork(const PolicyParams& p, std::optional<int> at_row) {
  if (!A) no_session("fork");
  const int at = std::clamp(at_row.value_or(A->current_row()), 0, A->current_row());
  set_task("fork at step " + std::to_string(at), 0);
  std::shared_ptr<Session> b = branch(*A, at, p);
  if (!b) return note_canceled("fork");
  // A fork made at an earlier step catches up with A.
  if (!advance(*b, nullptr, A->current_row(), at, A->current_row())) return note_canceled("fork");
  install(A, b, ForkConfig{at, p});
}

void EngineWorker::Impl::do_drop_fork() { install(A, nullptr, std::nullopt); }

void EngineWorker::Impl::do_full_reference(int layer) {
  if (!A) no_session("full reference");
  SessionConfig c = without_fork(A->config());
  c.policy = PolicyParams{};
  c.policy_changes.clear();
  c.prompt_ids.assign(A->tokens().begin(), A->tokens().begin() + A->prompt_length());
  c.continuation_ids = A->generated();
  c.continuation.reset();
  c.max_new_tokens = static_cast<int>(c.continuation_ids.size());
  c.recording.layers = {layer};
  c.recording.heads.clear();  // the reference shows every head of the layer
  c.recording.metrics = false;
  set_task("full-cache reference of layer " + std::to_string(layer), 0);
  Session ref(bundle, c);
  ref.prefill();
  if (!advance(ref, nullptr, ref.planned_new_tokens(), 0, ref.planned_new_tokens()))
    return note_canceled("full-cache reference");
  publish_full_reference(ref, layer);
}

void EngineWorker::Impl::do_fill_layer(int layer) {
  if (!A) no_session("layer");
  set_task("replay layer " + std::to_string(layer));
  auto a = std::make_shared<const std::vector<float>>(A->layer_attention(layer));
  auto b = B ? std::make_shared<const std::vector<float>>(B->layer_attention(layer)) : nullptr;
  publish_filled_layer(layer, std::move(a), std::move(b));
}

void EngineWorker::Impl::do_export(const std::filesystem::path& dir, int layer, int head_,
                                   const FigureExportOptions& figures) {
  if (!A) no_session("export");
  set_task("export to " + dir.string());
  const ProvenanceAction action("export to " + dir.string());  // the files' command line
  // The rule of every export (reports/exporter.h): only the files of an
  // earlier export are replaced, a file of the user's in the way is refused
  // (the error shows in the window), one export to a folder at a time. Both
  // folders are opened (locked, checked) before anything is written.
  const auto a_folder = open_export_folder(dir);
  const auto b_folder = B ? open_export_folder(dir / "fork") : nullptr;
  // The session file with the window's changes and the current view's
  // figures belong to the set: staged with it, listed by its manifest.
  // One export is one head: the CSV twins, the figures and the view's
  // figure all of (layer, head_), in the formats the window chose (the
  // session's own export block would name another head, or none: the
  // informative one for figures and L0 H0 for CSVs, in one folder).
  ExportConfig eo = A->config().export_opts;
  eo.layer = layer;
  eo.head = head_;
  eo.heatmaps.clear();
  eo.formats.clear();
  for (FigureFormat f : figures.output.formats)
    if (std::find(eo.formats.begin(), eo.formats.end(), figure_format_name(f)) == eo.formats.end())
      eo.formats.push_back(figure_format_name(f));
  if (eo.formats.empty()) eo.formats = {"png"};
  // Drawn as the view draws them, A's figures and B's alike, and recorded
  // so: the exported session.json reruns to the same pictures.
  eo.colormap = figures.colormap;
  eo.scale = figures.scale == ScaleKind::log ? "log" : "linear";
  eo.range = figures.range.str();
  eo.evicted = evicted_style_name(figures.evicted);
  SessionConfig merged = merged_config();
  merged.export_opts = eo;  // the exported session.json reruns to the same files
  auto extra = [&](const std::filesystem::path& staging) {
    rewrite_session_json(staging / "session.json", merged);
    std::vector<std::string> names{"session.json"};
    for (const auto& f : export_view(*A, layer, head_, staging, figures)) names.push_back(f.filename().string());
    return names;
  };
  std::vector<std::filesystem::path> written;
  // With a fork, A's set also holds the figure comparing them (the view's third panel).
  for (const auto& f : export_session(*A, *a_folder, extra, &eo, B.get())) written.push_back(dir / f);
  if (B)
    for (const auto& f : export_session(*B, *b_folder, {}, &eo)) written.push_back(dir / "fork" / f);
  const std::size_t count = written.size();
  set_last_export(std::move(written));
  set_message("exported layer " + std::to_string(layer) + ", head " + std::to_string(head_) + ": " +
              std::to_string(count) + " files to " + dir.string());
}

void EngineWorker::Impl::do_save(const std::filesystem::path& file, const std::optional<ViewConfig>& view) {
  if (!A) no_session("save");
  // An export's session.json belongs to the export (the next export
  // replaces it, the manifest vouches for it): never save over it.
  if (is_export_session_file(file))
    throw Error(file.string(), "",
                "is the session file of an export (listed in its manifest.json); the next export would replace it: "
                "save the session under another name or folder");
  SessionConfig c = merged_config();
  if (view) c.view = *view;
  const ProvenanceAction action("save session " + file.string());
  nlohmann::json j = c.to_json();
  j["provenance"] = to_json(session_provenance(*A));
  write_text_file(file, json_text(j) + "\n");
  set_message("saved " + file.string());
}

}  // namespace kvscope::gui
