#!/usr/bin/env bash
# The CUDA half in one call on the GPU machine (the device tool's `run`, with
# .gpukit carried; bench/gpu/prepare.sh made it). Builds nothing:
#   1. unpacks the kit, finds the machine's cuBLAS and driver, prints the GPU;
#   2. the CUDA tests (test_backend_cuda: every CUDA op and whole model
#      against the CPU reference; test_session's CUDA tests), then the host's
#      share of a session step on this machine's cores (bench_host_step);
#   3. transformers eager on the same shapes and GPU (transformers_gpu.py);
#   4. kvscope-cli bench --device cuda on each shape and prompt length
#      (decode and prefill tokens/s, % of the bandwidth floor);
#   5. the capture and policy overhead (bench --shape S --policy P), the
#      most wanted runs first, while the time allows;
#   6. the summary table (summary.py), printed last.
# Each stage runs under `timeout`, a failed stage does not stop the next
# (after two kvscope runs time out, the remaining CUDA runs are skipped),
# and the whole stays inside KVSCOPE_GPU_DEADLINE seconds (default 500; the
# tool allows 600 a command). Everything lands in $OUT: on_device.log (all of
# it), device.txt, tests.log, host_step.json (Google Benchmark's JSON),
# kvscope_bench.json and kvscope_policy.json (streams of the CLI's JSON
# objects), transformers.json, summary.md.
#
# Without a GPU (here, to check the kit) the CUDA stages say "no CUDA
# device" and skip, the test binaries still load and skip, and a few
# seconds of CPU runs (pythia-160m, a few tokens) feed the summary instead.
#
# KVSCOPE_GPU_MODE=sanitize (a second call, after the first has shown what
# fails) runs compute-sanitizer's memcheck, racecheck, synccheck and
# initcheck over the CUDA op, sampling, retain and statistics tests instead
# of stages 2-5, into sanitize.log; the summary's stage table says what each
# tool found.
#
# Settings (environment): SHAPES, PROMPTS (prompt lengths), DECODE (decode
# tokens), POLICIES, POLICY_PROMPT, POLICY_DECODE, POLICY_BUDGET,
# POLICY_REPEATS, TEST_FILTER_SESSION (gtest filter of test_session).
set -u -o pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
OUT=${OUT:-/tmp/kvscope-gpu-out}  # the device tool sets OUT; outside it, a folder outside the tree
KIT=${KVSCOPE_GPUKIT:-$ROOT/.gpukit}
DEADLINE=${KVSCOPE_GPU_DEADLINE:-500}
SHAPES=${SHAPES:-llama-2-7b llama-3.2-1b pythia-160m}
PROMPTS=${PROMPTS:-128 512 2048}
DECODE=${DECODE:-64}
POLICIES=${POLICIES:-h2o tova keyformer a2sf sink window}
POLICY_PROMPT=${POLICY_PROMPT:-512}
POLICY_DECODE=${POLICY_DECODE:-64}
POLICY_BUDGET=${POLICY_BUDGET:-50%}
POLICY_REPEATS=${POLICY_REPEATS:-3}
TEST_FILTER_SESSION=${TEST_FILTER_SESSION:-*Cuda*:*CUDA*}
RESERVE=25  # seconds kept for the summary at the end

mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/kvscope-gpukit.XXXXXX)
STAGES=$WORK/stages.tsv
BENCH_JSON=$OUT/kvscope_bench.json
POLICY_JSON=$OUT/kvscope_policy.json
TF_JSON=$OUT/transformers.json
: >"$STAGES"
: >"$BENCH_JSON"
: >"$POLICY_JSON"
rm -f "$TF_JSON" "$OUT/summary.md"  # nothing left from an earlier run into the same folder
exec > >(tee "$OUT/on_device.log") 2>&1
TEE_PID=$!
export PYTHONUNBUFFERED=1

left() { echo $((DEADLINE - SECONDS)); }
# budget WANT: seconds a stage may take, WANT at most, keeping the reserve.
budget() {
  local b=$(($(left) - RESERVE))
  ((b > $1)) && b=$1
  echo "$b"
}
T0=$SECONDS
begin() { T0=$SECONDS; echo "== $1 (t=${SECONDS}s)"; }
# stage NAME STATUS NOTE: one row of the summary's stage table.
stage() {
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$((SECONDS - T0))" "$3" >>"$STAGES"
  echo "   -> $1: $2${3:+ ($3)}"
}
# A JSON record of a run that gave no JSON, for the summary.
error_record() {  # error_record FILE SHAPE PROMPT POLICY RECORD MESSAGE
  python3 -c 'import json, sys; f, s, p, pol, rec, msg = sys.argv[1:]
print(json.dumps({"shape": s, "prompt_tokens": int(p), "policy": pol or None, "record": rec or None, "error": msg}))' \
    "$@" >>"$1"
}

