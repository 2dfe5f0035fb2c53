// Two runs compared bit for bit: every recorded number (memcmp, so NaN ==
// NaN and -0 != +0), the tokens, the eviction events and the metrics rows.
// For the tests that claim one way of reaching a state equals another
// (forks, replays, shared prefills).
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "session/session.h"

namespace kvscope::test {

// Every recorded number of two sessions, compared bit for bit (memcmp, so
// NaN == NaN and -0 != +0).
template <class T>
inline void expect_same_bits(const std::vector<T>& a, const std::vector<T>& b, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) {
      ADD_FAILURE() << what << " differs first at element " << i;
      return;
    }
}

inline void expect_same_metrics(const std::vector<StepMetrics>& a, const std::vector<StepMetrics>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const double x[] = {a[i].nll, a[i].nll_full, a[i].kl, a[i].attention_recall, a[i].ideal_similarity};
    const double y[] = {b[i].nll, b[i].nll_full, b[i].kl, b[i].attention_recall, b[i].ideal_similarity};
    EXPECT_EQ(std::memcmp(x, y, sizeof x), 0) << "metrics row " << i;
    EXPECT_EQ(a[i].token, b[i].token) << "metrics row " << i;
    EXPECT_EQ(a[i].next_token, b[i].next_token) << "metrics row " << i;
    EXPECT_EQ(a[i].kv_bytes, b[i].kv_bytes) << "metrics row " << i;
    EXPECT_EQ(a[i].top1_agree, b[i].top1_agree) << "metrics row " << i;
  }
}

inline void expect_same_run(const Session& a, const Session& b) {
  EXPECT_EQ(a.tokens(), b.tokens());
  EXPECT_EQ(a.current_row(), b.current_row());
  EXPECT_EQ(a.recorder().rows_recorded(), b.recorder().rows_recorded());
  expect_same_bits(a.recorder().masks(), b.recorder().masks(), "masks");
  expect_same_bits(a.recorder().scores(), b.recorder().scores(), "scores");
  expect_same_bits(a.recorder().attention_rows(), b.recorder().attention_rows(), "attention");
  expect_same_metrics(a.recorder().metrics(), b.recorder().metrics());
  const auto &ea = a.recorder().events(), &eb = b.recorder().events();
  ASSERT_EQ(ea.size(), eb.size());
  for (size_t i = 0; i < ea.size(); ++i) {
    EXPECT_EQ(ea[i].step, eb[i].step);
    EXPECT_EQ(ea[i].position, eb[i].position);
    EXPECT_EQ(ea[i].kv_head, eb[i].kv_head);
    EXPECT_EQ(std::memcmp(&ea[i].statistic, &eb[i].statistic, sizeof(float)), 0);
  }
}

}  // namespace kvscope::test
