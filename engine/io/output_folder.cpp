#include "io/output_folder.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "io/output_lock.h"

namespace kvscope {
namespace {

namespace fs = std::filesystem;

fs::path normalized(const fs::path& dir) {
  std::error_code ec;
  fs::path d = fs::absolute(dir, ec).lexically_normal();
  if (d.filename().empty()) d = d.parent_path();  // "out/" -> "out"
  return d;
}

// A manifest's entry that can only name a file directly in the folder.
bool plain_name(const std::string& n) {
  return !n.empty() && n != "." && n != ".." && n.find('/') == std::string::npos;
}

bool regular_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(fs::symlink_status(p, ec));  // a symlink is not one kvscope wrote
}

// SIGINT and SIGTERM held off while the set is swapped in, so the swap is
// never left half done by a signal; one that arrives is delivered after.
class SignalsHeld {
 public:
  SignalsHeld() {
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGINT);
    sigaddset(&s, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &s, &old_);
  }
  ~SignalsHeld() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

 private:
  sigset_t old_;
};

}  // namespace

int remove_stale_staging(const fs::path& dir) {
  const fs::path d = normalized(dir);
  const std::string name = d.filename().string();
  int removed = 0;
  std::error_code ec;
  for (const std::string kind : {".partial-", ".old-"}) {
    const std::string prefix = "." + name + kind;
    for (fs::directory_iterator it(d.parent_path(), ec), end; !ec && it != end; it.increment(ec)) {
      const std::string n = it->path().filename().string();
      if (n.rfind(prefix, 0) != 0) continue;
      char* stop = nullptr;
      const long pid = std::strtol(n.c_str() + prefix.size(), &stop, 10);
      if (stop == n.c_str() + prefix.size() || *stop != '\0') continue;
      // Our own pid: left by an earlier failed attempt of this process,
      // which holds the lock now, so no other attempt is using it.
      if (pid == static_cast<long>(::getpid()) || !process_alive(pid)) {
        std::error_code rm;
        fs::remove_all(it->path(), rm);
        ++removed;
      }
    }
  }
  return removed;
}

OutputFolder::OutputFolder(const fs::path& dir, OutputSet set)
    : given_(dir), dir_(normalized(dir)), set_(std::move(set)) {
  std::error_code ec;
  const auto st = fs::symlink_status(dir_, ec);
  if (fs::exists(st) && !fs::is_directory(fs::status(dir_, ec)))
    throw Error(given_.string(), "", "exists and is not a directory");
  existed_ = fs::exists(st);
  try {
    // The parent holds the lock and the staging folder.
    std::vector<fs::path> missing;
    for (fs::path p = dir_.parent_path(); !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
      missing.push_back(p);
      if (p == p.parent_path()) break;
    }
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
      if (!fs::create_directory(*it, ec) && !fs::is_directory(*it))
        throw Error(given_.string(), "", "cannot create the folder " + it->string() + ": " + ec.message());
      created_.push_back(*it);
    }
    lock_ = std::make_unique<OutputLock>(dir_, given_.string());
    remove_stale_staging(dir_);
    const fs::path manifest = dir_ / set_.manifest;
    if (fs::exists(fs::symlink_status(manifest, ec))) {
      nlohmann::json m;
      bool ours = false;
      if (regular_file(manifest)) {
        try {
          m = nlohmann::json::parse(std::ifstream(manifest));
          ours = m.is_object() && set_.recognizes(m);
        } catch (const std::exception&) {
        }
      }
      if (!ours) refuse_users_file(set_.manifest);
      earlier_.insert(set_.manifest);
      if (m.contains("files") && m["files"].is_array())
        for (const auto& f : m["files"])
          if (f.is_string() && plain_name(f.get<std::string>()) && regular_file(dir_ / f.get<std::string>()))
            earlier_.insert(f.get<std::string>());
    }
    // Any file of the user's whose name this output may write: refused now,
    // before the work, rather than replaced (or refused) at the end.
    std::vector<std::string> names;
    for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec))
      names.push_back(it->path().filename().string());
    std::sort(names.begin(), names.end());
    for (const auto& n : names)
      if (!earlier_.count(n) && set_.may_write(n)) refuse_users_file(n);
  } catch (...) {
    clean_up();
    throw;
  }
}