# ---- 1. the kit, the libraries, the device -----------------------------------------------
begin "kit"
if [[ ! -f $KIT/kit.tar.xz ]]; then
  echo "no $KIT/kit.tar.xz: run bench/gpu/prepare.sh before the session and carry .gpukit"
  stage kit FAILED "no kit"
  KITOK=0
else
  KITOK=1
  tar -xJf "$KIT/kit.tar.xz" -C "$WORK" 2>/dev/null ||
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$KIT/kit.tar.xz" "$WORK" ||
    KITOK=0
fi
CLI=$WORK/bin/kvscope-cli
if ((KITOK)); then
  sed 's/^/   /' "$WORK/build_info.txt"
  # The tests read their data from the source folder compiled into them;
  # there, this copy of the tree stands in for it. Likewise the CLI's path.
  src=$(sed -n 's/^source_dir=//p' "$WORK/build_info.txt")
  bld=$(sed -n 's/^build_dir=//p' "$WORK/build_info.txt")
  if [[ -n $src && $src != "$ROOT" && ! -e $src ]]; then mkdir -p "$(dirname "$src")" && ln -s "$ROOT" "$src"; fi
  [[ -n $src && -e $src/tests/data ]] || echo "   warning: $src/tests/data is missing: the tests that read golden files will fail"
  if [[ -n $bld && ! -e $bld/app/cli/kvscope-cli ]]; then mkdir -p "$bld/app/cli" && ln -s "$CLI" "$bld/app/cli/kvscope-cli"; fi
fi
# cuBLAS and the CUDA runtime: the toolkit's, or the pip wheels' beside PyTorch.
find_lib() {  # find_lib NAME: the folder of the first NAME found
  local d
  for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda-13*/lib64 \
    /usr/lib/x86_64-linux-gnu; do
    [[ -e $d/$1 ]] && { echo "$d"; return; }
  done
  local sites found
  mapfile -t sites < <(python3 -c 'import site; print("\n".join(site.getsitepackages()))' 2>/dev/null)
  found=$(find "${sites[@]}" /opt /usr/local -maxdepth 6 -name "$1" -print -quit 2>/dev/null)
  [[ -n $found ]] && dirname "$found"
}
CUBLAS_DIR=$(find_lib libcublas.so.13)
CUDART_DIR=$(find_lib libcudart.so.13)
LDP=$WORK/lib
[[ -n $CUBLAS_DIR ]] && LDP=$CUBLAS_DIR:$LDP
[[ -n $CUDART_DIR && $CUDART_DIR != "$CUBLAS_DIR" ]] && LDP=$LDP:$CUDART_DIR
LDP=$LDP:$WORK/lib/cudart  # the runtime built against, behind the machine's own
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
  for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib64 /usr/lib/x86_64-linux-gnu; do
    [[ -e $d/libcuda.so.1 ]] && { LDP=$LDP:$d; break; }
  done
fi
# The machine's libstdc++ is normally newer than the build's; if not, the
# build's own comes along.
if ((KITOK)) && LD_LIBRARY_PATH=$LDP ldd "$CLI" 2>&1 | grep -q "GLIBCXX.*not found\|libstdc++.*not found"; then
  LDP=$LDP:$WORK/lib/fallback
