// libFuzzer: a session file (policy, sampling, recording, export, fork,
// view and lesson blocks), read and written back.
#include "fuzz_input.h"
#include "io/json_file.h"
#include "session/session_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kvscope::fuzz::expect_clean([&] {
    const auto j = kvscope::parse_json_text(kvscope::fuzz::as_string(data, size), "session.json");
    const auto c = kvscope::SessionConfig::from_json(j, "session.json");
    // What was accepted must survive the round trip unchanged.
    const auto again = kvscope::SessionConfig::from_json(c.to_json(), "session.json");
    if (again.to_json() != c.to_json()) {
      std::fprintf(stderr, "kvscope fuzz: a session file does not round-trip\n");
      std::abort();
    }
  });
  return 0;
}