OutputFolder::~OutputFolder() { clean_up(); }

void OutputFolder::clean_up() noexcept {
  std::error_code ec;
  if (!staging_.empty()) fs::remove_all(staging_, ec);
  staging_.clear();
  lock_.reset();
  if (!committed_)
    for (auto it = created_.rbegin(); it != created_.rend(); ++it) fs::remove(*it, ec);  // only if still empty
  created_.clear();
}

std::string OutputFolder::note() const { return lock_ ? lock_->takeover_note() : std::string(); }

std::string OutputFolder::nothing_written() const {
  return existed_ ? "nothing written to " + given_.string() + "; the files already in it are unchanged"
                  : "nothing written; " + given_.string() + " was not created";
}

void OutputFolder::refuse_users_file(const std::string& name) const {
  throw Error((given_ / name).string(), "",
              "is not a file kvscope wrote (" + set_.manifest +
                  " there does not list it) and this output would replace it; move it away or choose another folder");
}

const fs::path& OutputFolder::staging() {
  if (staging_.empty()) {
    const fs::path s = staging_of(dir_);
    std::error_code ec;
    fs::remove_all(s, ec);
    if (!fs::create_directory(s, ec))
      throw Error(given_.string(), "", "cannot create the staging folder " + s.string() + ": " + ec.message());
    staging_ = s;
  }
  return staging_;
}

fs::path OutputFolder::staging_of(const fs::path& dir) {
  const fs::path d = normalized(dir);
  return d.parent_path() / ("." + d.filename().string() + ".partial-" + std::to_string(::getpid()));
}

Error OutputFolder::in_target_words(const Error& e, const fs::path& dir) {
  const std::string s = e.source(), st = staging_of(dir).string();
  if (s.rfind(st, 0) != 0) return e;
  return Error((dir / fs::path(s.substr(st.size())).relative_path()).string(), e.field(), e.problem());
}

void OutputFolder::commit(const std::vector<std::string>& files) {
  if (std::find(files.begin(), files.end(), set_.manifest) == files.end())
    throw Error(given_.string(), "", "internal: the set has no " + set_.manifest);
  const fs::path& st = staging();
  std::error_code ec;
  // A file of the user's that appeared while the work ran.
  for (const auto& n : files)
    if (!earlier_.count(n) && fs::exists(fs::symlink_status(dir_ / n, ec))) refuse_users_file(n);
  SignalsHeld held;
  if (!fs::exists(fs::symlink_status(dir_, ec))) {
    fs::rename(st, dir_, ec);  // a new folder: the whole set in one rename
    if (ec) throw Error(given_.string(), "", "cannot move the output into place: " + ec.message());
    staging_.clear();
    committed_ = true;
    return;
  }
  const fs::path replaced = st / ".replaced";
  fs::create_directory(replaced, ec);
  std::vector<std::string> out, in;  // moved so far, for the way back
  auto undo = [&] {
    std::error_code e2;
    for (auto it = in.rbegin(); it != in.rend(); ++it) fs::rename(dir_ / *it, st / *it, e2);
    for (auto it = out.rbegin(); it != out.rend(); ++it) fs::rename(replaced / *it, dir_ / *it, e2);
  };
  auto move = [&](const fs::path& from, const fs::path& to, const std::string& name, std::vector<std::string>& log) {
    fs::rename(from, to, ec);
    if (ec) {
      const std::string why = ec.message();
      undo();
      throw Error((given_ / name).string(), "", "cannot move into place: " + why + "; the folder is as it was");
    }
    log.push_back(name);
  };
  // The earlier manifest first: while the set changes, no manifest lists it.
  std::vector<std::string> earlier(earlier_.begin(), earlier_.end());
  std::stable_partition(earlier.begin(), earlier.end(), [&](const std::string& n) { return n == set_.manifest; });
  for (const auto& n : earlier)
    if (regular_file(dir_ / n)) move(dir_ / n, replaced / n, n, out);
  for (const auto& n : files)
    if (n != set_.manifest) move(st / n, dir_ / n, n, in);
  move(st / set_.manifest, dir_ / set_.manifest, set_.manifest, in);
  committed_ = true;
}

}  // namespace kvscope