fi
echo "   cuBLAS: ${CUBLAS_DIR:-not found}; CUDA runtime: ${CUDART_DIR:-none found, the copy in the kit}"
echo "   LD_LIBRARY_PATH for kvscope: $LDP"
if ((KITOK)); then
  missing=$(LD_LIBRARY_PATH=$LDP ldd "$WORK"/bin/* 2>&1 | grep "not found" | sort -u)
  if [[ -n $missing ]]; then
    echo "$missing"
    stage kit FAILED "libraries not found: $(echo "$missing" | awk '{print $1}' | tr '\n' ' ')"
  else
    stage kit ok "$(du -sh "$WORK" | cut -f1) unpacked; cuBLAS from ${CUBLAS_DIR:-nowhere}"
  fi
fi
# kv CMD...: a kvscope binary with the kit's libraries; everything else
# (python3, nvidia-smi) keeps the machine's own environment.
kv() {
  env LD_LIBRARY_PATH="$LDP" KVSCOPE_ASSETS="$ROOT/assets" CUDA_MODULE_LOADING=EAGER "$@"
}

begin "device"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  uname -a
  grep -m1 "model name" /proc/cpuinfo
  nproc
  ldd --version | head -1
  timeout 20 nvidia-smi
  timeout 20 nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.limit,temperature.gpu --format=csv
  command -v nvcc >/dev/null && nvcc --version | tail -2
  python3 -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__, "cuda", torch.version.cuda, torch.cuda.is_available())'
  ((KITOK)) && LD_LIBRARY_PATH=$LDP ldd "$CLI"
} >"$OUT/device.txt" 2>&1
GPU=$(timeout 20 nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | head -1)
if [[ -n $GPU ]]; then
  HAVE_GPU=1
  stage device ok "$GPU"
else
  HAVE_GPU=0
  why=$(timeout 20 nvidia-smi -L 2>&1 | head -1)
  stage device "no CUDA device" "${why:-nvidia-smi not found}; the CUDA stages skip"
fi

# ---- 1b. compute-sanitizer, in place of stages 2-5 (KVSCOPE_GPU_MODE=sanitize) --------------------
MODE=${KVSCOPE_GPU_MODE:-all}
RUN_MAIN=1
if [[ $MODE == sanitize ]]; then
  RUN_MAIN=0
  SAN=$(command -v compute-sanitizer 2>/dev/null ||
    ls /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda-*/bin/compute-sanitizer 2>/dev/null | head -1)
  : >"$OUT/sanitize.log"
  # sanitize TOOL FILTER WANT: one tool over test_backend_cuda's tests matching FILTER.
  sanitize() {
    begin "compute-sanitizer --tool $1 ($2)"
    local t
    t=$(budget "$3")
    if ((!KITOK || !HAVE_GPU)); then stage "sanitize_$1" skipped "$( ((KITOK)) && echo "no CUDA device" || echo "no kit")"; return; fi
    if [[ -z $SAN ]]; then stage "sanitize_$1" skipped "compute-sanitizer not found"; return; fi
    if ((t < 10)); then stage "sanitize_$1" skipped "no time left"; return; fi
    echo "### $1 $2" >>"$OUT/sanitize.log"
    kv timeout -k 5 "$t" "$SAN" --tool "$1" --error-exitcode 99 "$WORK/bin/test_backend_cuda" --gtest_color=no \
      "--gtest_filter=$2" >"$WORK/san.log" 2>&1
    local rc=$?
    cat "$WORK/san.log" >>"$OUT/sanitize.log"
    local found
    found=$(grep -m1 "ERROR SUMMARY" "$WORK/san.log")
    grep -m5 -E "^========= (Invalid|Uninitialized|Race|Barrier|Program hit)" "$WORK/san.log"
    if ((rc == 124 || rc == 137)); then
      stage "sanitize_$1" TIMEOUT "after ${t}s; ${found:-no summary yet}"
    elif ((rc == 99)); then
      stage "sanitize_$1" FAILED "${found:-errors reported}"
    elif ((rc != 0)); then
      stage "sanitize_$1" FAILED "exit $rc (a test failed); ${found:-no summary}"
    else
      stage "sanitize_$1" ok "${found:-ERROR SUMMARY: 0 errors}"
    fi
  }
  sanitize memcheck '*CudaOps.*:*CudaSampling.*:*RetainCuda.*:*StatsCuda.*' 200
  sanitize racecheck '*CudaOps.AttentionMatchesCpuReference*:*CudaSampling.*' 100
  sanitize synccheck '*CudaOps.AttentionMatchesCpuReference*:*CudaSampling.*' 60
  sanitize initcheck '*CudaOps.*' 80
fi

