// The recorder at 8B scale: the memory a run needs is known before it
// starts, the layers and heads asked for are what is recorded, and a run
// that will not fit is refused up front with the setting that makes it fit.
// KVSCOPE_MEMORY_MB stands in for a small machine (io/host_memory.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <regex>

#include "common/error.h"
#include "io/host_memory.h"
#include "io/zeroed_pages.h"
#include "kv/row_moves.h"
#include "session/memory_forecast.h"
#include "session_fixture.h"

namespace kvscope {
namespace {

// Sets KVSCOPE_MEMORY_MB for one scope.
class MemoryLimit {
 public:
  explicit MemoryLimit(double mb) { ::setenv("KVSCOPE_MEMORY_MB", std::to_string(mb).c_str(), 1); }
  ~MemoryLimit() { ::unsetenv("KVSCOPE_MEMORY_MB"); }
};

// A Llama-3-8B's shape (32 layers, 32 query heads, 8 KV heads of 128).
ModelConfig llama3_8b() {
  ModelConfig c;
  c.n_layers = 32;
  c.n_heads = 32;
  c.n_kv_heads = 8;
  c.n_kv_layers = 32;
  c.head_dim = 128;
  c.hidden = 4096;
  return c;
}

std::string refusal(const std::function<void()>& f, std::string* field = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (field) *field = e.field();
    return e.what();
  }
  return "(no error)";
}

int number_after(const std::string& text, const std::string& before) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(before + " ([0-9]+)"))) return -1;
  return std::stoi(m[1]);
}

TEST(MemoryForecast, CountsTheRecorderAndTheHostKvCachesOfAnEightBillionShape) {
  const ModelConfig c = llama3_8b();
  RecordingConfig rec;
  rec.layers = {0, 31};
  rec.heads = {5, 1, 5};
  const MemoryForecast f = plan_recording(c, 1024, 256, rec, {c, c});
  EXPECT_EQ(f.rows, 257);
  EXPECT_EQ(f.positions, 1280);
  EXPECT_EQ(f.segments, 256);
  EXPECT_EQ(f.layers, (std::vector<int>{0, 31}));
  EXPECT_EQ(f.heads, (std::vector<int>{1, 5}));  // sorted, once each
  EXPECT_EQ(f.attention, std::size_t(257) * 2 * 2 * 1280 * 4);
  EXPECT_EQ(f.masks, std::size_t(257) * 256 * 1280);
  EXPECT_EQ(f.scores, 4 * f.masks);
  EXPECT_EQ(f.kv_caches, 2);
  EXPECT_EQ(f.kv_cache, 2 * host_kv_cache_bytes(c, 1281));
  // 1,281 slots and 160 of slack, 1,441 rows of 512 bytes, to whole pages:
  // 1,448 rows with 4 KiB pages (x86-64's), whatever rows whole pages hold
  // elsewhere.
  const std::size_t page = ZeroedPages::page_bytes();
  const std::size_t rows = (std::size_t(1441) * 512 + page - 1) / page * page / 512;
  if (page == 4096) EXPECT_EQ(rows, 1448u);
  EXPECT_EQ(host_kv_cache_bytes(c, 1281), std::size_t(2) * 256 * rows * 128 * 4);
  EXPECT_EQ(f.total(), f.attention + f.masks + f.scores + f.kv_cache);
  EXPECT_NE(f.summary().find("attention of 2 layers x 2 heads"), std::string::npos) << f.summary();
}

TEST(MemoryForecast, RefusesTooManyStepsAndSaysHowManyFit) {
  const ModelConfig c = llama3_8b();
  MemoryLimit limit(4096);  // a 4 GiB machine
  std::string field;
  const std::string why = refusal([&] { plan_recording(c, 2048, 2048, RecordingConfig{}, {c}); }, &field);
  EXPECT_EQ(field, "max_new_tokens") << why;
  EXPECT_NE(why.find("masks and policy scores of 256 KV segments"), std::string::npos) << why;
  const int most = number_after(why, "at most");
  ASSERT_GT(most, 0) << why;
  ASSERT_LT(most, 2048) << why;
  // The number it names is the largest that fits.
  EXPECT_NO_THROW(plan_recording(c, 2048, most, RecordingConfig{}, {c}));
  refusal([&] { plan_recording(c, 2048, most + 1, RecordingConfig{}, {c}); }, &field);
  EXPECT_EQ(field, "max_new_tokens");
}

