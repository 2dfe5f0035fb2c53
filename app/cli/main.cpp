// kvscope-cli: the headless front end. Every subcommand runs the same engine
// the window uses; errors print as one line and exit non-zero.
#include <cstdio>
#include <exception>

#include "cli_common.h"
#include "common/error.h"

int main(int argc, char** argv) {
  CLI::App app{"kvscope-cli: run transformer checkpoints step by step and inspect their KV cache"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "kvscope-cli 0.1.0");
  kvscope::cli::register_inspect(app);
  kvscope::cli::register_tokenize(app);
  kvscope::cli::register_generate(app);
  kvscope::cli::register_score(app);
  kvscope::cli::register_logits(app);
  kvscope::cli::register_bench(app);
  kvscope::cli::register_run(app);
  kvscope::cli::register_eval(app);
  kvscope::cli::register_sweep(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const kvscope::Error& e) {
    std::fprintf(stderr, "kvscope-cli: error: %s\n", e.what());
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
