#!/usr/bin/env bash
# Builds the CUDA half for an H100 HERE and packs what the GPU machine needs
# into .gpukit/ (ignored by git, carried by the device tool's `run`), so that
# a session that is lent a GPU builds nothing there: one `run` call tests and
# benchmarks everything (bench/gpu/on_device.sh). Run it on purpose, before
# such a session, on a machine with CUDA 13's nvcc and the Debian packages of
# tools/install-deps.sh (this project's own machines).
#
#   bench/gpu/prepare.sh            # build in build/gpukit, pack .gpukit/
#
# Why build here: the GPU machine has CUDA 13, CMake and Python with
# PyTorch, but none of the Debian libraries kvscope links (OpenBLAS, PCRE2,
# utf8proc, Cairo, Pango, GoogleTest, ...) and no network. The binaries built
# here (Debian 12, glibc 2.36) run on its newer Ubuntu once the shared
# libraries they need travel with them; cuBLAS (hundreds of MB) does not
# travel: on_device.sh finds the machine's own libcublas.so.13. The working
# tree that travels is limited to 64 MiB, so the kit is one xz tarball.
#
# Environment: JOBS (parallel compile jobs, default 2), KVSCOPE_GPUKIT_BUILD
# (build folder, default build/gpukit).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
BUILD=${KVSCOPE_GPUKIT_BUILD:-$ROOT/build/gpukit}
KIT=$ROOT/.gpukit
JOBS=${JOBS:-2}
TARGETS=(kvscope-cli test_backend_cuda test_session bench_host_step)
# The GPU machine's runner takes at most 64 MiB of working tree (with the
# carried folders) and a command of at most 2000 characters.
TREE_LIMIT=$((64 * 1024 * 1024))
COMMAND_LIMIT=2000
RUN_COMMAND='bash bench/gpu/on_device.sh'

die() { echo "prepare.sh: $*" >&2; exit 1; }

# ---- toolchain: CUDA 13 like the GPU machine (driver 580) ---------------------
NVCC=$(command -v nvcc || true)
[[ -z $NVCC && -x /usr/local/cuda/bin/nvcc ]] && NVCC=/usr/local/cuda/bin/nvcc
[[ -n $NVCC ]] || die "no nvcc: install CUDA 13 (the GPU machine runs CUDA 13.0, driver 580)"
NVCC_VERSION=$("$NVCC" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')
[[ ${NVCC_VERSION%%.*} == 13 ]] || die "nvcc $NVCC_VERSION: the GPU machine's driver and cuBLAS are CUDA 13; build with CUDA 13"

# ---- build: Release, sm_90 (H100/H200), no window; of the benchmarks, bench_host_step ----------
echo "== build ($BUILD, sm_90, $JOBS jobs)"
nice -n 10 cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKVSCOPE_CUDA=ON \
  -DCMAKE_CUDA_COMPILER="$NVCC" -DCMAKE_CUDA_ARCHITECTURES=90 -DKVSCOPE_BUILD_APP=OFF -DKVSCOPE_BUILD_BENCH=ON \
  -DKVSCOPE_BUILD_TESTS=ON -DKVSCOPE_SANITIZE=OFF >"$BUILD.configure.log" 2>&1 ||
  { tail -30 "$BUILD.configure.log"; die "cmake configure failed (log: $BUILD.configure.log)"; }
nice -n 10 cmake --build "$BUILD" -j "$JOBS" --target "${TARGETS[@]}"
BINS=("$BUILD/app/cli/kvscope-cli" "$BUILD/tests/backend/test_backend_cuda" "$BUILD/tests/session/test_session"
  "$BUILD/bench/bench_host_step")
for b in "${BINS[@]}"; do [[ -x $b ]] || die "missing $b after the build"; done

# ---- stage: binaries, then every shared library they load that the GPU machine may lack
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/bin" "$STAGE/lib" "$STAGE/lib/cudart" "$STAGE/lib/fallback"
for b in "${BINS[@]}"; do
  cp "$b" "$STAGE/bin/"
  strip --strip-unneeded "$STAGE/bin/$(basename "$b")"
done
# Where each library goes: glibc's own stay behind (the machine's newer one
# serves); cuBLAS and the driver are the machine's; the CUDA runtime travels
# as a fallback behind the machine's own; libstdc++ and libgcc_s travel as a
# fallback used only if the machine's are older than this build needs.
where_to() {
  case "$1" in
    linux-vdso.so* | ld-linux* | libc.so* | libm.so* | libdl.so* | libpthread.so* | librt.so* | libresolv.so* | \
      libutil.so*) echo skip ;;
    libcuda.so* | libcublas.so* | libcublasLt.so* | libnvidia-*) echo skip ;;
    libcudart.so*) echo lib/cudart ;;
    libstdc++.so* | libgcc_s.so*) echo lib/fallback ;;
    *) echo lib ;;
  esac
}
# Pango and Cairo are opened when a figure is first drawn, not linked
# (engine/figures/drawing_library.h): they and what they load travel too.
DRAWING=$(ldconfig -p | awk '$1 == "libpangocairo-1.0.so.0" {print $NF; exit}')
[[ -n $DRAWING ]] || die "libpangocairo-1.0.so.0 (the figures' drawing library) is not installed here"
{
  echo "libpangocairo-1.0.so.0 $DRAWING"
  for b in "${BINS[@]}" "$DRAWING"; do
    ldd "$b" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
  done
} | sort -u | while read -r soname path; do
  dest=$(where_to "$soname")
  [[ $dest == skip ]] && continue
  cp -L "$path" "$STAGE/$dest/$soname"
