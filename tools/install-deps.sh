#!/usr/bin/env bash
# Installs the Debian packages kvscope builds with, skipping those already
# present. Needs root (or sudo). Used by tools/run.sh and tools/test.sh.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libopenblas-dev libpcre2-dev libutf8proc-dev librandom123-dev
  nlohmann-json3-dev libcli11-dev libstb-dev
  libcairo2-dev libpango1.0-dev fonts-dejavu-core
  libimgui-dev libglfw3-dev libgl-dev libx11-dev
  xvfb xauth libgl1-mesa-dri xdotool
  libgtest-dev libgmock-dev libbenchmark-dev clang clang-format
  python3 python3-venv
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "kvscope: installing ${missing[*]}" >&2
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "kvscope: need root or sudo to install ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
