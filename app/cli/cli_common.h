// What every kvscope-cli subcommand shares: the model argument, the device
// flag, and turning engine errors into one line and a non-zero exit.
#pragma once

#include "common/error.h"

#include <CLI/CLI.hpp>

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "bundle/model_bundle.h"
#include "io/interrupt.h"
#include "io/output_folder.h"
#include "session/session_file.h"

namespace kvscope::cli {

// MODEL (optional positional; the bundled default model when left out).
void add_model_arg(CLI::App& cmd, std::string& model);
// --device cpu|cuda|auto.
void add_device_opt(CLI::App& cmd, std::string& device);
// --weights stored|f32|f16 (the CPU backend's matrices), for commands without the
// policy flags (which carry it).
void add_weights_opt(CLI::App& cmd, std::string& weights);

// Tokens of a prompt; throws when longer than the model's maximum positions
// (leaving room for `extra` new tokens).
std::vector<int> encode_prompt(const ModelBundle& b, const std::string& text, int extra, const std::string& flag);

// An output directory given with `flag` (--export, --out): checked before
// any work, creating nothing. It must be a non-empty name of an existing
// writable directory, or of one that can be created (its nearest existing
// ancestor a writable directory). Throws kvscope::Error naming the flag.
void check_output_dir(const std::string& dir, const std::string& flag);
// --export DIR, opened before any work and held to the end: check_output_dir,
// then the folder locked and checked (reports/exporter.h: a file of the
// user's whose name the export would write is refused; the user's other
// files stay), with Ctrl-C and SIGTERM caught while it is open so that an
// interrupted run leaves nothing (io/interrupt.h). A stale lock taken over
// is noted on stderr. Errors name `flag`.
struct OpenOutput {
  InterruptScope interrupts;  // declared first: caught until the folder is cleaned up
  std::unique_ptr<OutputFolder> folder;
};
std::unique_ptr<OpenOutput> open_export_dir(const std::string& dir, const std::string& flag = "--export");
// CLI11 check for such a flag: an empty name is a parse error.
CLI::Validator nonempty_dir_name();
// Creates it (once the settings are validated, before the run).
void create_output_dir(const std::string& dir, const std::string& flag);

// The whole of a text file that `flag` names (--prompt-file, --text-file);
// throws "<path>: cannot open <flag>".
std::string read_text_file(const std::string& path, const std::string& flag);

// The flag that sets an engine setting ("policy.budget" -> "--budget",
// "sampling.top_p" -> "--top-p"); "" for a field no flag sets.
std::string flag_for_field(const std::string& field);
// An engine error about a setting, worded for the command line: its field
// named by the flag that sets it. Other errors are returned as they are.
Error for_command_line(const Error& e);

// Ctrl-C honoured between units of work (decoding steps, exported files,
// sweep cells): main prints the message (what was kept) and exits 130,
// the shell's status for SIGINT (143 for SIGTERM).
using Interrupted = kvscope::Interrupted;

// Printable form of a token piece: control bytes and newlines escaped.
std::string escape(std::string_view s);

// Registration of each subcommand (cmd_*.cpp).
void register_inspect(CLI::App& app);
void register_tokenize(CLI::App& app);
void register_generate(CLI::App& app);
void register_score(CLI::App& app);
void register_logits(CLI::App& app);
void register_bench(CLI::App& app);
void register_run(CLI::App& app);
void register_eval(CLI::App& app);
void register_sweep(CLI::App& app);
void register_sweep_merge(CLI::App& app);
void register_cpu(CLI::App& app);
void register_policies(CLI::App& app);

}  // namespace kvscope::cli