done
if ldd "${BINS[@]}" | grep -q "not found"; then
  ldd "${BINS[@]}" | grep "not found" >&2
  die "a library the binaries need is not installed here"
fi

# Every library the binaries load must now resolve to the kit, or to glibc,
# libstdc++/libgcc_s or CUDA (cuBLAS, the driver): checked with the kit's
# folders first on the search path, as on_device.sh sets it.
# (cuBLAS is opened at run time, not linked, so ldd shows only the CUDA
# runtime; its folder is the toolkit's.)
CUDA_LIB=$(dirname "$(ldd "${BINS[0]}" | awk '$1 ~ /^libcudart\.so/ {print $3; exit}')")
bad=$(for f in "$STAGE"/bin/* "$STAGE"/lib/*.so*; do
  env -i LD_LIBRARY_PATH="$STAGE/lib:$STAGE/lib/cudart:$CUDA_LIB" ldd "$f"
done | awk '$2 == "=>" {print $1, $3}' | sort -u | while read -r soname path; do
  case "$path" in "$STAGE"/*) continue ;; esac
  case "$(where_to "$soname")" in skip | lib/fallback | lib/cudart) continue ;; esac
  echo "$soname => $path"
done)
[[ -z $bad ]] || die "libraries resolved outside the kit: $bad"

# glibc and libstdc++ versions the kit needs (the GPU machine must have them).
need_version() {  # need_version PREFIX: the highest PREFIX_x.y symbol version any kit file asks for
  objdump -T "$STAGE"/bin/* "$STAGE"/lib/*.so* 2>/dev/null | grep -o "$1_[0-9.]*" | sort -u -V | tail -1
}
GLIBC_NEED=$(need_version GLIBC)
GLIBCXX_NEED=$(need_version GLIBCXX)

# What the binaries were built from: the tests read their data from the
# source folder compiled into them, which on_device.sh links to the copy of
# the tree on the GPU machine.
COMMIT=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
DIRTY=$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo " (with uncommitted changes)" || true)
cat >"$STAGE/build_info.txt" <<EOF
source_dir=$ROOT
build_dir=$BUILD
commit=$COMMIT$DIRTY
built=$(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME"), $(ldd --version | head -1)
nvcc=$NVCC_VERSION, CMAKE_CUDA_ARCHITECTURES=90
needs=$GLIBC_NEED, $GLIBCXX_NEED, libcublas.so.13, a CUDA 13 driver
EOF

# ---- pack ----------------------------------------------------------------------
rm -rf "$KIT"
mkdir -p "$KIT"
XZ_OPT="-9 -T$JOBS" nice -n 10 tar -C "$STAGE" -cJf "$KIT/kit.tar.xz" .
cp "$STAGE/build_info.txt" "$KIT/"
EXCLUDE=$(git -C "$ROOT" rev-parse --git-path info/exclude)
[[ $EXCLUDE = /* ]] || EXCLUDE=$ROOT/$EXCLUDE
mkdir -p "$(dirname "$EXCLUDE")"
grep -qxF '/.gpukit/' "$EXCLUDE" 2>/dev/null || echo '/.gpukit/' >>"$EXCLUDE"
git -C "$ROOT" check-ignore -q "$KIT/kit.tar.xz" || die ".gpukit/ is not ignored by git; it must be (it travels only as carried)"

# ---- report -------------------------------------------------------------------------
bytes_of() { xargs -0 -r stat -c %s 2>/dev/null | awk '{s += $1} END {print s + 0}'; }
KIT_BYTES=$(find "$KIT" -type f -print0 | bytes_of)
TRACKED=$(git -C "$ROOT" ls-files -z | (cd "$ROOT" && bytes_of))
UNTRACKED=$(git -C "$ROOT" ls-files -z --others --exclude-standard | (cd "$ROOT" && bytes_of))
SHARED=0
[[ -d $ROOT/shared ]] && SHARED=$(find "$ROOT/shared" -type f -print0 | bytes_of)
TOTAL=$((KIT_BYTES + TRACKED + UNTRACKED + SHARED))
mib() { awk -v b="$1" 'BEGIN {printf "%.1f MiB", b / 1048576}'; }
echo
echo "== .gpukit: $(mib "$KIT_BYTES") (unpacked $(du -sb "$STAGE" | awk '{print $1}' | xargs -I{} awk 'BEGIN {printf "%.1f MiB", {} / 1048576}'))"
tar -tvJf "$KIT/kit.tar.xz" | awk '$3 > 0 {printf "   %9.1f KiB  %s\n", $3 / 1024, $6}'
sed 's/^/   /' "$KIT/build_info.txt"
echo "== what travels: tracked $(mib "$TRACKED") + untracked $(mib "$UNTRACKED") + shared/ $(mib "$SHARED") + .gpukit $(mib "$KIT_BYTES") = $(mib "$TOTAL") of the 64 MiB limit"
((TOTAL <= TREE_LIMIT)) || die "over the 64 MiB the device tool carries: ignore or remove something"
((${#RUN_COMMAND} <= COMMAND_LIMIT)) || die "the run command is over $COMMAND_LIMIT characters"
cat <<EOF

== the one call to make in a session with a GPU (device tool, verb run):
   command:   $RUN_COMMAND
   carry:     [".gpukit"]
   timeout_s: 600
   It prints a summary table last; the logs and JSON come back from \$OUT
   (bench/README.md, "The GPU kit"). Rebuild the kit (this script) after
   any change to the engine, the CLI or the CUDA tests.
EOF
