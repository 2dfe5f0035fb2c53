// Running a Session from the CLI: streaming its text to stdout, a summary
// line to stderr, and the export directory when asked for.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "io/output_folder.h"
#include "session/session.h"
#include "session/session_file.h"

namespace kvscope::cli {

// Runs to the end, printing the prompt and each new token's text as it
// comes (unless quiet); then exports into `export_to` when given. Ctrl-C
// stops it between steps with Interrupted saying that nothing was written.
void run_session(Session& s, bool print_text, OutputFolder* export_to);
// The export of a finished run (what run_session does when given a
// folder); with `fork` (B of a fork of s, already run) s's set also holds
// the figure comparing them.
void export_run(const Session& s, OutputFolder& to, const Session* fork = nullptr);

// One line of what the run did: device, tokens, KV bytes vs full, metrics.
std::string session_summary(const Session& s);

// A Session from a config built out of command-line flags: the engine names
// settings by their fields (export.layer, ...) in its errors; these become
// the flags the user typed (--export-layer, ...).
std::unique_ptr<Session> make_flag_session(std::shared_ptr<const ModelBundle> bundle, SessionConfig cfg);

// Before a run: the memory it was planned with (Session::memory_forecast)
// on stderr when it reaches kNoteRecordingBytes, and one note when the
// recorder's memory budget left layers out of the recording (they are
// replayed on demand). `budget_name` says where the budget came from (e.g.
// "s.json: recording.memory_mb").
constexpr double kNoteRecordingBytes = 256.0 * 1024 * 1024;
void note_recording(const Session& s, const std::string& budget_name);

}  // namespace kvscope::cli
