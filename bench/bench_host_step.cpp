// The host's share of a session's decode step, without any model compute:
// choose the slots to keep (selection.h), record the row (recorder.h) and
// apply the eviction to the book, for a benchmark shape's KV layout with a
// cache held at B slots per segment. On the CPU backend this work runs
// beside the output head on another thread; on CUDA it runs after the
// step's kernels, while the GPU waits, so every millisecond here is a
// millisecond added to a GPU decode step (a llama-2-7b step at the memory
// floor of an H100 is about 4 ms). Numbers in bench/NOTES.md.
//
//   build/release/bench/bench_host_step [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <chrono>
#include <random>

#include "backend/parallel.h"
#include "kv/kv_book.h"
#include "kv/kv_layout.h"
#include "model/shapes.h"
#include "policy/params.h"
#include "policy/policy.h"
#include "policy/selection.h"
#include "session/recorder.h"

namespace kvscope {
namespace {

constexpr const char* kShapes[] = {"llama-2-7b", "llama-3.2-1b", "pythia-160m"};
constexpr PolicyKind kPolicies[] = {PolicyKind::H2O, PolicyKind::Window, PolicyKind::TOVA};
constexpr int kSteps = 48;  // decode steps timed: the recorder holds them all, as a session's does

// Args: shape index, policy index, slots kept per segment, recorded layers (0 or 1).
void BM_HostStep(benchmark::State& state) {
  const ModelConfig cfg = shape_config(kShapes[state.range(0)]);
  const int kept = static_cast<int>(state.range(2));
  const bool record_one_layer = state.range(3) != 0;
  const KvLayout layout = KvLayout::from_config(cfg);
  const int S = layout.n_segments();
  const int prompt = 2 * kept;  // a 50% budget of the prompt
  PolicyParams pp;
  pp.kind = kPolicies[state.range(1)];
  pp.budget = Amount{50, true};
  const int context = prompt + kSteps + 1;
  const auto policy = make_policy(resolve_policy(pp, prompt, context));

  KvBook book(layout, kept + 1);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<std::vector<float>> stats(S);
  std::vector<int> rope(S);
  int next_pos = prompt - kept;  // the cache holds the prompt's last `kept` positions
  for (int i = 0; i < kept; ++i, ++next_pos) {
    std::fill(rope.begin(), rope.end(), next_pos);
    book.append(next_pos, rope);
    for (auto& s : stats) s.push_back(u(rng));
  }
  auto stat_of = [&](int s) -> const std::vector<float>& { return stats[s]; };
  std::vector<int> tokens(context, 1);

  // One recorded layer's captured row for the step's query: every head over its segment.
  std::vector<AttentionRows> captures;
  std::vector<int> recorded_layers;
  if (record_one_layer) recorded_layers.push_back(cfg.n_layers / 2);
  const int positions = context;
  Recorder recorder(layout, kSteps + 1, positions, recorded_layers);
  int row = 0;
  SlotChoice choice;
  SelectionScratch scratch;
  // Each part's share, reported as counters (ms a step).
  using Clock = std::chrono::steady_clock;
  double t_append = 0, t_choose = 0, t_record = 0, t_evict = 0;
  auto since = [](Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); };
  for (auto _ : state) {
    auto t0 = Clock::now();
    // This step's token: appended to every segment, its statistic added.
    std::fill(rope.begin(), rope.end(), next_pos);
    book.append(next_pos, rope);
    for (auto& s : stats) {
      for (float& v : s) v *= 0.999f;  // what an accumulating statistic costs to touch
      s.push_back(u(rng));
    }
    if (record_one_layer) {
      captures.resize(1);
      AttentionRows& a = captures[0];
      a.layer = recorded_layers[0];
      a.n_queries = 1;
      a.row_len.assign(cfg.n_heads, 0);
      a.offset.assign(cfg.n_heads, 0);
      int64_t total = 0;
      for (int h = 0; h < cfg.n_heads; ++h) {
        a.row_len[h] = book.len(layout.segment_of(a.layer, h));
        a.offset[h] = total;
        total += a.row_len[h];
      }
      a.probs.assign(std::size_t(total), 1.0f / float(kept + 1));
    }
    t_append += since(t0);
    t0 = Clock::now();
    choose_slots(*policy, book, stat_of, next_pos, row + 1, choice, scratch);
    t_choose += since(t0);
    t0 = Clock::now();
    recorder.record(row, book, choice, policy->ranking() == Ranking::Statistic, stat_of, captures, row + 1, tokens,
                    policy->evicts());
    t_record += since(t0);
    t0 = Clock::now();
    if (policy->evicts() && choice.dropped > 0)  // as Session::evict: runs of segments in parallel
      parallel_runs(S, runs_for(S, book.total_slots()), [&](int, int s) {
        book.retain(s, choice.keep[s]);
        auto& st = stats[s];
        for (std::size_t i = 0; i < choice.keep[s].size(); ++i) st[i] = st[choice.keep[s][i]];
        st.resize(choice.keep[s].size());
      });
    t_evict += since(t0);
    ++row;
    ++next_pos;
  }
  state.counters["segments"] = S;
  const double steps = double(state.iterations());
  state.counters["append_ms"] = t_append / steps;
  state.counters["choose_ms"] = t_choose / steps;
  state.counters["record_ms"] = t_record / steps;
  state.counters["evict_ms"] = t_evict / steps;
  state.SetLabel(std::string(kShapes[state.range(0)]) + " " + policy_name(pp.kind) +
                 (record_one_layer ? ", one layer recorded" : ""));
}
BENCHMARK(BM_HostStep)
    ->ArgsProduct({{0, 1, 2}, {0, 1, 2}, {1024}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(kSteps);

}  // namespace
}  // namespace kvscope

BENCHMARK_MAIN();
