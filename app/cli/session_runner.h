// Running a Session from the CLI: streaming its text to stdout, a summary
// line to stderr, and the export directory when asked for.
#pragma once

#include <memory>
#include <string>

#include "session/session.h"

namespace kvscope::cli {

// Runs to the end, printing the prompt and each new token's text as it
// comes (unless quiet); then exports to `export_dir` when not empty.
void run_session(Session& s, bool print_text, const std::string& export_dir);

// One line of what the run did: device, tokens, KV bytes vs full, metrics.
std::string session_summary(const Session& s);

// Loads the session's model ("" = bundled default).
std::shared_ptr<const ModelBundle> bundle_for(const std::string& model);

}  // namespace kvscope::cli
