#pragma once
#include <chrono>
#include <cstdlib>
#include <GL/gl.h>
namespace kvscope::gui {
inline double g_bench_ms[6];
struct BenchScope {
  int slot; std::chrono::steady_clock::time_point t0; bool on;
  BenchScope(int s, bool finish = false) : slot(s), on(std::getenv("KVSCOPE_BENCH")) { if (on && finish) glFinish(); t0 = std::chrono::steady_clock::now(); fin = finish; }
  bool fin = false;
  ~BenchScope() { if (!on) return; if (fin) glFinish(); g_bench_ms[slot] += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(); }
};
}
