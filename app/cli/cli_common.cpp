#include "cli_common.h"
#include "cli_policy.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/error.h"
#include "reports/exporter.h"

namespace kvscope::cli {

void add_model_arg(CLI::App& cmd, std::string& model) {
  cmd.add_option("model", model, "Hugging Face model directory or .gguf file (default: the bundled kvscope-tiny)");
}

void add_device_opt(CLI::App& cmd, std::string& device) {
  cmd.add_option("--device", device, "cpu, cuda or auto (CUDA when a GPU is present)")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}))
      ->default_val("cpu");
}

void add_weights_opt(CLI::App& cmd, std::string& weights) {
  std::string help = "CPU backend's matrices:";
  std::vector<std::string> names;
  for (WeightFormat f : weight_formats()) {
    help += std::string(" ") + weight_format_name(f) + " (" + weight_format_description(f) + ")" +
            (f == kDefaultWeightFormat ? ", the default;" : ";");
    names.push_back(weight_format_name(f));
  }
  help.pop_back();
  cmd.add_option("--weights", weights, help)
      ->check(CLI::IsMember(names))
      ->default_val(weight_format_name(kDefaultWeightFormat));
}

std::vector<int> encode_prompt(const ModelBundle& b, const std::string& text, int extra, const std::string& flag) {
  std::vector<int> ids = b.tokenizer->encode(text, true);
  if (ids.empty()) throw Error(flag, "", "the text has no tokens");
  const int max = b.config().max_positions;
  if (static_cast<int>(ids.size()) + extra > max)
    throw Error(flag, "", "is " + std::to_string(ids.size()) + " tokens" +
                              (extra ? " (+" + std::to_string(extra) + " new)" : std::string()) +
                              ", longer than the model's maximum positions (" + std::to_string(max) + ")");
  const int window = b.config().sliding_layers.empty() ? b.config().sliding_window : 0;
  if (window > 0 && static_cast<int>(ids.size()) + extra > window)
    throw Error(flag, "",
                "is " + std::to_string(ids.size()) + " tokens" +
                    (extra ? " (+" + std::to_string(extra) + " new)" : std::string()) +
                    ", longer than the model's sliding window (sliding_window = " + std::to_string(window) +
                    "), which kvscope does not support");
  return ids;
}

void check_output_dir(const std::string& dir, const std::string& flag) {
  namespace fs = std::filesystem;
  if (dir.empty()) throw Error(flag, "", "the directory name is empty");
  std::error_code ec;
  const fs::path p(dir);
  const auto st = fs::status(p, ec);
  if (fs::exists(st)) {
    if (!fs::is_directory(st)) throw Error(flag, dir, "exists and is not a directory");
    if (::access(dir.c_str(), W_OK | X_OK) != 0) throw Error(flag, dir, "the directory is not writable");
    return;
  }
  // Not there yet: the nearest existing ancestor must be a writable directory.
  fs::path q = fs::absolute(p, ec).lexically_normal();
  if (ec) throw Error(flag, dir, "cannot resolve the path: " + ec.message());
  while (q.has_relative_path() && !fs::exists(fs::symlink_status(q, ec))) q = q.parent_path();
  if (!fs::is_directory(fs::status(q, ec))) throw Error(flag, dir, "cannot be created: " + q.string() + " is not a directory");
  if (::access(q.c_str(), W_OK | X_OK) != 0)
    throw Error(flag, dir, "cannot be created: " + q.string() + " is not writable");
}

std::unique_ptr<OpenOutput> open_export_dir(const std::string& dir, const std::string& flag) {
  check_output_dir(dir, flag);
  auto out = std::make_unique<OpenOutput>();
  try {
    out->folder = open_export_folder(dir);
  } catch (const Error& e) {
    throw Error(flag, "", e.what());
  }
  if (const std::string note = out->folder->note(); !note.empty())
    std::fprintf(stderr, "kvscope-cli: note: %s\n", note.c_str());
  return out;
}

CLI::Validator nonempty_dir_name() {
  return CLI::Validator([](std::string& s) { return s.empty() ? std::string("the directory name is empty") : std::string(); },
                        "");
}

void create_output_dir(const std::string& dir, const std::string& flag) {
  check_output_dir(dir, flag);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!std::filesystem::is_directory(dir))
    throw Error(flag, dir, "cannot create the directory" + (ec ? ": " + ec.message() : std::string()));
}

std::string read_text_file(const std::string& path, const std::string& flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path, "", "cannot open " + flag);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string flag_for_field(const std::string& field) {
  static const std::pair<const char*, const char*> kFlags[] = {{"policy.name", "--policy"},
                                                               {"sharing", "--sharing"},
                                                               {"device", "--device"},
                                                               {"weights", "--weights"},
                                                               {"max_new_tokens", "--max-new-tokens"},
                                                               {"sampling.temperature", "--temperature"},
                                                               {"sampling.top_k", "--top-k"},
                                                               {"sampling.top_p", "--top-p"},
                                                               {"prompt", "--prompt"},
                                                               {"shape", "--shape"},
                                                               {"export.layer", "--export-layer"},
                                                               {"export.head", "--export-head"},
                                                               {"export.positions", "--figure-positions"},
                                                               {"export.figure_size", "--figure-size"},
                                                               {"export.colormap", "--colormap"},
                                                               {"export.scale", "--scale"},
                                                               {"export.range", "--range"},
                                                               {"export.dpi", "--dpi"},
                                                               {"export.evicted", "--evicted"},
                                                               {"export.formats", "--format"},
                                                               {"recording.layers", "--record-layers"},
                                                               {"recording.heads", "--record-heads"},
                                                               {"recording.memory_mb", "--record-mb"}};
  for (const auto& [f, flag] : kFlags)
    if (field == f) return flag;
  const std::string policy = "policy.";
  if (field.rfind(policy, 0) == 0)
    if (const ParamSpec* p = find_param(field.substr(policy.size()))) return param_flag(*p);
  return "";
}

Error for_command_line(const Error& e) {
  if (!e.is_setting()) return e;
  const std::string flag = flag_for_field(e.field());
  return flag.empty() ? e : e.renamed(flag);
}

std::string escape(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace kvscope::cli
