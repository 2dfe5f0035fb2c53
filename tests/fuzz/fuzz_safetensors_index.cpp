// libFuzzer: model.safetensors.index.json beside a real shard (the tiny
// golden llama's weights), opened as a model directory.
#include "fuzz_input.h"
#include "io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto index = kvscope::fuzz::as_file(data, size, "model.safetensors.index.json");
  const auto dir = index.parent_path();
  static const bool shard_ready = [&] {
    std::filesystem::copy_file(std::filesystem::path(KVSCOPE_TEST_DATA) / "models/llama_gqa/model.safetensors",
                               dir / "model-00001-of-00001.safetensors",
                               std::filesystem::copy_options::overwrite_existing);
    return true;
  }();
  (void)shard_ready;
  kvscope::fuzz::expect_clean([&] {
    const auto store = kvscope::TensorStore::open_model_dir(dir);
    volatile std::size_t n = store.total_bytes();
    (void)n;
  });
  return 0;
}
