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

double headroom(const std::string& limit_file, const std::string& usage_file) {
  const double limit = cgroup_value(limit_file);
  if (limit == std::numeric_limits<double>::infinity()) return limit;
  const double used = cgroup_value(usage_file);
  return used == std::numeric_limits<double>::infinity() ? limit : std::max(0.0, limit - used);
}

// The limit of this process's memory cgroup minus what the group uses now:
// v2 names one group ("0::/path"), v1 a group per controller ("4:memory:/path").
double cgroup_headroom() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  double room = std::numeric_limits<double>::infinity();
  while (std::getline(in, line)) {
    if (line.rfind("0::", 0) == 0) {
      const std::string dir = "/sys/fs/cgroup" + (line.substr(3) == "/" ? std::string() : line.substr(3));
      room = std::min(room, headroom(dir + "/memory.max", dir + "/memory.current"));
    }
    const auto colon = line.find(':');
    if (colon != std::string::npos && line.compare(colon + 1, 7, "memory:") == 0) {
      const std::string path = line.substr(colon + 8);
      const std::string dir = "/sys/fs/cgroup/memory" + (path == "/" ? std::string() : path);
      room = std::min(room, headroom(dir + "/memory.limit_in_bytes", dir + "/memory.usage_in_bytes"));
    }
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
