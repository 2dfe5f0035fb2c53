#include <gtest/gtest.h>

#include "common/error.h"
#include "io/npy.h"
#include "test_util.h"

namespace kvscope {
namespace {

TEST(Npy, WritesWhatNumpyReadsAndReadsItBack) {
  test::TempDir dir;
  std::vector<float> v(2 * 3 * 5);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.5f * static_cast<float>(i) - 3.0f;
  write_npy_f32(dir / "a.npy", v, {2, 3, 5});
  const std::string bytes = test::read_file(dir / "a.npy");
  ASSERT_EQ(bytes.compare(0, 6, "\x93NUMPY"), 0);
  const std::size_t header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u) << "header must be padded to 64 bytes";
  EXPECT_NE(bytes.find("'shape': (2,3,5)"), std::string::npos);
  const NpyArray a = read_npy(dir / "a.npy");
  EXPECT_EQ(a.descr, "<f4");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3, 5}));
  EXPECT_EQ(a.as_f32(), v);
}

TEST(Npy, OneDimensionalShapeHasTrailingComma) {
  test::TempDir dir;
  std::vector<uint8_t> v = {1, 2, 3};
  write_npy_u8(dir / "u.npy", v, {3});
  EXPECT_NE(test::read_file(dir / "u.npy").find("'shape': (3,)"), std::string::npos);
  EXPECT_EQ(read_npy(dir / "u.npy").as_i64(), (std::vector<int64_t>{1, 2, 3}));
}

TEST(Npy, ShapeMismatchThrowsAndLeavesNoFile) {
  test::TempDir dir;
  std::vector<float> v(5);
  EXPECT_THROW(write_npy_f32(dir / "bad.npy", v, {2, 3}), Error);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(Npy, ReadingGarbageNamesTheFile) {
  test::TempDir dir;
  test::write_file(dir / "x.npy", "not numpy");
  try {
    read_npy(dir / "x.npy");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("x.npy"), std::string::npos);
  }
}

}  // namespace
}  // namespace kvscope