TEST(MemoryForecast, RefusesAPromptThatAloneDoesNotFit) {
  const ModelConfig c = llama3_8b();
  MemoryLimit limit(64);
  std::string field;
  const std::string why = refusal([&] { plan_recording(c, 8000, 10, RecordingConfig{}, {c}); }, &field);
  EXPECT_EQ(field, "prompt") << why;
  EXPECT_NE(why.find("shorten it"), std::string::npos) << why;
}

TEST(MemoryForecast, RefusesNamedLayersThatDoNotFitAndSaysHowManyDo) {
  const ModelConfig c = llama3_8b();
  MemoryLimit limit(8192);
  RecordingConfig rec;
  for (int l = 0; l < 32; ++l) rec.layers.push_back(l);
  std::string field;
  const std::string why = refusal([&] { plan_recording(c, 1024, 1024, rec, {c}); }, &field);
  EXPECT_EQ(field, "recording.layers") << why;
  EXPECT_NE(why.find("32 layers x 32 heads"), std::string::npos) << why;
  EXPECT_NE(why.find("fewer heads"), std::string::npos) << why;  // the other way to make it fit
  const int most = number_after(why, "at most");
  ASSERT_GT(most, 0) << why;
  rec.layers.resize(most);
  EXPECT_NO_THROW(plan_recording(c, 1024, 1024, rec, {c}));
  rec.layers.push_back(most);
  EXPECT_THROW(plan_recording(c, 1024, 1024, rec, {c}), Error);
  // Fewer heads make every layer fit.
  for (int l = most + 1; l < 32; ++l) rec.layers.push_back(l);
  rec.heads = {0, 1};
  EXPECT_NO_THROW(plan_recording(c, 1024, 1024, rec, {c}));
}

TEST(MemoryForecast, ChoosesEvenlySpacedLayersWithinTheBudgetAndTheMachine) {
  const ModelConfig c = llama3_8b();
  RecordingConfig rec;                                             // 512 MB budget
  const std::size_t per_layer = std::size_t(257) * 32 * 1280 * 4;  // 42 MB
  MemoryForecast f = plan_recording(c, 1024, 256, rec, {});
  EXPECT_EQ(f.layers.size(), std::size_t(512.0 * 1024 * 1024 / per_layer));
  EXPECT_EQ(f.layers.front(), 0);
  EXPECT_EQ(f.layers.back(), 31);
  // Named heads: each layer costs less, so more layers are kept.
  rec.heads = {0, 8, 16, 24};
  f = plan_recording(c, 1024, 256, rec, {});
  EXPECT_EQ(f.layers.size(), 32u);
  // A machine with no room beside the masks and scores keeps no layer's attention.
  MemoryLimit limit(460);
  rec.heads.clear();
  f = plan_recording(c, 1024, 256, rec, {});
  EXPECT_TRUE(f.layers.empty()) << f.summary();
  EXPECT_TRUE(f.fits()) << f.summary();
}

TEST(MemoryForecast, UnknownLayersAndHeadsAreNamed) {
  const ModelConfig c = llama3_8b();
  RecordingConfig rec;
  rec.heads = {32};
  std::string field;
  EXPECT_NE(
      refusal([&] { plan_recording(c, 10, 10, rec, {}); }, &field).find("unknown head 32 (the model has heads 0..31)"),
      std::string::npos);
  EXPECT_EQ(field, "recording.heads");
  rec.heads.clear();
  rec.layers = {40};
  EXPECT_NE(refusal([&] { plan_recording(c, 10, 10, rec, {}); }, &field).find("unknown layer 40"), std::string::npos);
  EXPECT_EQ(field, "recording.layers");
}

