// kvscope-cli run SESSION [--export DIR]: a session file, headless — the
// same run the window would make, with the same exports (a fork block
// adds DIR/fork with the second configuration).
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "cli_common.h"
#include "cli_policy.h"
#include "common/error.h"
#include "session/fork_session.h"
#include "session_runner.h"

namespace kvscope::cli {
namespace {

struct RunArgs {
  std::string session, export_dir;
  bool quiet = false;
  FigureFlags figures;
  PolicyFlags policy;  // over the file's policy; only the flags typed
  std::optional<float> temperature, top_p;
  std::optional<int> top_k, max_new_tokens;
  std::optional<uint64_t> seed;
};

void run_run(const RunArgs& a) {
  std::unique_ptr<OpenOutput> out, fork_out;  // held to the end: the locks, the staging folders
  if (!a.export_dir.empty()) out = open_export_dir(a.export_dir);
  SessionFile f = load_session_file(a.session);
  if (out && f.cfg.fork) fork_out = open_export_dir((std::filesystem::path(a.export_dir) / "fork").string());
  apply_figure_flags(a.figures, f.cfg.export_opts);  // the flags override the file's export block
  override_policy_flags(a.policy, f.cfg);
  if (a.temperature) f.cfg.sampling.temperature = *a.temperature;
  if (a.top_k) f.cfg.sampling.top_k = *a.top_k;
  if (a.top_p) f.cfg.sampling.top_p = *a.top_p;
  if (a.max_new_tokens) {
    if (*a.max_new_tokens < 0) throw Error("--max-new-tokens", "", "must be >= 0");
    f.cfg.max_new_tokens = *a.max_new_tokens;
  }
  if (a.seed) f.cfg.seed = *a.seed;  // the Session keys every draw by it (policies, sampling, the fork)
  validate_sampling(f.cfg.sampling);
  Session s(f.bundle, f.cfg);  // its errors name the file and field (cfg.source)
  // A "fork" block is the window's second configuration B: the same run up
  // to fork.at_step, then fork.policy. Built (and checked against A, as the
  // window checks it) before any work so its errors come first; run as its
  // own session, which equals continuing a fork of A
  // (Fork.WithANewPolicyEqualsTheSessionFileFork).
  std::unique_ptr<Session> b;
  if (f.cfg.fork) b = fork_session_from_prompt(f.bundle, s);
  note_recording(s, a.session + ": recording.memory_mb");
  // With a fork, A is exported once B has run too: its set holds the
  // figure comparing the two (export_session's fork).
  run_session(s, !a.quiet, out && !b ? out->folder.get() : nullptr);
  if (b) {
    if (!a.quiet) std::printf("--- fork at step %d ---\n", f.cfg.fork->at_step);
    run_session(*b, !a.quiet, fork_out ? fork_out->folder.get() : nullptr);
    if (out) export_run(s, *out->folder, b.get());
  }
}

}  // namespace

void register_run(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "Run a session file (JSON) and optionally export everything");
  cmd->add_option("session", args->session, "Session JSON file")->required();
  cmd->add_option("--export", args->export_dir, "Export directory")->check(nonempty_dir_name());
  cmd->add_flag("--quiet", args->quiet, "Do not print the text");
  add_figure_flags(*cmd, args->figures);
  add_heatmap_flags(*cmd, args->figures, /*over_file=*/true);
  // generate's policy and sampling flags, over the file's settings.
  add_policy_flags(*cmd, args->policy, /*with_export=*/false);
  mark_policy_flags_over_file(args->policy);  // --help shows no defaults the run would not use
  cmd->add_option("--temperature", args->temperature, "Sampling temperature (0 = greedy), over the file's");
  cmd->add_option("--top-k", args->top_k, "Keep the k most likely tokens (0 = all), over the file's");
  cmd->add_option("--top-p", args->top_p, "Nucleus sampling mass, over the file's");
  cmd->add_option("--max-new-tokens", args->max_new_tokens, "Tokens to generate, over the file's");
  cmd->add_option("--seed", args->seed, "Seed of every random draw, over the file's");
  cmd->callback([args] { run_run(*args); });
}

}  // namespace kvscope::cli
