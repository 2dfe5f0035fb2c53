#!/usr/bin/env bash
# Builds kvscope and starts it on the bundled model. Until the window lands
# this runs the headless CLI: the pass-key prompt through kvscope-cli generate
# (try --policy window --budget 20% to watch eviction lose the key).
# Extra arguments go to kvscope-cli generate (e.g. --max-new-tokens 40).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DKVSCOPE_CUDA=AUTO -DKVSCOPE_BUILD_TESTS=OFF >/dev/null
cmake --build build/release -j"$(nproc)" --target kvscope-cli
exec build/release/app/cli/kvscope-cli generate --prompt "$(cat assets/prompts/passkey.txt)" "$@"
