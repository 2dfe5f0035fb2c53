#include "io/output_lock.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/error.h"

namespace kvscope {

bool process_alive(long pid) {
  if (pid <= 0) return false;
  if (!(::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM)) return false;
  // A process that has exited but whose parent has not collected it yet (a
  // zombie: say a shard's CLI whose Ray worker was killed) answers kill(0)
  // and writes nothing more: its lock is stale.
  std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (!f) return true;  // no /proc: trust kill(0)
  char state = 0;
  const int got = std::fscanf(f, "%*d (%*[^)]) %c", &state);
  std::fclose(f);
  return !(got == 1 && (state == 'Z' || state == 'X'));
}

std::filesystem::path OutputLock::file_of(const std::filesystem::path& dir) {
  return dir.parent_path() / ("." + dir.filename().string() + ".lock");
}

namespace {

long pid_in(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
  if (n <= 0) return 0;
  char* end = nullptr;
  const long pid = std::strtol(buf, &end, 10);
  return end == buf ? 0 : pid;
}

std::string busy(long pid) {
  return "is being written by " + (pid > 0 ? "process " + std::to_string(pid) : std::string("another process")) +
         "; wait for it to finish or choose another folder";
}

}  // namespace

OutputLock::OutputLock(const std::filesystem::path& dir_path, const std::string& dir) : file_(file_of(dir_path)) {
  const long self = static_cast<long>(::getpid());
  // A few tries: a lock file unlinked by its owner between our open and
  // our flock is a dead inode; open the new one.
  for (int attempt = 0; attempt < 20; ++attempt) {
    const int fd = ::open(file_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw Error(dir, "", "cannot create the lock file " + file_.string() + ": " + std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const long pid = pid_in(fd);
      ::close(fd);
      throw Error(dir, "", busy(pid));
    }
    struct stat held, now;
    if (::fstat(fd, &held) != 0 || ::stat(file_.c_str(), &now) != 0 || held.st_ino != now.st_ino ||
        held.st_dev != now.st_dev) {
      ::close(fd);  // locked a file its owner has just removed
      continue;
    }
    const long pid = pid_in(fd);
    if (pid > 0 && pid != self && process_alive(pid)) {
      ::close(fd);
      throw Error(dir, "", busy(pid));
    }
    if (pid > 0 && pid != self)
      note_ = "took over " + dir + "'s lock of process " + std::to_string(pid) + ", which is no longer running";
    const std::string text = std::to_string(self) + "\n";
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
      const std::string why = std::strerror(errno);
      ::unlink(file_.c_str());
      ::close(fd);
      throw Error(dir, "", "cannot write the lock file " + file_.string() + ": " + why);
    }
    fd_ = fd;
    return;
  }
  throw Error(dir, "", "cannot take the lock " + file_.string() + " (it keeps changing)");
}

OutputLock::~OutputLock() {
  // Unlinked while still held, so no one can lock this inode and believe
  // it current (the inode check above).
  ::unlink(file_.c_str());
  ::close(fd_);
}

}  // namespace kvscope
