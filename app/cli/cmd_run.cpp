// kvscope-cli run SESSION [--export DIR]: a session file, headless — the
// same run the window would make, with the same exports.
#include <cstdio>

#include "cli_common.h"
#include "common/error.h"
#include "session_runner.h"

namespace kvscope::cli {
namespace {

struct RunArgs {
  std::string session, export_dir;
  bool quiet = false;
};

void run_run(const RunArgs& a) {
  SessionConfig cfg = SessionConfig::load(a.session);
  // A relative model path in a session file is relative to that file.
  if (!cfg.model.empty() && std::filesystem::path(cfg.model).is_relative()) {
    const auto beside = std::filesystem::path(a.session).parent_path() / cfg.model;
    std::error_code ec;
    if (std::filesystem::exists(beside, ec)) cfg.model = beside.string();
  }
  resolve_device(cfg.device);
  Session s(bundle_for(cfg.model), cfg);
  run_session(s, !a.quiet, a.export_dir);
}

}  // namespace

void register_run(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "Run a session file (JSON) and optionally export everything");
  cmd->add_option("session", args->session, "Session JSON file")->required();
  cmd->add_option("--export", args->export_dir, "Export directory");
  cmd->add_flag("--quiet", args->quiet, "Do not print the text");
  cmd->callback([args] { run_run(*args); });
}

}  // namespace kvscope::cli
