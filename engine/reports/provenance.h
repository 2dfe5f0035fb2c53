// What made an output. Every file kvscope writes for a reader records it —
// the export's manifest.json and session.json, a session the window saves,
// a sweep's sweep.provenance.json, and every figure (PNG text chunk, SVG
// <metadata>, PDF Subject) — built here and only here, so no writer formats
// these fields on its own (docs/exports.md, "Provenance"). It holds no time
// stamp: the same command run again writes the same bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/figure_metadata.h"

namespace kvscope {

class Session;
struct ModelBundle;
struct SessionConfig;

struct ModelFileDigest {
  std::string name;    // file name inside the model folder, or the .gguf's name
  std::string sha256;  // io/file_hash.h: computed once per file version, then cached
  uint64_t bytes = 0;
};

struct Provenance {
  std::string version;  // common/build_info.h
  std::string commit;
  std::string command_line;                  // argv shell-quoted, or the window's "kvscope (window): export to DIR"
  std::string model;                         // a name a reader recognises: the .gguf's or the folder's name
  std::string model_path;                    // absolute path the model was read from
  std::vector<ModelFileDigest> model_files;  // the weights (every shard) and tokenizer.json
  std::string config_sha256;                 // of the model configuration as kvscope read it (model_config_identity)
  nlohmann::json policy;                     // the policy with its parameters (see the builders)
  std::string backend;                       // Backend::name(): "cpu", "cuda: NVIDIA H100 80GB HBM3"
  std::string cpu;                           // cpu_description(): model name, vendor, family, model
  int threads = 1;                           // the CPU backend's threads
};

nlohmann::json to_json(const Provenance& p);
// to_json's inverse (a sweep's shard files carry their provenance); throws
// nlohmann::json::exception for a JSON that is not one.
Provenance provenance_from_json(const nlohmann::json& j);
// A figure's metadata: "kvscope VERSION (COMMIT)" and the JSON on one line.
FigureMetadata figure_metadata(const Provenance& p);

// A finished (or paused) session: its policy as set ("settings", the
// session file's words), the one in effect at the end ("in_effect",
// policy_summary) and its changes during the run.
Provenance session_provenance(const Session& s);
// Outputs made from several sessions of one model (a sweep): `policy` says
// which policies and settings; the backend is the one the settings choose.
Provenance model_provenance(const ModelBundle& bundle, const SessionConfig& cfg, nlohmann::json policy);

// An input file besides the model (an evaluation set): its path as given,
// SHA-256 and size, for a provenance block's policy part.
nlohmann::json input_file_json(const std::string& path);

// The command line: the CLI registers its argv once at start; the window
// its own name ("kvscope (window)").
void set_command_line(int argc, const char* const* argv);
void set_command_line(std::string text);
// The CLI's argv as registered (argv[0] as its file name); empty elsewhere.
std::vector<std::string> command_words();
// The registered command line, with the action in progress on this thread
// appended when one is set ("kvscope (window): export to out/").
std::string command_line();
// The window's worker names what it is doing while it writes files.
class ProvenanceAction {
 public:
  explicit ProvenanceAction(std::string action);
  ~ProvenanceAction();
  ProvenanceAction(const ProvenanceAction&) = delete;
  ProvenanceAction& operator=(const ProvenanceAction&) = delete;

 private:
  std::string previous_;
};

// argv as a POSIX shell reads it back: words quoted only where needed.
std::string shell_quoted(const std::vector<std::string>& words);
// The model's name for titles and provenance: the .gguf file's or the
// folder's name; "kvscope-tiny" for the bundled model ("" path).
std::string model_display_name(const std::string& model_path);

}  // namespace kvscope
