#!/usr/bin/env bash
# Builds kvscope and runs every test: the normal build (with the CUDA
# backend when nvcc is present; CUDA tests skip without a GPU), then the CPU
# tests again under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
jobs=$(nproc)

echo "== release build ==" >&2
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DKVSCOPE_CUDA=AUTO
cmake --build build/release -j"$jobs"
ctest --test-dir build/release --output-on-failure -j"$jobs"

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build (CPU) ==" >&2
cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKVSCOPE_SANITIZE=ON -DKVSCOPE_BUILD_BENCH=OFF
cmake --build build/asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure -j"$jobs"
echo "kvscope: all tests passed" >&2
