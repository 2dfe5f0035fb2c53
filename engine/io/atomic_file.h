// Files are never left half-written: data goes to a temporary file in the
// same directory, which is renamed over the target only once it is complete.
#pragma once

#include <filesystem>
#include <functional>
#include <ostream>
#include <string_view>

namespace kvscope {

// Calls write(out) on a temporary file beside `path`, flushes, and renames it
// into place. On any error (thrown by write or by the file system) the
// temporary file is removed and a kvscope::Error naming `path` is thrown.
void write_file_atomically(const std::filesystem::path& path,
                           const std::function<void(std::ostream&)>& write);
void write_text_file(const std::filesystem::path& path, std::string_view text);

}  // namespace kvscope
