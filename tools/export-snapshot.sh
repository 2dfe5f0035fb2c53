#!/usr/bin/env bash
# Runs every shipped session (assets/sessions, assets/lessons, the window
# tests' sessions), a session per policy on a real model when one is
# fetched, a few generate/score commands and a sweep, and keeps everything
# they write (exports, stdout, stderr, exit codes) under OUT. Two snapshots
# from two builds compared with `diff -r` show whether a change altered
# anything any command computes or exports:
#
#   tools/export-snapshot.sh OLD/kvscope-cli /tmp/snap && mv /tmp/snap /tmp/before
#   tools/export-snapshot.sh build/release/app/cli/kvscope-cli /tmp/snap
#   diff -r /tmp/before /tmp/snap && echo identical
#
# (the same OUT both times: exports name the folder they were written to).
#
# Real models are found as tools/get-model.sh leaves them (KVSCOPE_MODELS or
# ~/.cache/kvscope/models); missing ones are left out (and say so).
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: tools/export-snapshot.sh KVSCOPE_CLI OUT" >&2; exit 2; }
cli=$(realpath "$1")
out=$2
repo=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$cli" ] || { echo "export-snapshot: $cli is not executable" >&2; exit 1; }
[ ! -e "$out" ] || { echo "export-snapshot: $out exists; give a new folder" >&2; exit 1; }
mkdir -p "$out"
out=$(realpath "$out")
models=${KVSCOPE_MODELS:-${XDG_CACHE_HOME:-$HOME/.cache}/kvscope/models}

# One command: its stdout, stderr and exit code under OUT/NAME.*
record() {
  local name=$1
  shift
  local rc=0
  (cd "$repo" && "$@") >"$out/$name.stdout" 2>"$out/$name.stderr" || rc=$?
  echo "$rc" >"$out/$name.rc"
}

for s in "$repo"/assets/sessions/*.json "$repo"/assets/lessons/*.json "$repo"/tests/gui/sessions/*.json; do
  name=$(basename "$(dirname "$s")")_$(basename "$s" .json)
  record "$name" "$cli" run "$s" --export "$out/$name.export"
done

record sweep_base "$cli" sweep assets/sessions/sweep_base.json --policies h2o,tova,window --budgets 30%,60% \
  --out "$out/sweep_base.sweep"
prompt=$(cat "$repo/assets/prompts/passkey.txt")
record generate_keyformer "$cli" generate --prompt "$prompt" --max-new-tokens 6 --policy keyformer --budget 40% \
  --tau-end 3 --noise gaussian
record generate_a2sf "$cli" generate --prompt "$prompt" --max-new-tokens 6 --policy a2sf --budget 40% --alpha 0.5
record score_tova "$cli" score --text-file assets/prompts/story.txt --policy tova --budget 50% --window 2
record error_alpha "$cli" generate --prompt "$prompt" --policy a2sf --alpha 1.5
record error_flag "$cli" generate --prompt "$prompt" --policy tova --budget 50% --alpha 0.5

# A real model, every policy, when fetched.
smol="$models/smollm2-135m/SmolLM2-135M-Instruct.Q4_1.gguf"
if [ -f "$smol" ]; then
  # A fixed folder: an export names the session file it ran.
  sessions="$repo/build/export-snapshot-sessions"
  mkdir -p "$sessions"
  for policy in full window sink h2o tova keyformer a2sf random ideal; do
    budget='"budget": "50%",'
    [ "$policy" = full ] && budget=''
    cat >"$sessions/smol_$policy.json" <<EOF
{"format": "kvscope-session", "version": 1, "model": "$smol",
 "prompt_file": "$repo/assets/prompts/passkey.txt", "max_new_tokens": 8,
 "policy": {"name": "$policy", $budget "granularity": null}, "recording": {"layers": [0, 15, 29]}, "seed": 3}
EOF
    sed -i 's/, "granularity": null//' "$sessions/smol_$policy.json"
    record "smollm2_$policy" "$cli" run "$sessions/smol_$policy.json" --export "$out/smollm2_$policy.export"
  done
else
  echo "export-snapshot: no SmolLM2 at $smol (tools/get-model.sh smollm2-135m); left out" >&2
fi
echo "export-snapshot: $(find "$out" -type f | wc -l) files in $out" >&2
