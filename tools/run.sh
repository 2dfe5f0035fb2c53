#!/usr/bin/env bash
# Builds kvscope and opens the window with the pass-key demo prompt already
# prefilled (press Space to play, F1 for keys): on SmolLM2-135M when
# tools/get-model.sh smollm2-135m has fetched it, else on the bundled model.
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
  model=()
  models=${KVSCOPE_MODELS:-${XDG_CACHE_HOME:-$HOME/.cache}/kvscope/models}
  [ -f "$models/smollm2-135m/.complete" ] && model=(smollm2-135m)
  exec "$build"/app/cli/kvscope-cli generate "${model[@]}" --prompt "$(cat assets/prompts/passkey.txt)"
fi
cmake --build "$build" -j"$(nproc)" --target kvscope
models=${KVSCOPE_MODELS:-${XDG_CACHE_HOME:-$HOME/.cache}/kvscope/models}
if [ $# -eq 0 ] && [ -f "$models/smollm2-135m/.complete" ]; then
  echo "kvscope: opening the downloaded SmolLM2-135M (tools/run.sh --model '' for the bundled model)" >&2
  set -- --model smollm2-135m
fi
exec "$build"/app/gui/kvscope "$@"
