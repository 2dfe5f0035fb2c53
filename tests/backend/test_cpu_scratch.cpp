// What the CPU backend holds: a prompt's activations and attention scores
// grow with its length (rows x width, a block of rows x slots per thread)
// and are returned before the head is read, so the decode steps that
// follow hold no more than those of a run that never had a prompt; and a
// max over readers holds one row per segment, not one per query row
// (bench/NOTES.md: resident memory at long prompts).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/parallel.h"
#include "golden.h"
#include "io/zeroed_pages.h"
#include "model/loader.h"

namespace kvscope {
namespace {

constexpr int kPrompt = 56;

// The setup the tests here share: a tiny checkpoint with room for
// `capacity` tokens (RoPE beyond its own 128 positions where asked) and
// the first n tokens of its golden prompt, repeated as needed.
struct Tiny {
  ModelFiles files;
  test::Golden golden;
  Tiny(const std::string& model, int capacity)
      : files(load_model_files(test::model_dir(model))), golden(test::Golden::load(model)) {
    files.config.max_positions = std::max(files.config.max_positions, capacity);
  }
  std::shared_ptr<const CpuModel> model() const { return CpuModel::create(files.config, files.weights); }
  std::vector<int> prompt(int n) const {
    std::vector<int> p;
    for (int i = 0; i < n; ++i) p.push_back(golden.prompt[i % golden.prompt.size()]);
    return p;
  }
  int token(int i) const { return golden.prompt[i % golden.prompt.size()]; }
};

struct Held {
  std::size_t after_prompt = 0, after_step = 0, after_two_steps = 0;  // scratch_bytes()
  std::vector<float> logits;                                          // the last step's
};

// kPrompt tokens as one prompt call (or one token a call), then two decode
// steps, with the statistic `reduce` (Max also holds a block of rows'
// maxima per thread while a call runs).
Held run(bool as_prompt, ReaderReduce reduce) {
  const Tiny tiny("llama_gqa", 64);
  BackendOptions bo;
  bo.max_tokens = 64;
  CpuBackend be(tiny.model(), bo);
  ForwardOptions fo;
  fo.stats.source = StatSource::Attention;
  fo.stats.reduce = reduce;
  fo.logits_to_host = true;
  ForwardOutput out;
  const std::vector<int> prompt = tiny.prompt(kPrompt);
  if (as_prompt) {
    be.forward(prompt, fo, out);
  } else {
    for (const int t : prompt) be.forward(std::span<const int>(&t, 1), fo, out);
  }
  Held h;
  h.after_prompt = be.scratch_bytes();
  const int tok[1] = {tiny.token(1)};
  be.forward(tok, fo, out);
  h.after_step = be.scratch_bytes();
  be.forward(tok, fo, out);
  h.after_two_steps = be.scratch_bytes();
  h.logits = out.logits;
  return h;
}

TEST(CpuScratch, APromptsRowsAreNotKeptForTheDecodeSteps) {
  const auto m = load_model_files(test::model_dir("llama_gqa"));
  const std::size_t prompt_activations = std::size_t(kPrompt) * (m.config.hidden + m.config.intermediate) * 4;
  for (const ReaderReduce reduce : {ReaderReduce::Mean, ReaderReduce::Max}) {
    const Held prompt = run(true, reduce), steps = run(false, reduce);
    // Right after the prompt: less than its rows' activations (the head's
    // input is one row), and the steps that follow hold no more than a
    // run fed one token at a time, give or take the attention scratch of
    // the threads that happened to run a task (one per pool thread, a
    // step's scores for every query head at most).
    const std::size_t per_thread = std::size_t(m.config.n_heads) * (kPrompt + 2) * sizeof(float);
    const std::size_t slack = std::size_t(pool_threads() - 1) * per_thread;
    EXPECT_LT(prompt.after_prompt, prompt_activations);
    EXPECT_LT(prompt.after_step, prompt_activations);
    EXPECT_LE(prompt.after_step, steps.after_step + slack);
    // A step's scores grow with the slots, and a vector that grows at
    // most doubles its capacity.
    EXPECT_LE(prompt.after_two_steps, 2 * (steps.after_two_steps + slack));
    // The same logits either way (to rounding: a prompt's products are
    // matrix products, a step's matrix-vector products).
    ASSERT_EQ(prompt.logits.size(), steps.logits.size());
    for (std::size_t i = 0; i < prompt.logits.size(); ++i) EXPECT_NEAR(prompt.logits[i], steps.logits[i], 1e-4);
  }
}

// What a prompt call holds while its layers run (between_layers), with
// the statistic of `reduce` over the readers of each segment.
struct DuringPrompt {
  std::size_t scratch = 0, contributions = 0;  // the largest seen
  int segments = 0, slots = 0;
};

DuringPrompt during_prompt(const std::string& model, int tokens, ReaderReduce reduce) {
  const Tiny tiny(model, tokens);
  BackendOptions bo;
  bo.max_tokens = tokens;
  CpuBackend be(tiny.model(), bo);
  ForwardOptions fo;
  fo.stats.source = StatSource::Attention;
  fo.stats.reduce = reduce;
  DuringPrompt d;
  fo.between_layers = [&](int) {
    d.scratch = std::max(d.scratch, be.scratch_bytes());
    d.contributions = std::max(d.contributions, be.contribution_bytes());
  };
  ForwardOutput out;
  be.forward(tiny.prompt(tokens), fo, out);
  d.segments = be.kv().layout().n_segments();
  d.slots = tokens;
  return d;
}

// A max over the query heads reading a segment is taken row by row, then
// the rows are summed: each block of query rows is summed as it is done,
// so a prompt holds one row per segment (as a mean does) and a block of
// rows' maxima per thread, not a row per query row and segment (a SmolLM2
// run with --reduce max at 966 tokens held 420 MiB of them).
TEST(CpuScratch, AMaxOverReadersHoldsOneRowPerSegment) {
  constexpr int kTokens = 300;  // three blocks of query rows
  const DuringPrompt mean = during_prompt("llama_gqa", kTokens, ReaderReduce::Mean);
  const DuringPrompt max = during_prompt("llama_gqa", kTokens, ReaderReduce::Max);
  const std::size_t one_row_each = std::size_t(max.segments) * max.slots * sizeof(float);
  EXPECT_EQ(mean.contributions, one_row_each);
  EXPECT_EQ(max.contributions, one_row_each);
  // Beside them, each thread that ran a task holds a block of rows' scores
  // and of maxima (which threads ran tasks differs between two runs).
  const std::size_t block = std::size_t(CpuBackend::kQueryBlock) * max.slots * sizeof(float);
  EXPECT_LE(max.scratch, mean.scratch + std::size_t(pool_threads()) * 2 * block);
  // Where MLKV shares a segment between layers, a row's maximum takes in
  // every layer that reads it: the segments of one KV layer keep a row per
  // query row while their reading layers run (layers 0-1, then 2-3), not
  // every segment through the whole call.
  const DuringPrompt mlkv = during_prompt("llama_mlkv", kTokens, ReaderReduce::Max);
  const auto m = load_model_files(test::model_dir("llama_mlkv"));
  ASSERT_LT(m.config.n_kv_layers, m.config.n_layers);
  const std::size_t one_kv_layer = std::size_t(m.config.n_kv_heads) * kTokens * mlkv.slots * sizeof(float);
  EXPECT_EQ(mlkv.contributions, std::size_t(mlkv.segments) * mlkv.slots * sizeof(float) + one_kv_layer);
  EXPECT_LT(mlkv.contributions, std::size_t(mlkv.segments) * kTokens * mlkv.slots * sizeof(float));
}

// The process's anonymous resident memory (kB). A never-written page of
// the KV cache that is read maps the kernel's shared zero page, which this
// does not count (mincore would).
long resident_anon_kb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("RssAnon:", 0) == 0) return std::stol(line.substr(8));
  ADD_FAILURE() << "no RssAnon in /proc/self/status";
  return 0;
}

