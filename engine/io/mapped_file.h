// A read-only memory map of a whole file (so multi-GB checkpoints are not copied).
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>

namespace kvscope {

class MappedFile {
 public:
  // Throws kvscope::Error naming the path when it cannot be opened or mapped.
  static std::shared_ptr<const MappedFile> open(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  MappedFile() = default;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  std::filesystem::path path_;
};

}  // namespace kvscope
