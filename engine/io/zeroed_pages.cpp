#include "io/zeroed_pages.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

namespace kvscope {

namespace {

std::byte* map_zeros(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  // An anonymous private mapping reads as zeros; a page is given memory of
  // its own at its first write.
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return static_cast<std::byte*>(p);
}

bool all_zero(const std::byte* p, std::size_t n) {
  return std::all_of(p, p + n, [](std::byte b) { return b == std::byte{0}; });
}

}  // namespace

ZeroedPages::ZeroedPages(std::size_t bytes) : data_(map_zeros(bytes)), bytes_(bytes) {}

ZeroedPages::~ZeroedPages() { release(); }

void ZeroedPages::release() noexcept {
  if (data_ != nullptr) munmap(data_, bytes_);
  data_ = nullptr;
  bytes_ = 0;
}

ZeroedPages::ZeroedPages(const ZeroedPages& other) : data_(map_zeros(other.bytes_)), bytes_(other.bytes_) {
  // Reading a never-written source page maps the shared zero page, which is
  // not counted as the process's own memory; writing its copy would be.
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
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
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

ZeroedPages& ZeroedPages::operator=(ZeroedPages&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

}  // namespace kvscope