// The KV cache is sized for every token a session plans (here 32,768) and
// slack for eviction's row moves, but only the rows stored so far take
// memory, in a clone of the backend too: a `generate --max-new-tokens
// 4096` that stopped at an end-of-text token after 60 held its whole cache.
TEST(CpuScratch, TheKvCacheTakesMemoryForTheTokensHeldNotItsCapacity) {
  constexpr int kCapacity = 32768, kTokens = 56;
  const Tiny tiny("llama_gqa", kCapacity);
  const ModelConfig& config = tiny.files.config;
  const auto model = tiny.model();
  const std::vector<int> prompt = tiny.prompt(kTokens);
  const int tok[1] = {tiny.token(1)};
  ForwardOptions fo;
  ForwardOutput out;
  BackendOptions bo;
  bo.max_tokens = kCapacity;

  // The pool's threads, their stacks and allocator arenas, come up with a
  // first call: a throwaway backend starts them outside the measurement.
  {
    CpuBackend warm(model, bo);
    warm.forward(prompt, fo, out);
    (void)warm.clone();
  }
  const long before = resident_anon_kb();
  CpuBackend be(model, bo);
  be.forward(prompt, fo, out);
  be.forward(tok, fo, out);
  const auto clone = be.clone();
  const long grown = resident_anon_kb() - before;

  const int segments = be.kv().layout().n_segments();
  const long capacity_kb =
      long(2) * segments * CpuBackend::region_rows(kCapacity, config.head_dim) * config.head_dim * 4 / 1024;
  const long held_kb = long(2) * segments * (kTokens + 1) * config.head_dim * 4 / 1024;
  ASSERT_GT(capacity_kb, 16 * (held_kb + 1024));  // the test tells the two apart
  // The backend and its clone: each the rows it holds (a page per segment
  // at most beside them), the prompt's scratch, the allocator's arenas.
  EXPECT_LT(grown, capacity_kb / 8) << "capacity " << capacity_kb << " kB, held " << held_kb << " kB";

  const auto* twin = dynamic_cast<const CpuBackend*>(clone.get());
  ASSERT_NE(twin, nullptr);
  for (const int seg : {0, segments - 1}) {
    ASSERT_EQ(twin->kv().len(seg), kTokens + 1);
    for (int slot : {0, kTokens})
      for (int d = 0; d < config.head_dim; ++d) {
        EXPECT_EQ(twin->key(seg, slot)[d], be.key(seg, slot)[d]);
        EXPECT_EQ(twin->value(seg, slot)[d], be.value(seg, slot)[d]);
      }
  }
}

