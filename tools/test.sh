#!/usr/bin/env bash
# Builds kvscope and runs its tests. Two tiers:
#
#   tools/test.sh --quick   the format check, the release build and its tests
#                           (a few minutes on a warm build folder)
#   tools/test.sh           what CI runs (.ci/run): the quick tier, then the
#                           numeric tests again under each OpenBLAS kernel set the CPU
#                           can run, the CPU tests under AddressSanitizer +
#                           UndefinedBehaviorSanitizer, and a short libFuzzer
#                           round over the loaders
#
# The release build has the CUDA backend when nvcc is present (CUDA tests
# skip without a GPU) and treats C++ warnings as errors (KVSCOPE_WERROR).
# Each stage below is one block that starts with an "== ... ==" line; a new
# stage goes before the final message.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
case "${1:-}" in
  "") ;;
  --quick) quick=1 ;;
  *) echo "usage: tools/test.sh [--quick]" >&2; exit 2 ;;
esac

tools/install-deps.sh
jobs=$(nproc)

echo "== clang-format on the C++ lines the last commit changed ==" >&2
tools/check-format.sh

# The Ray sweep driver's test (tests/tools/test_ray_sweep.py) runs in a venv
# with the ray package from PyPI; where it cannot be installed (no network),
# that test reports itself skipped, with the reason.
echo "== the Ray driver's venv (tools/ray-venv.sh) ==" >&2
ray_python=$(tools/ray-venv.sh build/venv-ray) ||
  { echo "kvscope: could not install ray from PyPI; RaySweep will be skipped" >&2; ray_python=""; }

echo "== release build ==" >&2
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DKVSCOPE_CUDA=AUTO -DKVSCOPE_WERROR=ON \
  -DKVSCOPE_RAY_PYTHON="$ray_python"
cmake --build build/release -j"$jobs"
ctest --test-dir build/release --output-on-failure -j"$jobs"

if [ "$quick" -eq 1 ]; then
  echo "kvscope: quick tests passed (tools/test.sh without --quick runs the full tier)" >&2
  exit 0
fi

# OpenBLAS picks its kernels by CPU (or by OPENBLAS_CORETYPE, which some
# machines set), and they round differently; results must not depend on the
# thread count under any of them (docs/cli.md, "Same numbers on every
# machine"). The suite runs again under every kernel set this CPU can execute.
echo "== release tests under each OpenBLAS kernel set ==" >&2
cli=build/release/app/cli/kvscope-cli
for core in $("$cli" cpu --openblas-core-types); do
  got=$(OPENBLAS_CORETYPE=$core "$cli" cpu | sed -n 's/^openblas *\([A-Za-z0-9]*\) kernels.*/\1/p')
  if [ "$got" != "$core" ]; then
    echo "kvscope: OPENBLAS_CORETYPE=$core ran OpenBLAS's $got kernels instead" >&2
    exit 1
  fi
  echo "== release tests under OpenBLAS's $core kernels ==" >&2
  log=build/release/ctest-openblas-$core.log
  # Left out, as their outcome cannot depend on the kernels: the window tests
  # (label "gui": they draw the numbers the engine tests check), the CLI's
  # flag and error-message tests, and the Machines tests, which already run
  # every kernel set themselves, and the plumbing whose numbers come from
  # one kernel set either way (shard merges, the worker's threads). This
  # keeps CI well inside its hour.
  OPENBLAS_CORETYPE=$core ctest --test-dir build/release --output-on-failure -j"$jobs" -LE gui \
    -E '^(CliErrors|CliPolicyTable|CliHelp|Machines|RaySweep|SweepShards|Worker)\.' >"$log" || { cat "$log"; exit 1; }
  grep -E "tests passed" "$log" >&2
done

# The sanitizer builds use clang: GCC takes about four times as long on
# the same files under -fsanitize=address,undefined (nlohmann/json's
# templates), which alone would overrun CI's hour. One build serves the
# tests and the fuzz harnesses (KVSCOPE_FUZZ adds libFuzzer's coverage
# hooks and implies ASan + UBSan); line tables, not full debug info, are
# enough for the sanitizers' stack traces.
sanitizer_flags="-O2 -gline-tables-only -DNDEBUG"
echo "== AddressSanitizer + UndefinedBehaviorSanitizer build (clang, CPU, with the fuzz harnesses) ==" >&2
CC=clang CXX=clang++ cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="$sanitizer_flags" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$sanitizer_flags" \
  -DKVSCOPE_FUZZ=ON -DKVSCOPE_BUILD_BENCH=OFF -DKVSCOPE_BUILD_APP=OFF
cmake --build build/asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:print_suppressions=0 \
  ctest --test-dir build/asan --output-on-failure -j"$jobs"

# The loaders against libFuzzer, briefly (tools/fuzz.sh SECONDS for a long
# run); saved crash inputs are replayed first.
echo "== fuzzing the loaders (10 s each) ==" >&2
tools/fuzz.sh 10 build/asan

# The engine worker's threads under ThreadSanitizer: the UI thread reads
# what the worker thread publishes (engine_worker.cpp, the threading
# contract), and a race there can pass the tests by luck. A build of its
# own, CPU only and without the window (the worker tests need no display);
# only the worker tests run in it.
echo "== ThreadSanitizer build of the engine worker tests (clang) ==" >&2
CC=clang CXX=clang++ cmake -S . -B build/tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="$sanitizer_flags" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$sanitizer_flags" \
  -DKVSCOPE_CUDA=OFF -DKVSCOPE_BUILD_BENCH=OFF -DKVSCOPE_BUILD_APP=OFF \
  -DCMAKE_C_FLAGS=-fsanitize=thread -DCMAKE_CXX_FLAGS=-fsanitize=thread -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread
cmake --build build/tsan -j"$jobs" --target test_engine_worker
TSAN_OPTIONS=halt_on_error=1:suppressions=$PWD/tests/tsan.supp \
  ctest --test-dir build/tsan --output-on-failure -j"$jobs" -R '^Worker\.'

echo "kvscope: all tests passed" >&2
