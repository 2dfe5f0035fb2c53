#!/usr/bin/env bash
# Checks that the C++ lines a change touches follow .clang-format: the lines
# that differ between BASE and the working tree (git clang-format), not whole
# files, so the hand-aligned tables elsewhere need no mass reformat.
#
#   tools/check-format.sh          BASE = the commit before HEAD
#   tools/check-format.sh BASE     any commit (origin/main, a merge base, ...)
#
# A clone with one commit (or a shallow one whose parent is missing) has no
# commit before HEAD: the check says so and passes. Fix what it reports with
# `git clang-format --extensions cpp,h,cu,cuh BASE` (it rewrites only those
# lines), then commit again.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v git-clang-format >/dev/null || ! command -v clang-format >/dev/null; then
  echo "kvscope: format check skipped: clang-format is not installed (apt-get install clang-format)" >&2
  exit 0
fi
if ! git rev-parse --git-dir >/dev/null 2>&1; then
  echo "kvscope: format check skipped: not a git checkout" >&2
  exit 0
fi
base=${1:-HEAD~1}
if ! git rev-parse --verify -q "$base^{commit}" >/dev/null; then
  echo "kvscope: format check skipped: no commit $base to compare against (a single or shallow commit)" >&2
  exit 0
fi

# (git clang-format 14 exits 0 whether or not it has changes to propose:
# a proposed change is a diff on its output.)
diff=$(git clang-format --diff --extensions cpp,h,cu,cuh "$base" -- 2>&1) || {
  printf '%s\n' "$diff" >&2
  echo "kvscope: format check: git clang-format failed" >&2
  exit 1
}
files=$(printf '%s\n' "$diff" | sed -n 's#^+++ b/##p' | sort -u)
if [ -z "$files" ]; then
  echo "kvscope: format check: the C++ lines changed since $(git rev-parse --short "$base") follow .clang-format" >&2
  exit 0
fi
printf '%s\n' "$diff" >&2
echo "kvscope: format check failed: lines changed since $(git rev-parse --short "$base") do not follow .clang-format in:" >&2
printf '  %s\n' $files >&2
# (--extensions as above: without it git clang-format also rewrites JSON
# under tests/, such as the kvpress goldens, whose bytes the generator owns.)
echo "kvscope: run 'git clang-format --extensions cpp,h,cu,cuh $base' to reformat only those lines, then commit" >&2
exit 1
