// libFuzzer: a .safetensors file (header length, JSON header, offsets, data).
#include "fuzz_input.h"
#include "io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = kvscope::fuzz::as_file(data, size, "model.safetensors");
  kvscope::fuzz::expect_clean([&] {
    const auto f = kvscope::SafetensorsFile::open(path);
    // Touch every tensor's first and last byte: offsets must be inside the file.
    volatile unsigned sum = 0;
    for (const auto& t : f.tensors())
      if (t.nbytes > 0) sum = sum + unsigned(t.data[0]) + unsigned(t.data[t.nbytes - 1]);
  });
  return 0;
}
