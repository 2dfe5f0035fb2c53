// How much memory a new allocation of this process can get, the yardstick
// of every up-front "will it fit" check (weights, KV caches, the recorder).
#pragma once

#include <cstdint>
#include <string>

namespace kvscope {

// Bytes available to this process now: the kernel's MemAvailable (free
// pages plus the page cache it can drop), lowered to what the process's
// cgroup still allows (memory.max - memory.current, as under Slurm or a
// container), lowered again by KVSCOPE_MEMORY_MB when that is set (a node
// shared with other jobs; the tests use it to stand in for a small machine).
double available_memory_bytes();

// "12.3 GiB", "456.0 MiB", "789 B": binary units, one decimal past bytes.
std::string format_bytes(double bytes);

}  // namespace kvscope
