#!/usr/bin/env bash
# Fuzzes kvscope's loaders with libFuzzer (clang, ASan + UBSan): the
# safetensors header and index, config.json, tokenizer.json (regexes
# included), session files, the npy reader and GGUF files. tools/test.sh runs a short
# round of each; for a long run:
#   tools/fuzz.sh 3600          # seconds per harness
# Seeds are the repository's own files (tests/data, assets/sessions) plus
# tests/fuzz/seeds/; inputs that once crashed live in tests/fuzz/regressions/
# and are replayed first. New crashes are written to BUILD/findings/.
#   tools/fuzz.sh SECONDS [BUILD]   BUILD: a build folder configured with
#                                   KVSCOPE_FUZZ=ON (tools/test.sh passes its
#                                   sanitizer build); build/fuzz by default
set -euo pipefail
shopt -s nullglob
cd "$(dirname "$0")/.."
seconds=${1:-20}
jobs=$(nproc)
build=${2:-build/fuzz}
if [ -n "${2:-}" ]; then
  grep -q '^KVSCOPE_FUZZ:BOOL=ON$' "$build/CMakeCache.txt" 2>/dev/null ||
    { echo "kvscope: $build is not a build folder configured with -DKVSCOPE_FUZZ=ON" >&2; exit 2; }
else
  CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKVSCOPE_FUZZ=ON \
    -DKVSCOPE_BUILD_TESTS=OFF -DKVSCOPE_BUILD_BENCH=OFF -DKVSCOPE_BUILD_APP=OFF >/dev/null
fi
harnesses=(safetensors safetensors_index model_config tokenizer session_file npy gguf)
cmake --build "$build" -j"$jobs" --target "${harnesses[@]/#/fuzz_}"

# A fresh working corpus per harness from the seeds (libFuzzer adds to it).
seed() {  # seed HARNESS FILE...
  local dir=$build/corpus/$1
  shift
  mkdir -p "$dir"
  for f in "$@"; do cp "$f" "$dir/$(echo "$f" | tr '/' '_')"; done
}
rm -rf "$build/corpus"
seed safetensors tests/data/models/llama3_mqa_bf16/model.safetensors tests/data/models/gpt2/model.safetensors
seed safetensors_index $(find tests/data/models -name 'model.safetensors.index.json')
seed model_config $(find tests/data/models assets/models -name config.json)
seed tokenizer $(find tests/data/models tests/data/tokenizers -name tokenizer.json)
seed session_file assets/sessions/*.json $(find assets/lessons -name '*.json' 2>/dev/null)
seed npy $(find tests/data -name '*.npy' -size -64k | head -20)
seed gguf tests/data/gguf/*.gguf
for h in "${harnesses[@]}"; do
  [ -d "tests/fuzz/seeds/$h" ] && seed "$h" tests/fuzz/seeds/"$h"/*
done

mkdir -p "$build/findings"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:print_suppressions=0
status=0
for h in "${harnesses[@]}"; do
  bin=$build/tests/fuzz/fuzz_$h
  if [ -d "tests/fuzz/regressions/$h" ]; then
    "$bin" tests/fuzz/regressions/"$h"/* >"$build/$h.regressions.log" 2>&1 ||
      { echo "kvscope: fuzz_$h fails on a saved regression input" >&2; tail -30 "$build/$h.regressions.log" >&2; status=1; }
  fi
  log=$build/$h.log
  if "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$build/findings/$h-" "$build/corpus/$h" >"$log" 2>&1; then
    echo "fuzz_$h: $(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}') inputs in ${seconds}s, no finding" >&2
  else
    echo "kvscope: fuzz_$h found a failing input (in $build/findings/):" >&2
    grep -E "ERROR|kvscope fuzz|SUMMARY|Test unit written" "$log" | head -10 >&2
    status=1
  fi
done
exit $status
