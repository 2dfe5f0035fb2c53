#include "shard_plan.h"

#include <algorithm>
#include <numeric>

#include "common/error.h"

namespace kvscope::cli {

ShardSpec parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  auto number = [&](const std::string& s) {
    if (s.empty() || s.size() > 9 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
      throw Error("--shard", "", "expected i/n (shard i of n, from 0), got '" + text + "'");
    return std::stoi(s);
  };
  if (slash == std::string::npos) number("");
  ShardSpec s{number(text.substr(0, slash)), number(text.substr(slash + 1))};
  if (s.count < 1) throw Error("--shard", "", "n must be at least 1, got '" + text + "'");
  if (s.index >= s.count)
    throw Error("--shard", "",
                "i must be below n (shards 0 .. " + std::to_string(s.count - 1) + "), got '" + text + "'");
  return s;
}

std::vector<int> plan_shards(const std::vector<int64_t>& costs, int count) {
  std::vector<std::size_t> order(costs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });
  std::vector<int64_t> load(static_cast<std::size_t>(count), 0);
  std::vector<int> owner(costs.size(), 0);
  for (std::size_t u : order) {
    const auto least = std::min_element(load.begin(), load.end()) - load.begin();  // the first of equal loads
    owner[u] = static_cast<int>(least);
    load[static_cast<std::size_t>(least)] += std::max<int64_t>(costs[u], 1);
  }
  return owner;
}

}  // namespace kvscope::cli
