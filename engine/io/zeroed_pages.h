// A zero-filled array that takes resident memory only for the pages written
// to. A KV cache is sized for the whole session (prompt, every planned new
// token, slack for eviction's row moves) when it starts, but a std::vector
// zero-fills that at once, so `generate --max-new-tokens 2000` held the KV
// of 2,000 tokens from the first step, and every region's slack rows (64 at
// least) were resident though a session without eviction never reaches
// them. Here the kernel's zero pages stand in until a row is stored.
#pragma once

#include <cstddef>

namespace kvscope {

class ZeroedPages {
 public:
  ZeroedPages() = default;
  // `bytes` of zeros, none of them resident yet. Throws std::bad_alloc when
  // the address space cannot be had.
  explicit ZeroedPages(std::size_t bytes);
  ~ZeroedPages();
  // A copy holds the same bytes; pages that are all zero in the source stay
  // unwritten (so not resident) in the copy as well.
  ZeroedPages(const ZeroedPages& other);
  ZeroedPages& operator=(const ZeroedPages& other);
  ZeroedPages(ZeroedPages&& other) noexcept;
  ZeroedPages& operator=(ZeroedPages&& other) noexcept;

  std::byte* data() { return data_; }
  const std::byte* data() const { return data_; }
  std::size_t size() const { return bytes_; }

 private:
  void release() noexcept;
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// ZeroedPages seen as n floats.
class ZeroedFloats {
 public:
  ZeroedFloats() = default;
  explicit ZeroedFloats(std::size_t n) : pages_(n * sizeof(float)) {}
  float* data() { return reinterpret_cast<float*>(pages_.data()); }
  const float* data() const { return reinterpret_cast<const float*>(pages_.data()); }
  std::size_t size() const { return pages_.size() / sizeof(float); }

 private:
  ZeroedPages pages_;
};

}  // namespace kvscope
