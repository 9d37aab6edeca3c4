#!/bin/sh
# Checks that every C source and header in the tree is formatted as the root
# .clang-format says (clang-format-14, from scripts/install-deps.sh). Lists
# each file that differs and exits 1; `--fix` rewrites them instead.
# ctest runs it as format/clang_format, so CI fails on a formatting difference.
set -eu
cd "$(dirname "$0")/.."
cf=clang-format-14
command -v "$cf" >/dev/null 2>&1 || { echo "check-format: $cf not found (scripts/install-deps.sh installs it)"; exit 1; }
files=$(git ls-files '*.c' '*.h' '*.inc' 2>/dev/null || find . -path ./build -prune -o \( -name '*.c' -o -name '*.h' -o -name '*.inc' \) -print)
if [ "${1:-}" = "--fix" ]; then
  # shellcheck disable=SC2086
  $cf -i $files
  exit 0
fi
# shellcheck disable=SC2086
if out=$($cf --dry-run -Werror $files 2>&1); then
  echo "check-format: $(echo "$files" | wc -w) files clean"
  exit 0
fi
echo "$out" | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u |
  sed 's/$/ differs from .clang-format (fix: scripts\/check-format.sh --fix)/; s/^/check-format: /'
exit 1
