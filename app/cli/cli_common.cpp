#include "cli_common.h"

#include <cstdio>

#include "common/error.h"

namespace kvscope::cli {

void add_model_arg(CLI::App& cmd, std::string& model) {
  cmd.add_option("model", model, "Hugging Face model directory (default: the bundled kvscope-tiny)");
}

void add_device_opt(CLI::App& cmd, std::string& device) {
  cmd.add_option("--device", device, "cpu, cuda or auto (CUDA when a GPU is present)")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}))
      ->default_val("cpu");
}

ModelBundle load_bundle(const std::string& model) {
  return load_model_bundle(model.empty() ? default_model_dir() : std::filesystem::path(model));
}

Device resolve_device(const std::string& device) {
  if (device == "cpu") return Device::Cpu;
  std::string why;
  const bool ok = cuda_available(&why);
  if (device == "auto") return ok ? Device::Cuda : Device::Cpu;
  if (!ok) throw Error("--device cuda", "", "no CUDA device: " + why);
  return Device::Cuda;
}

std::vector<int> encode_prompt(const ModelBundle& b, const std::string& text, int extra, const std::string& flag) {
  std::vector<int> ids = b.tokenizer->encode(text, true);
  if (ids.empty()) throw Error(flag, "", "the text has no tokens");
  const int max = b.config().max_positions;
  if (static_cast<int>(ids.size()) + extra > max)
    throw Error(flag, "", "is " + std::to_string(ids.size()) + " tokens" +
                              (extra ? " (+" + std::to_string(extra) + " new)" : std::string()) +
                              ", longer than the model's maximum positions (" + std::to_string(max) + ")");
  return ids;
}

std::string escape(const std::string& s) {
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
