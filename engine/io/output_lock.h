// One writer per output folder: a lock file ".NAME.lock" beside the folder
// NAME, holding the owner's process id. Beside, not inside, so that it
// exists before the folder does and never sits among the user's files.
//
// Two things make it hold: the file is flock()ed (the kernel drops that
// lock when its owner dies, however it dies), and the pid in it names the
// owner for the message. A lock file whose flock is free but whose pid is
// a running process is still honoured (a lock written by hand or by a
// process that does not flock); one whose pid is dead is stale and taken
// over, with a note saying so.
#pragma once

#include <filesystem>
#include <string>

namespace kvscope {

class OutputLock {
 public:
  // Takes the lock of `dir` (its parent must exist). Throws kvscope::Error
  // "DIR: is being written by process N; ..." when another process holds it.
  // `shown`: the folder as the user named it, for the messages.
  OutputLock(const std::filesystem::path& dir, const std::string& shown);
  ~OutputLock();  // removes the lock file
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

  // "took over DIR's lock of process N, which is no longer running", or ""
  // when the lock was free.
  const std::string& takeover_note() const { return note_; }
  const std::filesystem::path& file() const { return file_; }

  static std::filesystem::path file_of(const std::filesystem::path& dir);

 private:
  std::filesystem::path file_;
  int fd_ = -1;
  std::string note_;
};

// True when `pid` names a running process (kill(pid, 0) succeeds or is
// only refused for permission).
bool process_alive(long pid);

}  // namespace kvscope
