#include "sweep_shard.h"

#include "common/error.h"
#include "io/atomic_file.h"
#include "io/json_file.h"

namespace kvscope::cli {
namespace {

constexpr const char* kShardFormat = "kvscope-sweep-shard";
constexpr int kVersion = 1;

}  // namespace

void write_shard_file(const std::filesystem::path& dir, const ShardResult& r) {
  nlohmann::json cells = nlohmann::json::array();
  for (const Cell& c : r.cells) {
    nlohmann::json j = {{"policy", c.policy}, {"budget", c.budget}, {"items", rows_json(c.items)}};
    if (!c.steps.empty()) j["steps"] = rows_json(c.steps);
    cells.push_back(std::move(j));
  }
  const nlohmann::json j = {
      {"format", kShardFormat}, {"version", kVersion},  {"shard", {{"index", r.shard.index}, {"count", r.shard.count}}},
      {"identity", r.identity}, {"session", r.session}, {"provenance", to_json(r.provenance)},
      {"units", r.units},       {"cells", cells}};
  write_text_file(dir / kShardFileName, j.dump(1) + "\n");
}

ShardResult read_shard_file(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec))
    throw Error(file.string(), "",
                "missing: not a finished shard (a shard writes it when its last cell is done; "
                "run the shard again with --resume)");
  const nlohmann::json j = read_json_file(file);
  std::string field = "format";
  try {
    if (j.at("format") != kShardFormat) throw Error(file.string(), "format", "not a kvscope sweep shard");
    field = "version";
    if (j.at("version") != kVersion)
      throw Error(file.string(), "version",
                  "shard format " + j.at("version").dump() + "; this kvscope reads " + std::to_string(kVersion));
    ShardResult r;
    field = "shard";
    r.shard = {j.at("shard").at("index").get<int>(), j.at("shard").at("count").get<int>()};
    if (r.shard.count < 1 || r.shard.index < 0 || r.shard.index >= r.shard.count)
      throw Error(file.string(), "shard", "not a shard i of n with 0 <= i < n");
    field = "identity";
    r.identity = j.at("identity");
    field = "session";
    r.session = j.at("session");
    field = "provenance";
    r.provenance = provenance_from_json(j.at("provenance"));
    field = "units";
    r.units = j.at("units");
    field = "cells";
    for (const auto& c : j.at("cells")) {
      Cell cell;
      cell.policy = c.at("policy").get<std::string>();
      cell.budget = c.at("budget").get<std::string>();
      cell.items = rows_from_json(c.at("items"), cell.policy, cell.budget);
      if (c.contains("steps")) cell.steps = rows_from_json(c.at("steps"), cell.policy, cell.budget);
      r.cells.push_back(std::move(cell));
    }
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw Error(file.string(), field, std::string("malformed: ") + e.what());
  }
}

}  // namespace kvscope::cli
