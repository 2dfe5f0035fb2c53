#!/usr/bin/env bash
# Builds kvscope and opens the window on the bundled model with the
# pass-key demo prompt already prefilled (press Space to play, F1 for keys).
# Extra arguments go to the app (e.g. --lesson sinks, --presenter,
# --session FILE). Without a display (no $DISPLAY / $WAYLAND_DISPLAY) it
# says so and runs the same prompt through the headless kvscope-cli.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
# CUDA only where a GPU can use it: compiling the kernels for nothing takes
# most of a first build on a small machine. Its own build folder, so this
# and tools/test.sh (which builds everything) do not reconfigure each other.
cuda=OFF
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then cuda=AUTO; fi
build=build/run
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DKVSCOPE_CUDA=$cuda -DKVSCOPE_BUILD_TESTS=OFF \
  -DKVSCOPE_BUILD_BENCH=OFF >/dev/null
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  echo "kvscope: no display (\$DISPLAY is not set); running the headless CLI on the demo prompt instead" >&2
  cmake --build "$build" -j"$(nproc)" --target kvscope-cli
  exec "$build"/app/cli/kvscope-cli generate --prompt "$(cat assets/prompts/passkey.txt)"
fi
cmake --build "$build" -j"$(nproc)" --target kvscope
exec "$build"/app/gui/kvscope "$@"
