#include "backend/backend.h"

#include "backend/cpu/cpu_backend.h"
#include "common/error.h"
#ifdef KVSCOPE_HAVE_CUDA
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_ops.h"
#endif

namespace kvscope {

bool cuda_available(std::string* why) {
#ifdef KVSCOPE_HAVE_CUDA
  return cuda_device_available(why);
#else
  if (why) *why = "this build has no CUDA backend (configured with KVSCOPE_CUDA=OFF or no nvcc found)";
  return false;
#endif
}

std::string backend_label(Device device, WeightFormat weights) {
  if (device == Device::Cpu) return weights == WeightFormat::F16 ? "cpu, f16 weights" : "cpu";
#ifdef KVSCOPE_HAVE_CUDA
  if (cuda_available(nullptr)) return "cuda: " + cuda::device_name();
#endif
  return "cuda";
}

std::shared_ptr<const PreparedWeights> prepare_weights(Device device, const ModelConfig& cfg,
                                                       const ModelWeights& weights, WeightFormat format) {
  if (device != Device::Cpu) return nullptr;
  return CpuModel::create(cfg, weights, format);
}

std::unique_ptr<Backend> make_backend(Device device, const ModelConfig& cfg, const ModelWeights& weights,
                                      const BackendOptions& opt, std::shared_ptr<const PreparedWeights> prepared) {
  if (device == Device::Cpu) {
    auto model = std::dynamic_pointer_cast<const CpuModel>(std::move(prepared));
    if (!model || model->format != opt.weights) model = CpuModel::create(cfg, weights, opt.weights);
    return std::make_unique<CpuBackend>(std::move(model), opt);
  }
  std::string why;
  if (!cuda_available(&why)) throw Error::setting("device", "no CUDA device: " + why);
#ifdef KVSCOPE_HAVE_CUDA
  return make_cuda_backend(cfg, weights, opt);
#else
  throw Error::setting("device", "no CUDA device: " + why);
#endif
}

}  // namespace kvscope