// Every segment's region starts on a page, so n rows held take exactly the
// pages they fill in each segment (not one more where a region straddled a
// page with its neighbour's), whatever the capacity: 37 planned tokens
// (and 64 rows of slack) gave regions of 101 rows, 6,464 bytes, and about
// half the segments took two pages for 36 rows' 2,304 bytes. Held rows
// from a part of a page to three pages (64-byte rows: 64 to a 4 KiB page).
// The total is checked: no segment can hold fewer pages than its rows
// fill, so a total of exactly the filled pages is each segment's too.
TEST(CpuScratch, ASegmentsRowsTakeThePagesTheyFillAndNoMore) {
  const std::size_t page = ZeroedPages::page_bytes();
  for (const int capacity : {37, 200, 1001})
    for (const int tokens : {1, 17, 36, 64, 65, 100, 150}) {
      if (tokens > capacity) continue;
      SCOPED_TRACE("capacity " + std::to_string(capacity) + ", tokens " + std::to_string(tokens));
      const Tiny tiny("llama_gqa", capacity);
      BackendOptions bo;
      bo.max_tokens = capacity;
      ForwardOptions fo;
      ForwardOutput out;
      CpuBackend be(tiny.model(), bo);
      be.forward(tiny.prompt(tokens), fo, out);
      const std::size_t row = std::size_t(tiny.files.config.head_dim) * sizeof(float);
      const std::size_t pages = (tokens * row + page - 1) / page;
      EXPECT_EQ(be.kv_resident_bytes(), 2 * std::size_t(be.kv().layout().n_segments()) * pages * page);
    }
}

// Eviction moves a segment's slots through its region (a window's oldest
// slot leaves the front, so the segment starts a row later each step): the
// pages of rows no slot is on any more go back, so a 32-slot window that has
// passed over 6,000 rows holds about its 32 rows, not all 6,000; a reset
// gives back everything.
TEST(CpuScratch, EvictionHandsBackThePagesOfRowsNoSlotIsOn) {
  constexpr int kCapacity = 8192, kWindow = 32, kSteps = 6000;
  const Tiny tiny("llama_gqa", kCapacity);
  const ModelConfig& config = tiny.files.config;
  BackendOptions bo;
  bo.max_tokens = kCapacity;
  ForwardOptions fo;
  ForwardOutput out;
  std::vector<int> keep(kWindow);
  for (int i = 0; i < kWindow; ++i) keep[i] = i + 1;  // all but the oldest
  CpuBackend be(tiny.model(), bo);
  for (int step = 0; step < kSteps; ++step) {
    const int tok[1] = {tiny.token(step)};
    be.forward(tok, fo, out);
    if (be.kv().len(0) > kWindow)
      for (int seg = 0; seg < be.kv().layout().n_segments(); ++seg) be.retain(seg, keep);
  }
  // The caches' own pages (mincore), not the process's: the allocator's
  // arenas and a sanitizer's quarantine grow over 6,000 steps too.
  const int segments = be.kv().layout().n_segments();
  ASSERT_EQ(be.kv().len(0), kWindow);
  const std::size_t passed = std::size_t(2) * segments * kSteps * config.head_dim * sizeof(float);
  const std::size_t page = ZeroedPages::page_bytes();
  // The window's rows and, per segment and cache, a partial page at each end.
  const std::size_t held = std::size_t(2) * segments * (kWindow * config.head_dim * sizeof(float) + 2 * page);
  ASSERT_GT(passed, 8 * held);  // the test tells the two apart
  EXPECT_LE(be.kv_resident_bytes(), held) << "rows passed over: " << passed << " bytes";
  be.reset();
  EXPECT_EQ(be.kv_resident_bytes(), 0u) << "a reset keeps no row";
}

}  // namespace
}  // namespace kvscope
