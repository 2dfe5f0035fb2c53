#!/usr/bin/env bash
# A Python venv with the ray package (PyPI), for tools/ray_sweep.py and
# its test; made once, then reused. Prints the venv's python.
#
#   tools/ray-venv.sh [DIR]     (default build/venv-ray)
#
# Uses Debian's python3 (python3-venv, tools/install-deps.sh). Ray is
# pinned so a driver and its workers agree on one version.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build/venv-ray}
ray_version=2.60.0
if [ -x "$dir/bin/python" ] && "$dir/bin/python" -c "import ray, sys; sys.exit(ray.__version__ != '$ray_version')" 2>/dev/null; then
  echo "$PWD/$dir/bin/python"
  exit 0
fi
/usr/bin/python3 -m venv "$dir" >&2
"$dir/bin/pip" install -q "ray==$ray_version" >&2
echo "$PWD/$dir/bin/python"
