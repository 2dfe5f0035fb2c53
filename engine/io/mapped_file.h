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
  // The pages wholly inside [p, p + n), a range of this mapping the caller
  // has copied and will not read again, leave the process's resident set
  // (they stay in the page cache; a later read maps them back from the
  // file). An 8B Llama file's q and k matrices, reordered into copies,
  // would otherwise be counted twice: 377 MB.
  void drop_pages(const std::byte* p, std::size_t n) const;

 private:
  MappedFile() = default;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  std::filesystem::path path_;
};

}  // namespace kvscope
