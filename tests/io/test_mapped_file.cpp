// MappedFile::drop_pages: the pages of a copied range leave the process's
// resident set (read from /proc/self/smaps, the kernel's own count for the
// mapping), and the range still reads back, byte for byte, from the file.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "io/mapped_file.h"
#include "test_util.h"

namespace kvscope {
namespace {

TEST(MappedFile, DroppedPagesLeaveTheResidentSetAndReadBackFromTheFile) {
  test::TempDir dir;
  const auto path = dir.path() / "data.bin";
  const std::size_t n = std::size_t(16) << 20;  // 16 MiB
  std::vector<unsigned char> bytes(n);
  for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<unsigned char>(i * 2654435761u >> 24);
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(n));

  const auto file = MappedFile::open(path);
  ASSERT_EQ(file->size(), n);
  // Touch every page, as the loader's copy does.
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < n; i += 4096) sum += static_cast<unsigned char>(file->data()[i]);
  const long before = test::resident_kb_of_mapping(file->data());
  ASSERT_GE(before, long(n / 1024) - 64) << "every touched page is resident";

  // A range not aligned to pages: only the pages wholly inside it go.
  file->drop_pages(file->data() + 100, n - 200);
  const long after = test::resident_kb_of_mapping(file->data());
  EXPECT_LE(after, 16) << "at most the two partial pages at the ends stay";

  EXPECT_EQ(0, std::memcmp(file->data(), bytes.data(), n)) << "the range reads back from the file";
  std::uint64_t again = 0;
  for (std::size_t i = 0; i < n; i += 4096) again += static_cast<unsigned char>(file->data()[i]);
  EXPECT_EQ(sum, again);

  // Ranges outside the mapping are ignored rather than advised.
  file->drop_pages(file->data() + n - 10, 100);
  file->drop_pages(nullptr, 0);
}

}  // namespace
}  // namespace kvscope
