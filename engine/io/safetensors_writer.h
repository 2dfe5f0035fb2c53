// Writing safetensors files (exports of per-step tensors; test fixtures).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kvscope {

struct SafetensorsEntry {
  std::string name;
  std::string dtype;  // "F32", "F16", "BF16", "U8", "I32", ...
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;
};

// Tensors are laid out in the given order, contiguously; the header is
// padded with spaces to a multiple of 8 bytes. Written atomically.
void write_safetensors(const std::filesystem::path& path, const std::vector<SafetensorsEntry>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

// The file's bytes, for tests that then corrupt them.
std::string safetensors_bytes(const std::vector<SafetensorsEntry>& tensors,
                              const std::map<std::string, std::string>& metadata = {});

}  // namespace kvscope