TEST(MemoryForecast, TheEnvironmentLowersTheAvailableMemory) {
  const double machine = available_memory_bytes();
  MemoryLimit limit(100);
  EXPECT_EQ(available_memory_bytes(), std::min(machine, 100.0 * 1024 * 1024));
  EXPECT_EQ(format_bytes(1536.0 * 1024 * 1024), "1.5 GiB");
  EXPECT_EQ(format_bytes(512), "512 B");
}

// A session records the heads asked for, bit for bit what a session that
// records every head holds for them; a view of the whole layer replays it.
TEST(MemoryForecast, SessionRecordsTheHeadsAskedFor) {
  SessionConfig all = test::config(PolicyKind::H2O, "50%", 8);
  all.recording.layers = {1};
  SessionConfig some = all;
  some.recording.heads = {2, 0};
  Session a(test::bundle("llama_gqa"), all), b(test::bundle("llama_gqa"), some);
  a.run_to_end();
  b.run_to_end();
  const Recorder& ra = a.recorder();
  const Recorder& rb = b.recorder();
  EXPECT_EQ(rb.attention_heads(), (std::vector<int>{0, 2}));
  EXPECT_TRUE(rb.records_head(1, 0));
  EXPECT_FALSE(rb.records_head(1, 1));
  EXPECT_FALSE(rb.records_layer(1));
  EXPECT_TRUE(ra.records_layer(1));
  EXPECT_EQ(rb.attention_rows().size() * a.model_config().n_heads, ra.attention_rows().size() * 2);
  for (int r = 0; r < ra.rows_recorded(); ++r)
    for (int h : {0, 2})
      for (int p = 0; p < ra.positions(); ++p) ASSERT_EQ(ra.attention(r, 1, h, p), rb.attention(r, 1, h, p));
  EXPECT_TRUE(std::isnan(rb.entropy(0, 1, 1)));
  EXPECT_FALSE(std::isnan(rb.entropy(0, 1, 2)));
  EXPECT_EQ(b.layer_attention(1), a.layer_attention(1));  // replayed with every head
  EXPECT_EQ(b.memory_forecast().attention, ra.attention_rows().size() * 4 / a.model_config().n_heads * 2);
}

TEST(MemoryForecast, ASessionThatWillNotFitIsRefusedBeforeItRuns) {
  MemoryLimit limit(0.2);  // 200 KiB: the prompt's KV caches fit, 100 more tokens do not
  SessionConfig c = test::config(PolicyKind::H2O, "50%", 100);
  std::string field;
  const std::string why = refusal([&] { Session s(test::bundle("llama_gqa"), c); }, &field);
  EXPECT_EQ(field, "max_new_tokens") << why;
  EXPECT_GE(number_after(why, "at most"), 0) << why;
}

// A teacher-forced run's new tokens are its continuation's: that is the
// setting named, not max_new_tokens (which it ignores).
TEST(MemoryForecast, ATeacherForcedRunNamesItsContinuation) {
  MemoryLimit limit(0.2);
  SessionConfig c = test::config(PolicyKind::H2O, "50%", 1);
  c.continuation = std::string(80, 'x');  // within the model's 128 positions
  std::string field;
  const std::string why = refusal([&] { Session s(test::bundle("llama_gqa"), c); }, &field);
  EXPECT_EQ(field, "continuation") << why;
  EXPECT_NE(why.find("tokens of the continuation fit"), std::string::npos) << why;
}

TEST(MemoryForecast, TheWindowsForecastIsTheSessionsPlan) {
  SessionConfig c = test::config(PolicyKind::H2O, "50%", 20);
  c.sharing = SharingLayout::parse("mqa");
  const MemoryForecast f = forecast_session_memory(*test::bundle("llama_gqa"), c);
  Session s(test::bundle("llama_gqa"), c);
  const MemoryForecast& g = s.memory_forecast();
  EXPECT_EQ(f.layers, g.layers);
  EXPECT_EQ(f.heads, g.heads);
  EXPECT_EQ(f.total(), g.total());
  EXPECT_EQ(f.kv_caches, 3);  // the run, the shadow full cache, the native layout's reference
  EXPECT_EQ(f.segments, s.model_config().n_kv_layers * s.model_config().n_kv_heads);
}

}  // namespace
}  // namespace kvscope