# ---- 2. the CUDA tests ---------------------------------------------------------------------------
# run_tests NAME BINARY WANT [gtest args]: one test binary; its summary lines on the screen.
run_tests() {
  local name=$1 bin=$2 want=$3
  shift 3
  begin "tests: $name"
  local t
  t=$(budget "$want")
  if ((!KITOK || t < 10)); then stage "$name" skipped "$( ((KITOK)) && echo "no time left" || echo "no kit")"; return; fi
  echo "### $name $*" >>"$OUT/tests.log"
  kv timeout -k 5 "$t" "$bin" --gtest_color=no "$@" >"$WORK/$name.log" 2>&1
  local rc=$?
  cat "$WORK/$name.log" >>"$OUT/tests.log"
  local passed failed skipped
  passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$WORK/$name.log" | tail -1)
  failed=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$WORK/$name.log" | tail -1)
  skipped=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$WORK/$name.log" | tail -1)
  grep '^\[  FAILED  \] [A-Za-z]' "$WORK/$name.log" | sort -u | head -20
  local note="${passed:-0} passed, ${failed:-0} failed, ${skipped:-0} skipped"
  if ((rc == 124 || rc == 137)); then
    stage "$name" TIMEOUT "after ${t}s; $note so far; last: $(grep '^\[ RUN' "$WORK/$name.log" | tail -1)"
  elif ((rc != 0)); then
    stage "$name" FAILED "exit $rc; $note"
  elif ((HAVE_GPU == 0)); then
    stage "$name" "no CUDA device" "$note"
  else
    stage "$name" ok "$note"
  fi
}
: >"$OUT/tests.log"
if ((RUN_MAIN)); then
  run_tests test_backend_cuda "$WORK/bin/test_backend_cuda" 200
  run_tests test_session_cuda "$WORK/bin/test_session" 90 "--gtest_filter=$TEST_FILTER_SESSION"
fi

# ---- 2b. the host's share of a session step, on this machine's cores (no GPU involved) --------
# What a CUDA step waits for on the host: choosing, recording and evicting
# over every slot (bench/NOTES.md, fifth session). One layer recorded, the
# three shapes, H2O / window / TOVA, every core of this machine.
if ((RUN_MAIN && KITOK)); then
  begin "host share of a step (bench_host_step, $(nproc) cores)"
  t=$(budget 40)
  if ((t < 10)); then
    stage host_step skipped "no time left"
  else
    kv timeout -k 5 "$t" "$WORK/bin/bench_host_step" --benchmark_filter='1024/1/' --benchmark_format=console \
      --benchmark_out="$OUT/host_step.json" --benchmark_out_format=json 2>&1 | grep -E '^BM_|^Run on|CPU' | head -20
    rc=${PIPESTATUS[0]}
    if ((rc == 0)); then stage host_step ok "$(nproc) cores; host_step.json"
    else stage host_step "$( ((rc == 124 || rc == 137)) && echo TIMEOUT || echo FAILED)" "exit $rc"; fi
  fi
fi

# ---- 3. transformers eager on the same GPU (before kvscope: it does not depend on it) ----------
((RUN_MAIN)) && begin "transformers eager"
t=$(budget 200)
((RUN_MAIN)) || t=0
if ((HAVE_GPU)); then
  tf_args=(--device cuda --shapes "$(echo "$SHAPES" | tr ' ' ',')" --prompt-tokens "$(echo "$PROMPTS" | tr ' ' ',')"
    --decode-tokens "$DECODE" --reps 3)
else
  tf_args=(--device cpu --shapes pythia-160m --prompt-tokens 128 --decode-tokens 8 --reps 1 --warmup 0)
fi
if ((!RUN_MAIN)); then
  :
elif ((t < 20)); then
  stage transformers skipped "no time left"
else
  timeout -k 5 "$t" python3 "$ROOT/bench/gpu/transformers_gpu.py" "${tf_args[@]}" --out "$TF_JSON"
  rc=$?
  if ((rc == 0)); then
    stage transformers "$( ((HAVE_GPU)) && echo ok || echo "cpu only")" "${tf_args[*]:0:4}"
  else
    stage transformers "$( ((rc == 124 || rc == 137)) && echo TIMEOUT || echo FAILED)" "exit $rc"
  fi
fi

# ---- 4. kvscope-cli bench --device cuda -----------------------------------------------------
# bench_one FILE SHAPE PROMPT POLICY RECORD WANT ARGS...: one CLI run whose JSON goes to FILE.
TIMEOUTS=0
bench_one() {
  local file=$1 shape=$2 p=$3 pol=$4 rec=$5 want=$6
  shift 6
  local t
  t=$(budget "$want")
  if ((t < 10)); then error_record "$file" "$shape" "$p" "$pol" "$rec" "skipped: no time left"; return 2; fi
  if ((TIMEOUTS >= 2)); then error_record "$file" "$shape" "$p" "$pol" "$rec" "skipped: two runs timed out"; return 2; fi
  kv timeout -k 5 "$t" "$CLI" bench --shape "$shape" --prompt-tokens "$p" --json "$@" >"$WORK/one.json" 2>"$WORK/one.err"
  local rc=$?
  cat "$WORK/one.err" >&2
  if ((rc == 0)); then
    cat "$WORK/one.json" >>"$file"
    return 0
  fi
  local msg
  msg=$(tail -1 "$WORK/one.err")
  # A hang (a kernel that never finishes) is likely to repeat: after two,
  # the remaining CUDA runs are skipped and the time goes to the summary.
  ((rc == 124 || rc == 137)) && msg="timed out after ${t}s" && TIMEOUTS=$((TIMEOUTS + 1))
  # A prompt length past the shape's positions (pythia-160m's 2048) is refused by design.
  [[ $msg == *"maximum positions"* ]] && msg="skipped: prompt + decode tokens exceed the shape's maximum positions"
  echo "   $shape prompt $p ${pol:+$pol }${rec:+($rec) }: $msg"
  error_record "$file" "$shape" "$p" "$pol" "$rec" "$msg"
  return 1
}

