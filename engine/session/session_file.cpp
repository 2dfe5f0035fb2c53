#include "session/session_file.h"

#include <filesystem>

#include "bundle/downloaded_models.h"
#include "common/error.h"

namespace kvscope {

ModelBundle load_bundle(const std::string& model_arg) {
  const std::string model = resolve_model_reference(model_arg);
  return load_model_bundle(model.empty() ? default_model_dir() : std::filesystem::path(model));
}

std::shared_ptr<const ModelBundle> bundle_for(const std::string& model) {
  return std::make_shared<const ModelBundle>(load_bundle(model));
}

Device resolve_device(const std::string& device) {
  if (device == "cpu") return Device::Cpu;
  std::string why;
  const bool ok = cuda_available(&why);
  if (device == "auto") return ok ? Device::Cuda : Device::Cpu;
  if (!ok) throw Error::setting("device", "no CUDA device: " + why);
  return Device::Cuda;
}

Device resolve_device(const std::string& device, const ModelConfig& cfg) {
  const Device d = resolve_device(device);
  if (device == "auto" && d == Device::Cuda && !cuda_supports(cfg, nullptr)) return Device::Cpu;
  return d;
}

std::string absolute_model_path(const std::string& model_arg) {
  const std::string model = resolve_model_reference(model_arg);
  const std::filesystem::path p = model.empty() ? default_model_dir() : std::filesystem::path(model);
  std::error_code ec;
  const auto abs = std::filesystem::absolute(p, ec);
  return ec ? p.string() : abs.lexically_normal().string();
}

SessionFile load_session_file(const std::string& path) {
  SessionFile f{SessionConfig::load(path), nullptr};
  SessionConfig& cfg = f.cfg;
  if (!cfg.model.empty() && std::filesystem::path(cfg.model).is_relative()) {
    const auto beside = std::filesystem::path(path).parent_path() / cfg.model;
    std::error_code ec;
    if (std::filesystem::exists(beside, ec)) cfg.model = beside.string();
  }
  try {
    cfg.model = absolute_model_path(cfg.model);
  } catch (const Error& e) {
    throw Error(path, "model", e.what());
  }
  try {
    resolve_device(cfg.device);
  } catch (const Error& e) {
    throw session_file_error(e, path);
  }
  try {
    f.bundle = bundle_for(cfg.model);
  } catch (const Error& e) {
    throw Error(path, "model", e.what());
  }
  return f;
}

}  // namespace kvscope
