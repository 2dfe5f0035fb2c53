#include "reports/provenance.h"

#include <algorithm>
#include <filesystem>
#include <mutex>

#include "backend/cpu/cpu_info.h"
#include "backend/parallel.h"
#include "common/build_info.h"
#include "io/file_hash.h"
#include "io/json_file.h"
#include "io/sha256.h"
#include "model/config_identity.h"
#include "policy/policy_summary.h"
#include "session/session.h"
#include "session/session_file.h"

namespace kvscope {
namespace fs = std::filesystem;
namespace {

std::mutex g_command_mutex;
std::string g_command_line = "kvscope";
std::vector<std::string> g_command_words;  // the CLI's argv (argv[0] as its file name)
thread_local std::string t_action;

// The files a run's numbers depend on besides the configuration: the GGUF
// file, or a folder's safetensors (every shard) and tokenizer.json.
std::vector<fs::path> model_data_files(const fs::path& model) {
  std::error_code ec;
  if (fs::is_regular_file(model, ec)) return {model};
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(model, ec))
    if (e.is_regular_file(ec) && (e.path().extension() == ".safetensors" || e.path().filename() == "tokenizer.json"))
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

bool plain_word(const std::string& w) {
  if (w.empty()) return false;
  return std::all_of(w.begin(), w.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("-_./=:,+%@").find(c) != std::string_view::npos;
  });
}

Provenance common(const ModelBundle& bundle, nlohmann::json policy, std::string backend) {
  Provenance p;
  p.version = kvscope_version();
  p.commit = kvscope_commit();
  p.command_line = command_line();
  std::error_code ec;
  const fs::path dir = bundle.files.dir;
  fs::path abs = fs::absolute(dir, ec);
  p.model_path = (ec ? dir : abs).lexically_normal().string();
  p.model = model_display_name(p.model_path);
  for (const fs::path& f : model_data_files(dir)) {
    const FileDigest d = file_sha256(f);
    p.model_files.push_back({f.filename().string(), d.sha256, d.bytes});
  }
  p.config_sha256 = sha256_hex(json_text(model_config_identity(bundle.config()), -1));
  p.policy = std::move(policy);
  p.backend = std::move(backend);
  p.cpu = cpu_description(cpu_info());
  p.threads = pool_threads();
  return p;
}

}  // namespace

nlohmann::json to_json(const Provenance& p) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : p.model_files) files.push_back({{"name", f.name}, {"sha256", f.sha256}, {"bytes", f.bytes}});
  return {{"kvscope", {{"version", p.version}, {"commit", p.commit}}},
          {"command_line", p.command_line},
          {"model", {{"name", p.model}, {"path", p.model_path}, {"files", files}, {"config_sha256", p.config_sha256}}},
          {"policy", p.policy},
          {"device", {{"backend", p.backend}, {"cpu", p.cpu}, {"threads", p.threads}}}};
}

Provenance provenance_from_json(const nlohmann::json& j) {
  Provenance p;
  p.version = j.at("kvscope").at("version").get<std::string>();
  p.commit = j.at("kvscope").at("commit").get<std::string>();
  p.command_line = j.at("command_line").get<std::string>();
  const auto& m = j.at("model");
  p.model = m.at("name").get<std::string>();
  p.model_path = m.at("path").get<std::string>();
  for (const auto& f : m.at("files"))
    p.model_files.push_back(
        {f.at("name").get<std::string>(), f.at("sha256").get<std::string>(), f.at("bytes").get<uint64_t>()});
  p.config_sha256 = m.at("config_sha256").get<std::string>();
  p.policy = j.at("policy");
  const auto& d = j.at("device");
  p.backend = d.at("backend").get<std::string>();
  p.cpu = d.at("cpu").get<std::string>();
  p.threads = d.at("threads").get<int>();
  return p;
}

FigureMetadata figure_metadata(const Provenance& p) {
  // The short hash a reader types into git, with "-dirty" kept.
  const std::size_t dash = p.commit.find('-');
  const std::string hash = p.commit.substr(0, dash), suffix = dash == std::string::npos ? "" : p.commit.substr(dash);
  const std::string commit = (hash == "unknown" ? hash : hash.substr(0, 12)) + suffix;
  return {"kvscope " + p.version + " (" + commit + ")", json_text(to_json(p), -1)};
}

Provenance session_provenance(const Session& s) {
  const SessionConfig& c = s.config();
  nlohmann::json policy = {{"settings", policy_to_json(c.policy)},
                           {"in_effect", policy_summary(s.policy().resolved())}};
  if (!c.policy_changes.empty()) {
    nlohmann::json changes = nlohmann::json::array();
    for (const auto& ch : c.policy_changes)
      changes.push_back({{"from_step", ch.from_step}, {"policy", policy_to_json(ch.policy)}});
    policy["changes"] = changes;
  }
  return common(s.bundle(), std::move(policy), s.backend().name());
}

Provenance model_provenance(const ModelBundle& bundle, const SessionConfig& cfg, nlohmann::json policy) {
  const Device d = resolve_device(cfg.device, bundle.config());
  return common(bundle, std::move(policy), backend_label(d, parse_weight_format(cfg.weights)));
}

void set_command_line(int argc, const char* const* argv) {
  std::vector<std::string> words;
  for (int i = 0; i < argc; ++i) words.push_back(i == 0 ? fs::path(argv[0]).filename().string() : argv[i]);
  {
    std::lock_guard lock(g_command_mutex);
    g_command_words = words;
  }
  set_command_line(shell_quoted(words));
}

std::vector<std::string> command_words() {
  std::lock_guard lock(g_command_mutex);
  return g_command_words;
}

void set_command_line(std::string text) {
  std::lock_guard lock(g_command_mutex);
  g_command_line = std::move(text);
}

std::string command_line() {
  std::lock_guard lock(g_command_mutex);
  return t_action.empty() ? g_command_line : g_command_line + ": " + t_action;
}

ProvenanceAction::ProvenanceAction(std::string action) : previous_(std::move(t_action)) {
  t_action = std::move(action);
}
ProvenanceAction::~ProvenanceAction() { t_action = std::move(previous_); }

std::string shell_quoted(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    if (!out.empty()) out += ' ';
    if (plain_word(w)) {
      out += w;
      continue;
    }
    // Single quotes keep everything literal; a single quote itself is
    // closed, escaped and reopened.
    out += '\'';
    for (char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

std::string model_display_name(const std::string& model_path) {
  if (model_path.empty()) return "kvscope-tiny";
  const fs::path p = model_path;
  const std::string name = p.filename().string();
  return name.empty() ? p.parent_path().filename().string() : name;
}

nlohmann::json input_file_json(const std::string& path) {
  const FileDigest d = file_sha256(path);
  return {{"path", path}, {"sha256", d.sha256}, {"bytes", d.bytes}};
}

}  // namespace kvscope