if ((!RUN_MAIN)); then
  :
elif ((KITOK && HAVE_GPU)); then
  begin "kvscope bench --device cuda"
  n=0 bad=0
  for s in $SHAPES; do
    for p in $PROMPTS; do
      bench_one "$BENCH_JSON" "$s" "$p" "" "" 60 --device cuda --decode-tokens "$DECODE" && n=$((n + 1)) || bad=$((bad + 1))
    done
  done
  stage kvscope_bench "$( ((bad)) && echo partial || echo ok)" "$n runs, $bad without a result"
elif ((KITOK)); then
  begin "kvscope bench (no CUDA device: the CLI's answer, then a CPU check of the harness)"
  kv "$CLI" bench --shape pythia-160m --device cuda 2>&1 | head -3
  bench_one "$BENCH_JSON" pythia-160m 128 "" "" 60 --device cpu --decode-tokens 8
  stage kvscope_bench "no CUDA device" "skipped on cuda; pythia-160m on the CPU for the summary"
fi

# ---- 5. capture and policy overhead (bench --shape S --policy P) ----------------------------------
# Most wanted first: H2O with one layer recorded (the 5% overhead target), then
# every layer recorded with the metrics run, then the other policies.
policy_run() {  # policy_run SHAPE POLICY one|all
  local rec_args=(--record-layers 0 --no-metrics)
  [[ $3 == all ]] && rec_args=()
  bench_one "$POLICY_JSON" "$1" "$POLICY_PROMPT" "$2" "$3" 120 --device "$DEV" --policy "$2" \
    --budget "$POLICY_BUDGET" --decode-tokens "$POLICY_DECODE" --repeats "$POLICY_REPEATS" "${rec_args[@]}"
}
if ((KITOK && RUN_MAIN)); then
  if ((HAVE_GPU)); then
    DEV=cuda
    begin "policy and capture overhead on cuda (prompt $POLICY_PROMPT, $POLICY_DECODE steps, budget $POLICY_BUDGET, best of $POLICY_REPEATS)"
  else
    DEV=cpu SHAPES=pythia-160m POLICIES=h2o POLICY_PROMPT=16 POLICY_DECODE=4 POLICY_REPEATS=1
    begin "policy and capture overhead: no CUDA device, pythia-160m on the CPU for the summary"
  fi
  n=0 bad=0
  run_list=()
  for s in $SHAPES; do run_list+=("$s h2o one"); done
  for s in $SHAPES; do run_list+=("$s h2o all"); done
  for pol in $POLICIES; do
    [[ $pol == h2o ]] && continue
    for s in $SHAPES; do run_list+=("$s $pol one"); done
  done
  for r in "${run_list[@]}"; do
    # shellcheck disable=SC2086
    policy_run $r && n=$((n + 1)) || bad=$((bad + 1))
  done
  status=ok
  ((bad)) && status=partial
  ((HAVE_GPU)) || status="no CUDA device"
  stage policy_bench "$status" "$n runs, $bad without a result"
fi

# ---- 6. the summary, printed last ------------------------------------------------------------------
begin "summary"
python3 "$ROOT/bench/gpu/summary.py" --bench "$BENCH_JSON" --policy "$POLICY_JSON" --transformers "$TF_JSON" \
  --stages "$STAGES" --out "$OUT/summary.md" ||
  { echo "summary.py failed; the stages:"; cat "$STAGES"; }
rc=0
grep -qP '\t(FAILED|TIMEOUT)\t' "$STAGES" && rc=1  # the exit status says whether a stage failed
rm -rf "$WORK"
exec >&- 2>&-
wait "$TEE_PID" 2>/dev/null  # the log complete before the tool collects $OUT
exit $rc
