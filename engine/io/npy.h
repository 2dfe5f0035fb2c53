// NumPy .npy files (format 1.0, little-endian, C order): what researchers
// load with numpy.load. Writers go through write_file_atomically.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace kvscope {

void write_npy_f32(const std::filesystem::path& path, std::span<const float> data,
                   const std::vector<int64_t>& shape);
void write_npy_u8(const std::filesystem::path& path, std::span<const uint8_t> data,
                  const std::vector<int64_t>& shape);
void write_npy_i32(const std::filesystem::path& path, std::span<const int32_t> data,
                   const std::vector<int64_t>& shape);

struct NpyArray {
  std::string descr;  // "<f4", "|u1", "<i4", "<i8", "<f8"
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;
  int64_t numel() const;
  std::vector<float> as_f32() const;    // converts <f4/<f8/<i4/<i8/|u1
  std::vector<int64_t> as_i64() const;  // converts integer types
};

// Throws kvscope::Error naming the file when it is not a .npy we can read.
NpyArray read_npy(const std::filesystem::path& path);

}  // namespace kvscope
