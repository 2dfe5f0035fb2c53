// ZeroedPages: zeros until written, and only written pages resident, in
// the buffer and in its copies (the CPU backend's KV cache).
#include "io/zeroed_pages.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace kvscope {
namespace {

std::size_t page_size() { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }

// Which pages of [p, p + bytes) have memory of their own (mincore; a
// buffer's start is page aligned). Reading a never-written page would map
// the shared zero page, which mincore also reports, so the tests ask
// before they read.
std::vector<bool> resident(const std::byte* p, std::size_t bytes) {
  const std::size_t pages = (bytes + page_size() - 1) / page_size();
  std::vector<unsigned char> v(pages);
  EXPECT_EQ(mincore(const_cast<std::byte*>(p), bytes, v.data()), 0);
  std::vector<bool> r(pages);
  for (std::size_t i = 0; i < pages; ++i) r[i] = (v[i] & 1) != 0;
  return r;
}

TEST(ZeroedPages, OnlyTheWrittenPagesAreResidentInTheBufferAndItsCopy) {
  const std::size_t page = page_size(), pages = 64;
  ZeroedPages z(pages * page);
  ASSERT_NE(z.data(), nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(z.data()) % page, 0u);
  EXPECT_EQ(resident(z.data(), z.size()), std::vector<bool>(pages, false));
  z.data()[3 * page + 17] = std::byte{42};
  z.data()[40 * page] = std::byte{7};
  std::vector<bool> want(pages, false);
  want[3] = want[40] = true;
  EXPECT_EQ(resident(z.data(), z.size()), want);

  const ZeroedPages copy(z);
  EXPECT_EQ(resident(copy.data(), copy.size()), want);
  for (std::size_t i = 0; i < z.size(); ++i) ASSERT_EQ(copy.data()[i], z.data()[i]) << "byte " << i;
  EXPECT_EQ(copy.data()[3 * page + 17], std::byte{42});

  // A page written back to zeros reads the same whether copied or not.
  z.data()[40 * page] = std::byte{0};
  ZeroedPages assigned;
  assigned = z;
  for (std::size_t i = 0; i < z.size(); ++i) ASSERT_EQ(assigned.data()[i], z.data()[i]) << "byte " << i;
}

TEST(ZeroedPages, AnOddSizeIsZerosToItsLastByteAndMovesLeaveAnEmptyBuffer) {
  const std::size_t n = 3 * page_size() + 5;
  ZeroedFloats f(n / sizeof(float));
  EXPECT_EQ(f.size(), n / sizeof(float));
  f.data()[f.size() - 1] = 1.5f;
  for (std::size_t i = 0; i + 1 < f.size(); ++i) ASSERT_EQ(f.data()[i], 0.0f);
  ZeroedFloats moved = std::move(f);
  EXPECT_EQ(moved.data()[moved.size() - 1], 1.5f);
  EXPECT_EQ(f.data(), nullptr);  // NOLINT(bugprone-use-after-move): a moved-from buffer is empty
  EXPECT_EQ(f.size(), 0u);
  const ZeroedPages empty(0);
  EXPECT_EQ(empty.data(), nullptr);
  const ZeroedPages empty_copy(empty);
  EXPECT_EQ(empty_copy.size(), 0u);
}

}  // namespace
}  // namespace kvscope
