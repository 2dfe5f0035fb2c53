// CPU reference hot paths: the decode GEMV (bandwidth-bound), one decode
// step of attention over growing caches, and a whole decode step of the
// pythia-160m shape.
#include <benchmark/benchmark.h>

#include <random>

#include "backend/backend.h"
#include "backend/cpu/cpu_ops.h"
#include "model/shapes.h"

namespace kvscope {
namespace {

void BM_LinearDecode(benchmark::State& state) {
  const int out = static_cast<int>(state.range(0)), in = static_cast<int>(state.range(1));
  cpu::Linear W;
  W.out = out;
  W.in = in;
  W.w.assign(size_t(out) * in, 0.01f);
  std::vector<float> x(in, 1.0f), y(out);
  for (auto _ : state) {
    cpu::linear(x.data(), 1, W, y.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * out * in * 4);
}
BENCHMARK(BM_LinearDecode)->Args({2304, 768})->Args({3072, 768})->Args({768, 3072})->Args({50304, 768});

void BM_DecodeStep(benchmark::State& state) {
  const auto cfg = shape_config("pythia-160m");
  const auto w = random_weights(cfg, 1);
  const int ctx = static_cast<int>(state.range(0));
  BackendOptions bo;
  bo.max_tokens = ctx + 1;
  auto be = make_backend(Device::Cpu, cfg, w, bo);
  std::vector<int> prompt(ctx);
  std::mt19937 rng(1);
  for (auto& t : prompt) t = static_cast<int>(rng() % cfg.vocab_size);
  ForwardOptions fo;
  ForwardOutput out;
  for (auto _ : state) {
    state.PauseTiming();
    be->reset();
    be->forward(prompt, fo, out);
    state.ResumeTiming();
    const int tok[1] = {1};
    be->forward(tok, fo, out);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecodeStep)->Arg(16)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kvscope

BENCHMARK_MAIN();
