#include "io/host_memory.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>

namespace kvscope {
namespace {

double meminfo_available() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  long long kb = 0;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return double(kb) * 1024.0;
  // Free pages alone: they refused a 4 GB model on a machine whose 12 GB
  // of page cache held the files just read, so only when MemAvailable is missing.
  return double(sysconf(_SC_AVPHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
}

// A number from a cgroup file; infinity for "max", a missing file or a
// value past any real machine (cgroup v1 writes 2^63 rounded to a page for
// "no limit").
double cgroup_value(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return std::numeric_limits<double>::infinity();
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (!end || *end != '\0' || v >= 1e18) return std::numeric_limits<double>::infinity();
  return v;
}

// A key's value in a cgroup's memory.stat ("inactive_file 123"); 0 when absent.
double stat_value(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string k;
  double v = 0;
  while (in >> k >> v)
    if (k == key) return v;
  return 0;
}

// Room left in one cgroup: its limit minus what it uses, less the page
// cache it could drop (inactive files, as MemAvailable counts them);
// infinity without a limit.
double headroom(const std::string& dir, const char* limit_file, const char* usage_file, const char* inactive_key) {
  const double limit = cgroup_value(dir + "/" + limit_file);
  if (limit == std::numeric_limits<double>::infinity()) return limit;
  const double used = cgroup_value(dir + "/" + usage_file);
  if (used == std::numeric_limits<double>::infinity()) return limit;
  const double cache = std::min(used, stat_value(dir + "/memory.stat", inactive_key));
  return std::max(0.0, limit - (used - cache));
}

// The smallest room of this process's memory cgroup and every group above
// it (Slurm and systemd put the limit on a parent of the task's group):
// v2 names one group ("0::/path"), v1 a group per controller ("4:memory:/path").
double cgroup_headroom() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  double room = std::numeric_limits<double>::infinity();
  auto walk_up = [&](const std::string& mount, std::string path, const char* limit, const char* usage,
                     const char* inactive) {
    while (true) {
      room = std::min(room, headroom(mount + (path == "/" ? std::string() : path), limit, usage, inactive));
      const auto slash = path.find_last_of('/');
      if (path.empty() || path == "/" || slash == std::string::npos) break;
      path = slash == 0 ? "/" : path.substr(0, slash);
    }
  };
  while (std::getline(in, line)) {
    if (line.rfind("0::", 0) == 0)
      walk_up("/sys/fs/cgroup", line.substr(3), "memory.max", "memory.current", "inactive_file");
    const auto colon = line.find(':');
    if (colon != std::string::npos && line.compare(colon + 1, 7, "memory:") == 0)
      walk_up("/sys/fs/cgroup/memory", line.substr(colon + 8), "memory.limit_in_bytes", "memory.usage_in_bytes",
              "total_inactive_file");
  }
  return room;
}

}  // namespace

double available_memory_bytes() {
  double avail = std::min(meminfo_available(), cgroup_headroom());
  if (const char* env = std::getenv("KVSCOPE_MEMORY_MB"); env && *env) {
    char* end = nullptr;
    const double mb = std::strtod(env, &end);
    if (end && *end == '\0' && mb > 0) avail = std::min(avail, mb * 1024.0 * 1024.0);
  }
  return avail;
}

std::string format_bytes(double bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, kUnits[u]);
  return buf;
}

}  // namespace kvscope
