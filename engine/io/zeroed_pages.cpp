#include "io/zeroed_pages.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

namespace kvscope {

namespace {

bool all_zero(const std::byte* p, std::size_t n) {
  return std::all_of(p, p + n, [](std::byte b) { return b == std::byte{0}; });
}

}  // namespace

std::size_t ZeroedPages::page_bytes() {
  static const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

ZeroedPages::ZeroedPages(std::size_t bytes) {
  if (bytes == 0) return;
  const std::size_t page = page_bytes();
  const std::size_t body = (bytes + page - 1) / page * page;
  // An anonymous private mapping reads as zeros; a page is given memory of
  // its own at its first write.
  void* p = mmap(nullptr, body + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  data_ = static_cast<std::byte*>(p);
  bytes_ = bytes;
  mapped_ = body + page;
#ifdef MADV_NOHUGEPAGE
  // Where transparent huge pages are on for every mapping, the first write
  // into an aligned 2 MiB range would make all of it resident: the pages
  // stay small, so memory follows the rows written. (Advice only.)
  madvise(data_, body, MADV_NOHUGEPAGE);
#endif
  mprotect(data_ + body, page, PROT_NONE);
}

ZeroedPages::~ZeroedPages() { unmap(); }

void ZeroedPages::unmap() noexcept {
  if (data_ != nullptr) munmap(data_, mapped_);
  data_ = nullptr;
  bytes_ = mapped_ = 0;
}

void ZeroedPages::release(std::size_t offset, std::size_t n) {
  if (n == 0 || offset >= bytes_) return;
  n = std::min(n, bytes_ - offset);
  const std::size_t page = page_bytes();
  const std::size_t begin = (offset + page - 1) / page * page, end = (offset + n) / page * page;
  // MADV_DONTNEED on a private anonymous mapping: the next read of these
  // pages finds zeros, the next write a fresh page.
  if (end > begin) madvise(data_ + begin, end - begin, MADV_DONTNEED);
}

std::size_t ZeroedPages::resident_bytes() const {
  if (data_ == nullptr) return 0;
  const std::size_t page = page_bytes(), pages = (bytes_ + page - 1) / page;
  std::vector<unsigned char> in_core(pages);
  if (mincore(data_, pages * page, in_core.data()) != 0) return 0;
  return page * static_cast<std::size_t>(
                    std::count_if(in_core.begin(), in_core.end(), [](unsigned char c) { return (c & 1) != 0; }));
}

ZeroedPages::ZeroedPages(const ZeroedPages& other) : ZeroedPages(other.bytes_) {
  // Reading a never-written source page maps the shared zero page, which is
  // not counted as the process's own memory; writing its copy would be.
  const std::size_t page = page_bytes();
  for (std::size_t at = 0; at < bytes_; at += page) {
    const std::size_t n = std::min(page, bytes_ - at);
    if (!all_zero(other.data_ + at, n)) std::memcpy(data_ + at, other.data_ + at, n);
  }
}

ZeroedPages& ZeroedPages::operator=(const ZeroedPages& other) {
  if (this != &other) {
    ZeroedPages copy(other);
    *this = std::move(copy);
  }
  return *this;
}

ZeroedPages::ZeroedPages(ZeroedPages&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      mapped_(std::exchange(other.mapped_, 0)) {}

ZeroedPages& ZeroedPages::operator=(ZeroedPages&& other) noexcept {
  if (this != &other) {
    unmap();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    mapped_ = std::exchange(other.mapped_, 0);
  }
  return *this;
}

}  // namespace kvscope
