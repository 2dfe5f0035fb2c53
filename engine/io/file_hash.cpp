#include "io/file_hash.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

#include "common/error.h"
#include "io/atomic_file.h"
#include "io/sha256.h"

namespace kvscope {
namespace fs = std::filesystem;
namespace {

struct FileKey {
  std::string path;  // absolute, normalized
  uint64_t bytes = 0, inode = 0;
  int64_t mtime_ns = 0;
  std::string line() const {
    return std::to_string(bytes) + " " + std::to_string(mtime_ns) + " " + std::to_string(inode) + " " + path;
  }
};

FileKey key_of(const fs::path& file, int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw Error(file.string(), "", "cannot read its size and time");
  std::error_code ec;
  fs::path abs = fs::absolute(file, ec);
  if (ec) abs = file;
  return {abs.lexically_normal().string(), uint64_t(st.st_size), uint64_t(st.st_ino),
          int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

// One small file per hashed path, named by the SHA-256 of the path (so
// concurrent processes never share a file); it holds the key on its first
// line and the digest on its second.
fs::path entry_for(const FileKey& k) {
  const fs::path dir = file_hash_cache_dir();
  return dir.empty() ? fs::path() : dir / sha256_hex(k.path);
}

// This process's digests too, so a run that cannot write the cache folder
// still hashes each file once.
std::mutex g_memo_mutex;
std::map<std::string, std::string> g_memo;  // key line -> digest

std::string remembered(const FileKey& k) {
  if (const fs::path entry = entry_for(k); !entry.empty()) {
    std::ifstream in(entry);
    std::string key, digest;
    if (std::getline(in, key) && std::getline(in, digest) && key == k.line() && is_sha256_hex(digest)) return digest;
  }
  std::lock_guard lock(g_memo_mutex);
  const auto it = g_memo.find(k.line());
  return it == g_memo.end() ? "" : it->second;
}

void remember(const FileKey& k, const std::string& digest) {
  {
    std::lock_guard lock(g_memo_mutex);
    g_memo[k.line()] = digest;
  }
  const fs::path entry = entry_for(k);
  if (entry.empty()) return;
  try {
    std::error_code ec;
    fs::create_directories(entry.parent_path(), ec);
    write_text_file(entry, k.line() + "\n" + digest + "\n");
  } catch (const Error&) {
    // A read-only cache folder: the digest is computed again next time.
  }
}

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

fs::path file_hash_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "kvscope" / "sha256";
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "kvscope" / "sha256";
  return {};
}

FileDigest file_sha256(const fs::path& file) {
  Fd f{::open(file.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) throw Error(file.string(), "", "cannot open to compute its SHA-256");
  const FileKey k = key_of(file, f.fd);
  if (std::string d = remembered(k); !d.empty()) return {d, k.bytes, true};
  Sha256 h;
  std::vector<char> buf(1 << 20);
  uint64_t total = 0;
  for (;;) {
    const ssize_t n = ::read(f.fd, buf.data(), buf.size());
    if (n < 0) throw Error(file.string(), "", "read failed while computing its SHA-256");
    if (n == 0) break;
    h.update(buf.data(), std::size_t(n));
    total += uint64_t(n);
  }
  const std::string digest = to_hex(h.finish());
  // Remembered only when the file did not change while it was read.
  if (total == k.bytes && key_of(file, f.fd).line() == k.line()) remember(k, digest);
  return {digest, total, false};
}

}  // namespace kvscope
