// How `sweep --shard i/n` splits a sweep: its units are (policy, item)
// pairs (a session sweep has one item), each run whole on one shard, so a
// policy's budgets and seeds still share each prompt's forward pass
// (evaluate_many). Units go to shards by cost, longest first, each to the
// least loaded shard (ties: the lower shard), a deterministic plan every
// shard and the merge compute alike from the sweep's settings.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvscope::cli {

struct ShardSpec {
  int index = 0, count = 1;  // shard `index` of `count`, from 0
  std::string text() const { return std::to_string(index) + "/" + std::to_string(count); }
};

// "i/n" with 0 <= i < n; throws Error("--shard", ...) otherwise.
ShardSpec parse_shard(const std::string& text);

// The shard of every unit, given each unit's cost (prompt tokens times the
// runs it makes: budgets x seeds, one budget for the full cache).
std::vector<int> plan_shards(const std::vector<int64_t>& costs, int count);

}  // namespace kvscope::cli
