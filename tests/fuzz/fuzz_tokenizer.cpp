// libFuzzer: a tokenizer.json (model, merges, normalizers, pre-tokenizer
// regexes, added tokens, decoder). A tokenizer that loads must also encode
// and decode a few hard strings without failing.
#include "fuzz_input.h"
#include "tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kvscope::fuzz::expect_clean([&] {
    const auto t = kvscope::Tokenizer::from_json_string(kvscope::fuzz::as_string(data, size), "tokenizer.json");
    for (const char* text : {"Hello world", "", " \t\n  x", "naïve café 東京 ١٢٣ 👩‍👩‍👧", "\xff\xfe broken utf-8"}) {
      const auto ids = t.encode(text, true);
      t.decode(ids, false);
    }
  });
  return 0;
}
