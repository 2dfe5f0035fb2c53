// Ctrl-C (SIGINT) and SIGTERM while kvscope writes an output: the work
// stops at the next check point, the output's staging folder and lock are
// removed by the destructors that unwind, and the command says what was
// kept. How it works, and why it is async-signal-safe:
//   - InterruptScope installs a handler (sigaction, SA_RESETHAND) that only
//     stores the signal number in a `volatile sig_atomic_t`. Nothing else
//     happens inside the handler: no allocation, no I/O, no locks.
//   - Normal code calls check_interrupt() between units of work (a decoding
//     step, a file of an export, a sweep cell); it throws Interrupted, and
//     the cleanup runs as ordinary C++ unwinding (OutputFolder's destructor).
//   - SA_RESETHAND puts the default action back once the handler has run,
//     so a second Ctrl-C stops the process at once (whatever it left behind
//     is a staging folder of a dead process, removed by the next output to
//     that folder).
// Without an InterruptScope (the window, tests) the flag is never set and
// check_interrupt() does nothing.
#pragma once

#include <stdexcept>
#include <string>

namespace kvscope {

// Thrown by check_interrupt(); the message says what was kept. A front end
// prints it and exits with 128 + interrupt_signal() (130 for Ctrl-C).
struct Interrupted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Catches SIGINT and SIGTERM for its lifetime (nested scopes share one
// installation; the outermost restores the earlier actions).
class InterruptScope {
 public:
  InterruptScope();
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
};

// The signal caught (SIGINT, SIGTERM), or 0.
int interrupt_signal();
bool interrupt_requested();
// Throws Interrupted(what) when a signal was caught.
void check_interrupt(const std::string& what = "stopped");

// Test-only: when the environment variable KVSCOPE_TEST_PAUSE_AT equals
// `point` ("computing", "writing", "prompt", "second cell saved"), prints
// "kvscope-test: paused at POINT" on stderr and waits (up to two minutes)
// for a signal, then check_interrupt(what). Tests use it to send SIGINT at a known point instead of racing a timer;
// no user setting reads it.
void test_pause_point(const char* point, const std::string& what);

}  // namespace kvscope
