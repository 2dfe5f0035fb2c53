// libFuzzer: a .npy file (magic, version, header dict, shape, data).
#include "fuzz_input.h"
#include "io/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = kvscope::fuzz::as_file(data, size, "array.npy");
  kvscope::fuzz::expect_clean([&] { kvscope::read_npy(path).as_f32(); });
  return 0;
}
