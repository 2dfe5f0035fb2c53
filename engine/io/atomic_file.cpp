#include "io/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "common/error.h"

namespace kvscope {

void write_file_atomically(const std::filesystem::path& path,
                           const std::function<void(std::ostream&)>& write) {
  namespace fs = std::filesystem;
  const fs::path tmp = path.string() + ".tmp-" + std::to_string(::getpid());
  std::error_code ec;
  if (path.has_parent_path() && !fs::is_directory(path.parent_path(), ec))
    throw Error(path.string(), "", "directory " + path.parent_path().string() + " does not exist");
  try {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(path.string(), "", std::string("cannot create: ") + std::strerror(errno));
    errno = 0;
    write(out);
    out.flush();
    // ENOSPC (disk full), EFBIG (file size limit): say which.
    if (!out)
      throw Error(path.string(), "", std::string("write failed: ") + (errno ? std::strerror(errno) : "disk full?"));
    out.close();
    if (!out)
      throw Error(path.string(), "", std::string("write failed: ") + (errno ? std::strerror(errno) : "disk full?"));
    fs::rename(tmp, path, ec);
    if (ec) throw Error(path.string(), "", "cannot move into place: " + ec.message());
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
}

void write_text_file(const std::filesystem::path& path, std::string_view text) {
  write_file_atomically(path, [&](std::ostream& out) { out.write(text.data(), static_cast<std::streamsize>(text.size())); });
}

}  // namespace kvscope
