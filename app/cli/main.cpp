// kvscope-cli: the headless front end. Every subcommand runs the same engine
// the window uses; errors print as one line and exit non-zero.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "backend/parallel.h"
#include "cli_common.h"
#include "common/build_info.h"
#include "common/error.h"
#include "reports/provenance.h"

int main(int argc, char** argv) {
  CLI::App app{"kvscope-cli: run transformer checkpoints step by step and inspect their KV cache"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("kvscope-cli ") + kvscope::kvscope_version() + " (commit " +
                                        kvscope::kvscope_commit() + ")");
  // Every file this run writes for a reader records the command that made it.
  kvscope::set_command_line(argc, argv);
  // --threads N, before or after the command word (subcommands pass what
  // they do not know up to here): the CPU backend's threads. The pool is
  // sized once, so the value is taken from the arguments before anything
  // runs (as KVSCOPE_THREADS, which it overrides).
  int threads = 0;
  app.add_option(
      "--threads", threads,
      "Threads of the CPU backend, 1 to 64 (default: KVSCOPE_THREADS, else every core this process may use)");
  app.fallthrough();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    std::string value;
    if (a == "--threads" && i + 1 < argc) value = argv[i + 1];
    else if (a.rfind("--threads=", 0) == 0) value = a.substr(10);
    else continue;
    char* end = nullptr;
    const long v = std::strtol(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || v < 1 || v > 64) {
      std::fprintf(stderr, "kvscope-cli: error: --threads: expected a thread count from 1 to 64, got '%s'\n",
                   value.c_str());
      return 1;
    }
    setenv("KVSCOPE_THREADS", value.c_str(), 1);
    kvscope::mark_pool_threads_source("--threads");
  }
  // A bad KVSCOPE_THREADS is refused now, before a command prints anything
  // (the pool reads it when first used, which may be after the prompt).
  if (std::getenv("KVSCOPE_THREADS")) {
    try {
      kvscope::pool_threads();
    } catch (const kvscope::Error& e) {
      std::fprintf(stderr, "kvscope-cli: error: %s\n", e.what());
      return 1;
    }
  }
  // Under a file-size limit (ulimit -f) a write past it would kill the
  // process with SIGXFSZ, leaving a half-written staging folder; ignored,
  // the write fails with EFBIG and the output's own error path removes
  // everything it started (docs/exports.md).
  std::signal(SIGXFSZ, SIG_IGN);
  kvscope::cli::register_inspect(app);
  kvscope::cli::register_tokenize(app);
  kvscope::cli::register_generate(app);
  kvscope::cli::register_score(app);
  kvscope::cli::register_logits(app);
  kvscope::cli::register_bench(app);
  kvscope::cli::register_run(app);
  kvscope::cli::register_eval(app);
  kvscope::cli::register_sweep(app);
  kvscope::cli::register_sweep_merge(app);
  kvscope::cli::register_cpu(app);
  kvscope::cli::register_policies(app);
  // An unknown command word: CLI11 would only say that a subcommand is required.
  if (argc > 1 && argv[1][0] != '-' &&
      app.get_subcommands([&](const CLI::App* c) { return c->check_name(argv[1]); }).empty()) {
    std::string known;
    for (const CLI::App* c : app.get_subcommands([](const CLI::App*) { return true; }))
      known += (known.empty() ? "" : ", ") + c->get_name();
    std::fprintf(stderr, "kvscope-cli: error: unknown command '%s' (choose from %s)\n", argv[1], known.c_str());
    return 1;
  }
  // CLI11 reads "--text=" (an empty value) as a flag with its value still
  // to come and takes the next argument as the text ("--text= --json" would
  // tokenize "--json"). Split it into "--text" "": an empty value, as the
  // user wrote. CLI11 takes the arguments last first.
  std::vector<std::string> args;
  for (int i = argc - 1; i >= 1; --i) {
    const std::string a = argv[i];
    if (a.size() > 3 && a.compare(0, 2, "--") == 0 && a.back() == '=' && a.find('=') == a.size() - 1) {
      args.push_back("");
      args.push_back(a.substr(0, a.size() - 1));
    } else {
      args.push_back(a);
    }
  }
  app.name("kvscope-cli");
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    // --help and --version: CLI11 prints them and exits 0.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    // Any other parse error: one line and status 1, like every other error.
    std::string m = e.what();
    for (char& c : m)
      if (c == '\n' || c == '\r') c = ' ';
    std::fprintf(stderr, "kvscope-cli: error: %s (see --help)\n", m.c_str());
    return 1;
  } catch (const kvscope::cli::Interrupted& e) {
    std::fprintf(stderr, "kvscope-cli: interrupted: %s\n", e.what());
    return 128 + (kvscope::interrupt_signal() ? kvscope::interrupt_signal() : SIGINT);
  } catch (const kvscope::Error& e) {
    // The engine names settings by their field; here they are flags.
    std::fprintf(stderr, "kvscope-cli: error: %s\n", kvscope::cli::for_command_line(e).what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "kvscope-cli: error: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kvscope-cli: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
