#!/usr/bin/env bash
# Runs tools/goldens_kvpress.py in its own venv with NVIDIA kvpress from PyPI.
#
#   tools/goldens_kvpress.sh            # writes tests/data/kvpress/*.json
#   tools/goldens_kvpress.sh --check    # exit 1 if regenerating would change them
#   tools/goldens_kvpress.sh --smollm2  # optional SmolLM2-135M file outside the repo (adds PyPI gguf)
#
# The venv is separate from the one of tools/make_goldens.py: kvpress 0.5.5 pins
# transformers<5.3, and the committed goldens were made with transformers 5.2.0.
# Location: $KVPRESS_VENV, default ~/.cache/kvscope/kvpress-venv; created on first
# use (a few GB: torch comes with it). Point it at an existing one with e.g.
#   KVPRESS_VENV=/work/.venvs/kvpress tools/goldens_kvpress.sh
# PYTHON picks the interpreter that creates the venv (default python3, >= 3.10).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${KVPRESS_VENV:-$HOME/.cache/kvscope/kvpress-venv}
PY=${PYTHON:-python3}

if ! "$VENV/bin/python" -c 'import kvpress' 2>/dev/null; then
  echo "creating $VENV with kvpress==0.5.5" >&2
  "$PY" -m venv "$VENV"
  "$VENV/bin/pip" install "kvpress==0.5.5" "transformers==5.2.0"
fi
for arg in "$@"; do
  if [ "$arg" = "--smollm2" ] && ! "$VENV/bin/python" -c 'import gguf' 2>/dev/null; then
    "$VENV/bin/pip" install gguf
  fi
done
exec "$VENV/bin/python" "$ROOT/tools/goldens_kvpress.py" "$@"
