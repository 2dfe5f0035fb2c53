// A folder that kvscope writes a set of files into (an export, a sweep's
// results), possibly beside files of the user's. The rule (docs/exports.md):
// kvscope replaces only files it wrote itself, those listed by the set's
// manifest from its earlier run; every other file and folder there is left
// exactly as it was, and a run that would have to write a file whose name
// the user's file already has is refused before any work, naming the file.
//
// The life of one output:
//   1. OutputFolder(dir, set), before any computing: takes the lock beside
//      the folder (io/output_lock.h), removes staging folders that dead
//      processes left, reads the earlier manifest and refuses a user's
//      file whose name this kind of output may write.
//   2. The writer writes every file, manifest included, into staging(), a
//      hidden ".NAME.partial-PID" folder beside the target.
//   3. commit(files) swaps the set in. A new folder is one rename. Into an
//      existing folder the swap goes file by file with SIGINT/SIGTERM held
//      off: the earlier manifest is moved out first, then the earlier set,
//      then the new files, and the new manifest last. A reader who finds a
//      manifest therefore finds the whole set it lists, the earlier one or
//      the new one; a failed rename puts everything back as it was.
//   4. The destructor, on every path: removes the staging folder, releases
//      the lock and, when nothing was committed, removes the (empty)
//      folders it created, so a failed or interrupted run leaves nothing.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.h"

namespace kvscope {

class OutputLock;

// What kind of output a folder receives.
struct OutputSet {
  std::string manifest;                                   // "manifest.json"
  std::function<bool(const nlohmann::json&)> recognizes;  // an earlier manifest of this kind
  std::function<bool(const std::string&)> may_write;      // a name this kind may write
};

class OutputFolder {
 public:
  OutputFolder(const std::filesystem::path& dir, OutputSet set);
  ~OutputFolder();
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;

  // The folder as the user named it, and as an absolute path.
  const std::filesystem::path& given() const { return given_; }
  const std::filesystem::path& dir() const { return dir_; }
  // The staging folder, created on first use.
  const std::filesystem::path& staging();
  // Files of the earlier run of this kind (its manifest's list).
  const std::set<std::string>& earlier() const { return earlier_; }
  // A note for the user (a stale lock taken over), or "".
  std::string note() const;
  // What an interrupted or failed run leaves: "nothing written to DIR; the
  // files already in it are unchanged" (or "DIR was not created").
  std::string nothing_written() const;

  // Moves `files` (names in staging(), the manifest among them) into the
  // folder, replacing the earlier set. Throws kvscope::Error naming the
  // file that could not be moved; then the folder is as it was.
  void commit(const std::vector<std::string>& files);
  bool committed() const { return committed_; }

  // An error about a file in the staging folder, worded with the file's
  // name in the target folder (what the user knows).
  Error in_target_words(const Error& e) const { return in_target_words(e, given_); }
  static Error in_target_words(const Error& e, const std::filesystem::path& dir);
  // ".NAME.partial-PID" beside `dir`, for this process.
  static std::filesystem::path staging_of(const std::filesystem::path& dir);

 private:
  void refuse_users_file(const std::string& name) const;
  void clean_up() noexcept;

  std::filesystem::path given_, dir_, staging_;
  OutputSet set_;
  std::vector<std::filesystem::path> created_;  // folders made for it, outermost first
  std::unique_ptr<OutputLock> lock_;
  std::set<std::string> earlier_;
  bool existed_ = false;  // the folder was there before this run
  bool committed_ = false;
};

// Removes ".NAME.partial-PID" (and ".NAME.old-PID") folders beside `dir`
// whose process is no longer running; returns how many.
int remove_stale_staging(const std::filesystem::path& dir);

}  // namespace kvscope
