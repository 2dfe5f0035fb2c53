// The SHA-256 of a file's bytes, computed once and remembered: hashing a
// multi-GB model on every run would cost seconds, so the digest is kept in
// the user's cache folder keyed by the file's absolute path, size,
// modification time (nanoseconds) and inode. Any write to the file changes
// its mtime, so a changed file is hashed again; a cache that cannot be read
// or written only costs the time of hashing.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace kvscope {

struct FileDigest {
  std::string sha256;       // lowercase hex
  uint64_t bytes = 0;       // the file's size
  bool from_cache = false;  // true when the remembered digest was used
};

// Throws kvscope::Error naming the file when it cannot be read.
FileDigest file_sha256(const std::filesystem::path& file);

// $XDG_CACHE_HOME/kvscope/sha256, else ~/.cache/kvscope/sha256; empty when
// neither is set (then nothing is remembered).
std::filesystem::path file_hash_cache_dir();

}  // namespace kvscope
