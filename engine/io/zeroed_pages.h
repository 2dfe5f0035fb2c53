// A zero-filled array that takes resident memory only for the pages written
// to. A KV cache is sized for the whole session (prompt, every planned new
// token, slack for eviction's row moves) when it starts, but a std::vector
// zero-fills that at once, so `generate --max-new-tokens 2000` held the KV
// of 2,000 tokens from the first step, and every region's slack rows (64 at
// least) were resident though a session without eviction never reaches
// them. Here the kernel's zero pages stand in until a row is stored, and
// pages whose rows are given up can be handed back (release()).
#pragma once

#include <cstddef>

namespace kvscope {

class ZeroedPages {
 public:
  ZeroedPages() = default;
  // `bytes` of zeros, none of them resident yet, followed by a page that
  // faults on any access (a read past the end stops there, as a heap
  // redzone would under AddressSanitizer). Throws std::bad_alloc when the
  // address space cannot be had.
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
  static std::size_t page_bytes();  // the unit release() works in

  // The pages wholly inside [offset, offset + n) leave the resident set and
  // read as zeros again; bytes of partial pages at either end keep their
  // values. For rows the owner will not read before writing them again.
  void release(std::size_t offset, std::size_t n);
  // Bytes of the pages that have memory now (mincore). A never-written page
  // that was read maps the kernel's zero page and counts here, though the
  // process is not charged for it.
  std::size_t resident_bytes() const;

 private:
  void unmap() noexcept;
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::size_t mapped_ = 0;  // bytes_ rounded up to pages, plus the guard page
};

// ZeroedPages seen as n floats.
class ZeroedFloats {
 public:
  ZeroedFloats() = default;
  explicit ZeroedFloats(std::size_t n) : pages_(n * sizeof(float)) {}
  float* data() { return reinterpret_cast<float*>(pages_.data()); }
  const float* data() const { return reinterpret_cast<const float*>(pages_.data()); }
  std::size_t size() const { return pages_.size() / sizeof(float); }
  // release() of the floats [first, first + n).
  void release(std::size_t first, std::size_t n) { pages_.release(first * sizeof(float), n * sizeof(float)); }
  std::size_t resident_bytes() const { return pages_.resident_bytes(); }

 private:
  ZeroedPages pages_;
};

}  // namespace kvscope
