// libFuzzer: a GGUF file (header, metadata, tensor infos, data), then what
// kvscope builds from it: every tensor dequantized, the config transformers
// would derive, the tokenizer from the metadata, and the whole model bundle.
#include "bundle/gguf_tokenizer.h"
#include "bundle/model_bundle.h"
#include "fuzz_input.h"
#include "io/gguf.h"
#include "io/gguf_dequant.h"
#include "model/gguf_model.h"
#include "tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = kvscope::fuzz::as_file(data, size, "model.gguf");
  kvscope::fuzz::expect_clean([&] {
    const auto f = kvscope::GgufFile::open(path);
    std::vector<float> buf;
    for (const auto& t : f.tensors()) {
      if (t.numel() > (1 << 22)) continue;  // the reader checked the bytes; skip huge buffers
      buf.resize(static_cast<std::size_t>(t.numel()));
      kvscope::dequantize_ggml(t.type, t.data, t.numel(), buf.data());
    }
    kvscope::fuzz::expect_clean([&] { (void)kvscope::gguf_model_config_json(f); });
    kvscope::fuzz::expect_clean([&] { (void)kvscope::gguf_tokenizer(f); });
    (void)kvscope::load_model_bundle(path);
  });
  return 0;
}
