// SHA-256 (FIPS 180-4), written here because none of the libraries kvscope
// links offers it (Cairo, Pango, OpenBLAS, PCRE2, utf8proc); checked against
// the standard's test vectors (tests/io/test_sha256.cpp). Used for the
// provenance of outputs (reports/provenance.h) and for checking a fetched
// model against its pinned hash (bundle/downloaded_models.h).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kvscope {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t bytes);
  // The digest of everything given; the object is spent afterwards.
  std::array<uint8_t, 32> finish();

 private:
  void compress(const uint8_t* block);

  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> block_{};
  std::size_t used_ = 0;  // bytes waiting in block_
  uint64_t total_ = 0;    // bytes given so far
};

// Lowercase hex, as sha256sum prints it.
std::string to_hex(const std::array<uint8_t, 32>& digest);
std::string sha256_hex(std::string_view bytes);
// Whether `s` looks like a digest: 64 lowercase hex digits.
bool is_sha256_hex(std::string_view s);

}  // namespace kvscope
