// kvscope's one-shot prefill eviction against NVIDIA kvpress 0.5.5
// (tests/data/kvpress/, written by tools/goldens_kvpress.py): for every
// case of a press kvscope has, the same policy and budget must keep exactly
// the positions the press keeps, in every (layer, KV head). The press ->
// policy mapping is docs/policies.md's ("kvpress's presses in kvscope").
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "session_fixture.h"

namespace kvscope {
namespace {

using nlohmann::json;

CurLeverage parse_leverage(const std::string& text) {
  PolicyParams p;
  set_param_text(p, *find_param("leverage"), text);
  return p.leverage;
}

// The kvscope policy that reproduces a press with these parameters, or
// nothing for a press kvscope does not have yet.
std::optional<PolicyParams> policy_for(const std::string& press, const json& params) {
  PolicyParams p;
  // The press's compression_ratio as kvscope's budget of the same form,
  // rounded as kvpress rounds it (Amount::ratio).
  p.budget = Amount{params.at("compression_ratio").get<double>(), false, true};
  p.window = Amount{0, false};
  p.sinks = 0;
  p.granularity = Granularity::KvHead;
  if (press == "ObservedAttentionPress") {
    p.kind = PolicyKind::H2O;
    p.h2o_score = H2oScore::Mean;
  } else if (press == "SnapKVPress") {
    p.kind = PolicyKind::SnapKV;
    p.window = Amount{params.at("window_size").get<double>(), false};
    p.extra["kernel"] = params.at("kernel_size").get<double>();
  } else if (press == "TOVAPress") {
    // The last query's attention averaged over every query head (one
    // decision per layer); the last token itself always stays.
    p.kind = PolicyKind::TOVA;
    p.granularity = Granularity::Layer;
    p.window = Amount{1, false};
  } else if (press == "StreamingLLMPress") {
    p.kind = PolicyKind::Sink;
    p.sinks = params.at("n_sink").get<int>();
  } else if (press == "PyramidKVPress") {
    // SnapKV's scores under kvpress's per-layer budgets, whose mean is
    // n (1 - ratio) unrounded.
    p.kind = PolicyKind::PyramidKV;
    p.window = Amount{params.at("window_size").get<double>(), false};
    p.extra["kernel"] = params.at("kernel_size").get<double>();
  } else if (press == "KnormPress") {
    p.kind = PolicyKind::Knorm;
  } else if (press == "KeyDiffPress") {
    p.kind = PolicyKind::KeyDiff;
  } else if (press == "CURPress") {
    // kvpress scores its first num_sinks positions 1.0: kvscope's sinks.
    p.kind = PolicyKind::Cur;
    p.sinks = params.at("num_sinks").get<int>();
    p.extra["cur_window"] =
        params.at("use_local_approximation").get<bool>() ? params.at("local_window_size").get<double>() : 0.0;
    p.leverage = parse_leverage(params.at("leverage_type").get<std::string>());
    if (params.at("use_random_leverage").get<bool>()) return std::nullopt;  // a random projection kvscope lacks
  } else if (press == "LagKVPress") {
    p.kind = PolicyKind::LagKv;
    p.sinks = params.at("n_sink").get<int>();
    p.extra["lag"] = params.at("lag_size").get<double>();
    if (params.at("cross_scoring").get<bool>()) return std::nullopt;
  } else if (press == "LeverageScorePress") {
    // The exact leverage: kvpress's Gaussian sketch of 48 columns spans
    // head_dim and decides no cell (the generator checks five seeds).
    p.kind = PolicyKind::Leverage;
  } else if (press == "ExpectedAttentionPress") {
    // kvpress's n_sink first positions: left out of the query moments and
    // the softmax, and kept (scored the maximum + 1): kvscope's sinks.
    p.kind = PolicyKind::Expected;
    p.sinks = params.at("n_sink").get<int>();
    p.extra["future_positions"] = params.at("n_future_positions").get<double>();
    p.query_covariance = params.at("use_covariance").get<bool>() ? QueryCovariance::On : QueryCovariance::Off;
    p.value_norm = params.at("use_vnorm").get<bool>() ? ValueNorm::On : ValueNorm::Off;
    if (params.at("epsilon").get<double>() != 0.0) return std::nullopt;  // kvscope adds no epsilon
  } else if (press == "CriticalKVPress") {
    // The inner press's policy under CriticalKV (epsilon is kvpress's 1e-4).
    json inner = params.at("inner_params");
    inner["compression_ratio"] = params.at("compression_ratio");
    auto q = policy_for(params.at("press").get<std::string>(), inner);
    if (q) {
      EXPECT_EQ(params.at("epsilon").get<double>(), 1e-4);
      q->critical_kv = CriticalKv::On;
      q->extra["first_stage"] = params.at("first_stage_ratio").get<double>();
    }
    return q;
  } else if (press == "ChunkKVPress") {
    // The inner press's policy, choosing whole chunks per layer.
    json inner = params.at("inner_params");
    inner["compression_ratio"] = params.at("compression_ratio");
    auto q = policy_for(params.at("press").get<std::string>(), inner);
    if (q) {
      q->granularity = Granularity::Layer;
      q->extra["chunk_length"] = params.at("chunk_length").get<double>();
    }
    return q;
  } else if (press == "AdaKVPress") {
    // The inner press's policy with AdaKV's head-adaptive split of each
    // layer's n_kv_heads x k slots.
    json inner = params.at("inner_params");
    inner["compression_ratio"] = params.at("compression_ratio");
    auto q = policy_for(params.at("press").get<std::string>(), inner);
    if (q) {
      q->head_budgets = HeadBudgets::Adaptive;
      q->extra["safeguard"] = params.at("alpha_safeguard").get<double>();
    }
    return q;
  } else {
    return std::nullopt;
  }
  return p;
}

std::vector<std::filesystem::path> golden_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(test::data_dir() / "kvpress"))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(KvpressGoldens, OneShotPrefillKeepsWhatEachPressKeeps) {
  std::map<std::string, int> cells;     // press -> (layer, KV head) cells compared
  std::map<std::string, int> not_here;  // press -> cases of a press kvscope lacks
  std::map<std::string, int> tied;      // press -> cells decided by torch.topk's tie rule, compared up to the tie
  std::map<std::string, json> scores_of;  // a group of cases -> kvpress's scores
  const auto files = golden_files();
  ASSERT_GE(files.size(), 3u) << "tests/data/kvpress holds the goldens";
  for (const auto& file : files) {
    SCOPED_TRACE(file.filename().string());
    std::ifstream in(file);
    const json g = json::parse(in);
    ASSERT_EQ(g.at("format"), "kvscope-kvpress-goldens");
    const std::string model = std::filesystem::path(g.at("model").get<std::string>()).filename().string();
    for (const json& c : g.at("cases")) {
      const std::string press = c.at("press");
      const int n = c.at("n");
      const auto params = policy_for(press, c.at("params"));
      if (!params) {
        ++not_here[press];
        continue;
      }
      SCOPED_TRACE(press + " " + c.at("params").dump() + " prompt " + std::to_string(c.at("prompt").get<int>()));
      SessionConfig cfg = test::config(params->kind, "100%", 1);
      cfg.prompt_ids = g.at("prompts").at(c.at("prompt").get<int>()).get<std::vector<int>>();
      ASSERT_EQ(static_cast<int>(cfg.prompt_ids.size()), n);
      cfg.policy = *params;
      cfg.recording.metrics = false;
      Session s(test::bundle(model), cfg);
      s.prefill();
      const KvLayout& lay = s.recorder().layout();
      const json& kept = c.at("kept");
      ASSERT_EQ(static_cast<int>(kept.size()), lay.n_kv_layers);
      // kvpress's per-position scores of this case (carried by the first
      // case of a group of cases that share them).
      std::string group = press + " " + c.at("prompt").dump();
      for (const auto& [key, value] : c.at("params").items())
        if (key != "compression_ratio") group += " " + key + "=" + value.dump();
      if (c.contains("scores")) scores_of[group] = c.at("scores");
      // Cells whose kept set torch.topk's tie rule decides (LagKV's rank
      // levels): [layer, head, tied score, ...].
      std::map<std::pair<int, int>, double> tie_at;
      if (c.contains("boundary_ties"))
        for (const json& t : c.at("boundary_ties")) tie_at[{t[0].get<int>(), t[1].get<int>()}] = t[2].get<double>();
      for (int l = 0; l < lay.n_kv_layers; ++l) {
        ASSERT_EQ(static_cast<int>(kept[l].size()), lay.n_kv_heads);
        // kvpress's rounding of the budget: per head, (AdaKV) the layer's
        // total, or (ChunkKV) whole chunks.
        const int per_head = s.policy().segment_budget(lay, lay.segment(l, 0));
        if (press == "ChunkKVPress")
          EXPECT_EQ(c.at("n_kept")[l].get<int>(), s.backend().kv().len(lay.segment(l, 0))) << "layer " << l;
        else EXPECT_EQ(c.at("n_kept")[l].get<int>(), press == "AdaKVPress" ? per_head * lay.n_kv_heads : per_head);
        for (int h = 0; h < lay.n_kv_heads; ++h) {
          const std::vector<int> want = kept[l][h].get<std::vector<int>>();
          const auto& got_row = s.backend().kv().positions(lay.segment(l, h));
          const std::vector<int> got(got_row.begin(), got_row.end());
          ++cells[press];
          const auto tie = tie_at.find({l, h});
          if (tie == tie_at.end()) {
            EXPECT_EQ(got, want) << "layer " << l << " KV head " << h;
            continue;
          }
          // A tied cell: the same number kept, and the two sets differ only
          // in positions that hold the tied score.
          ++tied[press];
          ASSERT_TRUE(scores_of.count(group)) << "no scores for " << group;
          const json& sc = scores_of[group].at(l).at(h);
          EXPECT_EQ(got.size(), want.size()) << "layer " << l << " KV head " << h;
          std::vector<int> differ;
          std::set_symmetric_difference(got.begin(), got.end(), want.begin(), want.end(), std::back_inserter(differ));
          for (int p : differ)
            EXPECT_EQ(sc.at(p).get<double>(), tie->second)
                << "layer " << l << " KV head " << h << ": position " << p << " is not among the tied";
        }
      }
    }
  }
  // Every press kvscope has is compared on every file: none may pass by
  // being absent from the goldens.
  for (const char* press : {"ObservedAttentionPress", "SnapKVPress", "PyramidKVPress", "TOVAPress", "StreamingLLMPress",
                            "KnormPress", "KeyDiffPress", "AdaKVPress", "ChunkKVPress", "CURPress", "LagKVPress",
                            "LeverageScorePress", "CriticalKVPress", "ExpectedAttentionPress"})
    EXPECT_GT(cells[press], 0) << press << " has no golden cell";
  for (const auto& [press, n] : cells)
    std::printf("kvpress %s: %d cells compared (%d of them up to a tie)\n", press.c_str(), n, tied[press]);
  for (const auto& [press, n] : not_here)
    std::printf("kvpress %s: %d cases not compared (no kvscope policy yet)\n", press.c_str(), n);
}

// Beyond the kept sets: kvscope's ExpectedAttention scores equal kvpress's
// recorded ones (float32, from its own float32 arithmetic) to 1e-4
// relative, slot for slot, for every position kvscope keeps, the sinks
// aside (kvpress pads them with its layer's maximum + 1, kvscope with its
// segment's).
TEST(KvpressGoldens, ExpectedAttentionScoresAreKvpresss) {
  int compared = 0;
  for (const auto& file : golden_files()) {
    SCOPED_TRACE(file.filename().string());
    std::ifstream in(file);
    const json g = json::parse(in);
    const std::string model = std::filesystem::path(g.at("model").get<std::string>()).filename().string();
    for (const json& c : g.at("cases")) {
      if (c.at("press") != "ExpectedAttentionPress" || !c.contains("scores")) continue;
      const auto params = policy_for("ExpectedAttentionPress", c.at("params"));
      ASSERT_TRUE(params);
      SessionConfig cfg = test::config(params->kind, "100%", 1);
      cfg.prompt_ids = g.at("prompts").at(c.at("prompt").get<int>()).get<std::vector<int>>();
      cfg.policy = *params;
      cfg.recording.metrics = false;
      Session s(test::bundle(model), cfg);
      s.prefill();
      const KvLayout& lay = s.recorder().layout();
      const int sinks = c.at("params").at("n_sink").get<int>();
      for (int l = 0; l < lay.n_kv_layers; ++l)
        for (int h = 0; h < lay.n_kv_heads; ++h) {
          const int seg = lay.segment(l, h);
          const auto& pos = s.backend().kv().positions(seg);
          const auto& got = s.backend().slot_stats(seg);
          ASSERT_EQ(got.size(), pos.size());
          for (std::size_t j = 0; j < pos.size(); ++j) {
            if (pos[j] < sinks) continue;
            const double want = c.at("scores").at(l).at(h).at(pos[j]).get<double>();
            EXPECT_NEAR(got[j], want, 1e-4 * std::fabs(want))
                << "layer " << l << " KV head " << h << " position " << pos[j];
            ++compared;
          }
        }
    }
  }
  EXPECT_GT(compared, 0) << "no ExpectedAttention case carries kvpress's scores";
  std::printf("kvpress ExpectedAttentionPress: %d scores compared\n", compared);
}

// The positions every (layer, KV head) of `s` holds, against a golden's
// [layer][kv_head] lists.
void expect_positions(const Session& s, const json& want, const std::string& when) {
  const KvLayout& lay = s.recorder().layout();
  ASSERT_EQ(static_cast<int>(want.size()), lay.n_kv_layers) << when;
  for (int l = 0; l < lay.n_kv_layers; ++l) {
    ASSERT_EQ(static_cast<int>(want[l].size()), lay.n_kv_heads) << when;
    for (int h = 0; h < lay.n_kv_heads; ++h) {
      const auto& got = s.backend().kv().positions(lay.segment(l, h));
      EXPECT_EQ(std::vector<int>(got.begin(), got.end()), want[l][h].get<std::vector<int>>())
          << when << ", layer " << l << " KV head " << h;
    }
  }
}

// kvpress's DecodingPress(base press, compression_interval, target_size)
// is the base press's kvscope policy under the decoding schedule
// (--compression-interval N, budget target_size): the prompt stays whole,
// and after decode steps N, 2N, ... every (layer, KV head) holds exactly
// the positions kvpress's cache holds, teacher-forced on the same tokens.
TEST(KvpressGoldens, DecodingScheduleKeepsWhatDecodingPressKeeps) {
  std::map<std::string, int> cells;  // base press -> (layer, KV head) cells compared after a cut
  for (const auto& file : golden_files()) {
    SCOPED_TRACE(file.filename().string());
    std::ifstream in(file);
    const json g = json::parse(in);
    const std::string model = std::filesystem::path(g.at("model").get<std::string>()).filename().string();
    ASSERT_TRUE(g.contains("decoding_cases")) << "goldens of version 2 or later";
    for (const json& c : g.at("decoding_cases")) {
      const std::string press = c.at("base_press");
      SessionConfig cfg = test::config(PolicyKind::Full, "100%", c.at("steps").get<int>());
      PolicyParams& p = cfg.policy;
      p.budget = Amount{c.at("target_size").get<double>(), false};
      p.window = Amount{0, false};
      p.sinks = 0;
      p.granularity = Granularity::KvHead;
      p.compression_interval = c.at("interval").get<int>();
      if (press == "KnormPress") {
        p.kind = PolicyKind::Knorm;
      } else if (press == "KeyDiffPress") {
        p.kind = PolicyKind::KeyDiff;
      } else if (press == "TOVAPress") {
        p.kind = PolicyKind::TOVA;  // as in the one-shot mapping: one decision per layer, the newest stays
        p.granularity = Granularity::Layer;
        p.window = Amount{1, false};
      } else {
        ADD_FAILURE() << "no kvscope policy for DecodingPress(" << press << ")";
        continue;
      }
      SCOPED_TRACE("DecodingPress(" + press + ", interval " + c.at("interval").dump() + ", target " +
                   c.at("target_size").dump() + ") prompt " + c.at("prompt").dump());
      cfg.prompt.clear();
      cfg.prompt_ids = g.at("prompts").at(c.at("prompt").get<int>()).get<std::vector<int>>();
      cfg.continuation_ids = c.at("continuation").get<std::vector<int>>();
      cfg.recording.metrics = false;
      Session s(test::bundle(model), cfg);
      s.prefill();
      std::map<int, const json*> cut_at;
      for (const json& cut : c.at("compressions")) cut_at[cut.at("step").get<int>()] = &cut.at("kept");
      const int steps = c.at("steps").get<int>();
      for (int t = 1; t <= steps; ++t) {
        s.step();  // false after the last one: the run is complete
        ASSERT_EQ(s.current_row(), t);
        if (const auto it = cut_at.find(t); it != cut_at.end()) {
          expect_positions(s, *it->second, "after the cut at step " + std::to_string(t));
          cells[press] += s.recorder().layout().n_segments();
        }
      }
      expect_positions(s, c.at("final_kept"), "after the last step");
    }
  }
  for (const char* press : {"KnormPress", "KeyDiffPress", "TOVAPress"})
    EXPECT_GT(cells[press], 0) << "DecodingPress(" << press << ") has no golden cell";
  for (const auto& [press, n] : cells) std::printf("kvpress DecodingPress(%s): %d cells compared\n", press.c_str(), n);
}

}  // namespace
}  // namespace kvscope
