#include "io/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace kvscope {
namespace {

volatile sig_atomic_t g_signal = 0;

extern "C" void on_interrupt(int sig) { g_signal = sig; }  // the only thing a handler does

std::mutex g_mutex;
int g_depth = 0;
struct sigaction g_old_int, g_old_term;

}  // namespace

InterruptScope::InterruptScope() {
  std::lock_guard<std::mutex> lk(g_mutex);
  if (g_depth++ > 0) return;
  g_signal = 0;
  struct sigaction sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;  // a second Ctrl-C: the default action, at once
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

InterruptScope::~InterruptScope() {
  std::lock_guard<std::mutex> lk(g_mutex);
  if (--g_depth > 0) return;
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

int interrupt_signal() { return g_signal; }
bool interrupt_requested() { return g_signal != 0; }

void check_interrupt(const std::string& what) {
  if (g_signal) throw Interrupted(what);
}

void test_pause_point(const char* point, const std::string& what) {
  const char* at = std::getenv("KVSCOPE_TEST_PAUSE_AT");
  if (!at || std::strcmp(at, point) != 0) return;
  std::fprintf(stderr, "kvscope-test: paused at %s\n", point);
  for (int i = 0; i < 12000 && !g_signal; ++i) ::usleep(10000);  // two minutes at most
  check_interrupt(what);
}

}  // namespace kvscope
