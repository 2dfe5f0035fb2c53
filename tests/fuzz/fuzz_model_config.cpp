// libFuzzer: a Hugging Face config.json, parsed into a ModelConfig.
#include "fuzz_input.h"
#include "io/json_file.h"
#include "model/config_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kvscope::fuzz::expect_clean([&] {
    const auto j = kvscope::parse_json_text(kvscope::fuzz::as_string(data, size), "config.json");
    kvscope::parse_model_config(j, "config.json");
  });
  return 0;
}
