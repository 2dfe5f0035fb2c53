#!/usr/bin/env bash
# Builds kvscope and runs every test: the normal build (with the CUDA
# backend when nvcc is present; CUDA tests skip without a GPU), the same
# tests under each OpenBLAS kernel set the CPU can run, then the CPU tests
# again under AddressSanitizer + UndefinedBehaviorSanitizer, then a short
# libFuzzer round over the loaders.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
jobs=$(nproc)

echo "== release build ==" >&2
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DKVSCOPE_CUDA=AUTO
cmake --build build/release -j"$jobs"
ctest --test-dir build/release --output-on-failure -j"$jobs"

# OpenBLAS picks its kernels by CPU (or by OPENBLAS_CORETYPE, which some
# machines set), and they round differently; results must not depend on the
# thread count under any of them (README, "Same numbers on every machine").
# The suite runs again under every kernel set this CPU can execute.
cli=build/release/app/cli/kvscope-cli
for core in $("$cli" cpu --openblas-core-types); do
  got=$(OPENBLAS_CORETYPE=$core "$cli" cpu | sed -n 's/^openblas *\([A-Za-z0-9]*\) kernels.*/\1/p')
  if [ "$got" != "$core" ]; then
    echo "kvscope: OPENBLAS_CORETYPE=$core ran OpenBLAS's $got kernels instead" >&2
    exit 1
  fi
  echo "== release tests under OpenBLAS's $core kernels ==" >&2
  log=build/release/ctest-openblas-$core.log
  # (the window tests, label "gui", draw the same numbers; once is enough)
  OPENBLAS_CORETYPE=$core ctest --test-dir build/release --output-on-failure -j"$jobs" -LE gui >"$log" || { cat "$log"; exit 1; }
  grep -E "tests passed" "$log" >&2
done

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build (CPU) ==" >&2
cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKVSCOPE_SANITIZE=ON -DKVSCOPE_BUILD_BENCH=OFF -DKVSCOPE_BUILD_APP=OFF
cmake --build build/asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:print_suppressions=0 \
  ctest --test-dir build/asan --output-on-failure -j"$jobs"

# The loaders against libFuzzer, briefly (tools/fuzz.sh SECONDS for a long
# run); saved crash inputs are replayed first.
echo "== fuzzing the loaders (10 s each) ==" >&2
tools/fuzz.sh 10
echo "kvscope: all tests passed" >&2
