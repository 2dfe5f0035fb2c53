// CPU reference hot paths: the decode GEMV (bandwidth-bound), one decode
// step of attention over growing caches, and a whole decode step of the
// pythia-160m shape.
#include <benchmark/benchmark.h>

#include <cblas.h>

#include <cstring>
#include <random>

#include "backend/backend.h"
#include "backend/cpu/cpu_ops.h"
#include "backend/cpu/matvec.h"
#include "io/ggml_type.h"
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

// One thread, one whole matrix: kvscope's matvec (cpu/matvec.h) for one and
// two input rows against OpenBLAS's sgemv, which linear() used for decode
// before. Shapes: SmolLM2-135M's q, k/v, up, down and head; pythia-160m's
// fused QKV and head.
constexpr std::pair<int, int> kMatvecShapes[] = {{576, 576},   {192, 576},  {1536, 576}, {576, 1536},
                                                  {49152, 576}, {2304, 768}, {50304, 768}};

void matvec_args(benchmark::internal::Benchmark* b) {
  for (auto [out, in] : kMatvecShapes) b->Args({out, in});
}

void BM_SgemvOpenBlas(benchmark::State& state) {
  cpu::use_single_threaded_blas();
  const int out = static_cast<int>(state.range(0)), in = static_cast<int>(state.range(1));
  std::vector<float> w(size_t(out) * in, 0.01f), x(in, 1.0f), y(out);
  for (auto _ : state) {
    cblas_sgemv(CblasRowMajor, CblasNoTrans, out, in, 1.0f, w.data(), in, x.data(), 1, 0.0f, y.data(), 1);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * out * in * 4);
}
BENCHMARK(BM_SgemvOpenBlas)->Apply(matvec_args);

void BM_Matvec(benchmark::State& state) {
  const int out = static_cast<int>(state.range(0)), in = static_cast<int>(state.range(1));
  const int rows = static_cast<int>(state.range(2));
  std::vector<float> w(size_t(out) * in, 0.01f), x(size_t(rows) * in, 1.0f), y(size_t(rows) * out);
  for (auto _ : state) {
    cpu::matvec_rows(x.data(), rows, in, w.data(), 0, out, y.data(), out);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * out * in * 4);  // weight bytes, read once for all rows
}
BENCHMARK(BM_Matvec)->Apply([](benchmark::internal::Benchmark* b) {
  for (int rows : {1, 2})
    for (auto [out, in] : kMatvecShapes) b->Args({out, in, rows});
});

// One thread, one matrix of GGUF blocks read in place (what decode does
// with `--weights stored`): random quants with every half-precision scale
// set to a normal value (random bits would give subnormal and NaN
// products, which time differently). Shapes: Llama-3-8B's q (L3-resident
// here) and its gate (from memory); SmolLM2's up (L2).
void BM_MatvecBlocks(benchmark::State& state) {
  const auto type = static_cast<GgmlType>(state.range(0));
  const int out = static_cast<int>(state.range(1)), in = static_cast<int>(state.range(2));
  const int elems = ggml_block_elements(type), bytes = ggml_block_bytes(type);
  const int64_t blocks = int64_t(out) * (in / elems);
  std::vector<std::byte> w(size_t(blocks) * bytes);
  std::mt19937 rng(1);
  for (auto& b : w) b = std::byte(rng());
  // Where each type keeps its fp16 factors (d, and dmin / m where it has one).
  std::vector<int> halves = {0};
  if (type == GgmlType::Q4_1 || type == GgmlType::Q5_1 || type == GgmlType::Q4_K || type == GgmlType::Q5_K)
    halves = {0, 2};
  if (type == GgmlType::Q6_K) halves = {208};
  if (type == GgmlType::BF16) halves = {};
  for (int64_t b = 0; b < blocks; ++b)
    for (int off : halves) {
      const uint16_t h = 0x2000 + uint16_t(rng() & 0x3FF);  // about 0.008-0.016
      std::memcpy(&w[size_t(b) * bytes + off], &h, 2);
    }
  std::vector<float> x(in), y(out);
  for (auto& v : x) v = float(int(rng() % 2001) - 1000) / 1000.0f;
  for (auto _ : state) {
    cpu::matvec_rows_blocks(type, x.data(), 1, in, w.data(), 0, out, y.data(), out);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(w.size()));
  state.SetItemsProcessed(int64_t(state.iterations()) * out * in);  // weights
}
BENCHMARK(BM_MatvecBlocks)->Apply([](benchmark::internal::Benchmark* b) {
  for (GgmlType t : {GgmlType::Q4_1, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K})
    for (auto [out, in] : {std::pair{1536, 576}, std::pair{4096, 4096}, std::pair{14336, 4096}})
      b->Args({int64_t(t), out, in});
});

// pythia-160m's shape with random weights, a backend for a context of ctx
// tokens, and a random prompt that fills it.
struct DecodeBench {
  ModelConfig cfg = shape_config("pythia-160m");
  ModelWeights w = random_weights(cfg, 1);
  BackendOptions bo;
  std::unique_ptr<Backend> be;
  std::vector<int> prompt;
  explicit DecodeBench(int ctx) : prompt(ctx) {
    bo.max_tokens = ctx + 1;
    be = make_backend(Device::Cpu, cfg, w, bo);
    std::mt19937 rng(1);
    for (auto& t : prompt) t = static_cast<int>(rng() % cfg.vocab_size);
  }
};

void BM_DecodeStep(benchmark::State& state) {
  DecodeBench b(static_cast<int>(state.range(0)));
  auto& be = b.be;
  const auto& prompt = b.prompt;
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

// A decode step of a run and its full-cache reference together
// (Backend::forward_pair, what the metrics cost), for the same shape;
// compare with BM_DecodeStep (one run) at the same context.
void BM_DecodeStepPaired(benchmark::State& state) {
  DecodeBench b(static_cast<int>(state.range(0)));
  auto& be = b.be;
  auto ref = be->spawn(b.bo);
  const auto& prompt = b.prompt;
  ForwardOptions fo;
  ForwardOutput out, ref_out;
  for (auto _ : state) {
    state.PauseTiming();
    be->reset();
    ref->reset();
    be->forward(prompt, fo, out);
    ref->forward(prompt, fo, ref_out);
    state.ResumeTiming();
    const int tok[1] = {1};
    be->forward_pair(tok, fo, out, *ref, fo, ref_out);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecodeStepPaired)->Arg(16)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kvscope

BENCHMARK_MAIN();
