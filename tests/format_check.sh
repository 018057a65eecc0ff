#!/usr/bin/env bash
# ctest `format`: every C++ and CUDA file of the project is as .clang-format lays it out.
# Layout differs between clang-format releases, so the check runs with the release CI installs
# (Debian 12's clang-format 14, tools/deps.sh) and is skipped (exit 77) with another or none.
set -euo pipefail
cd "$(dirname "$0")/.."
want_major=14
if ! command -v clang-format >/dev/null; then
  echo "format: skipped: clang-format is not installed (tools/deps.sh installs it)"
  exit 77
fi
major=$(clang-format --version | sed -n 's/.*version \([0-9]*\).*/\1/p')
if [ "$major" != "$want_major" ]; then
  echo "format: skipped: clang-format $major here; the layout is checked with release $want_major"
  exit 77
fi
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "format: skipped: not a git checkout (the files checked are the tracked ones)"
  exit 77
fi
# The tracked files and the new ones git does not ignore, as they are in the working tree (a file
# deleted there is not checked). Evidence kept under reports/ is kept as it ran, not reformatted.
files=()
while IFS= read -r f; do
  [ -f "$f" ] && files+=("$f")
done < <(git ls-files --cached --others --exclude-standard '*.cc' '*.h' '*.cu' '*.cuh' |
  grep -v '^reports/' | sort -u)
if ! clang-format --dry-run -Werror "${files[@]}"; then
  echo "format: run clang-format -i on the files above" >&2
  exit 1
fi
echo "format: ${#files[@]} files laid out as .clang-format says"
