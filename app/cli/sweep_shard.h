// A shard's result (`sweep --shard i/n --out DIR` writes DIR/sweep_shard.json):
// its cells, holding only its (policy, item) units' rows, with what
// sweep-merge needs to check that shards belong together and to write the
// whole sweep's files: the sweep's settings (its identity, as --resume
// checks them), the session with its figure settings, the provenance of
// the whole sweep (its command without --out and --shard) and the units.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/provenance.h"
#include "shard_plan.h"
#include "sweep_results.h"

namespace kvscope::cli {

inline constexpr const char* kShardFileName = "sweep_shard.json";

struct ShardResult {
  ShardSpec shard;
  nlohmann::json identity;  // sweep_identity(): session (figures aside), policies, budgets, dataset, items, ...
  nlohmann::json session;   // SessionConfig::to_json(), figure flags applied
  Provenance provenance;
  nlohmann::json units;     // [[policy, item], ...], items from 1
  std::vector<Cell> cells;  // policy, budget, items and steps (no budget_value, no heatmap)
};

void write_shard_file(const std::filesystem::path& dir, const ShardResult& r);
// Throws kvscope::Error naming the file and the field for anything that is
// not a finished shard of this version's format.
ShardResult read_shard_file(const std::filesystem::path& file);

}  // namespace kvscope::cli
