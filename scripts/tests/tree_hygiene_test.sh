#!/usr/bin/env bash
# The source tree's hygiene: no paths of one machine (a work folder, root's home, a local
# mirror of another repository: say how to clone it instead), no experiment patches (*.patch,
# *.diff: results belong in bench/NOTES.md, code in branches), and no fixed /tmp names in
# scripts, CMake files, Python or CI (scratch folders come from mktemp -d, removed by
# trap 'rm -rf "$dir"' EXIT). Usage: tree_hygiene_test.sh SOURCE_DIR
set -uo pipefail
shopt -s lastpipe  # report runs in this shell: its failure count stays
src=${1:?usage: tree_hygiene_test.sh SOURCE_DIR}
cd "$src" || exit 1
self=scripts/tests/tree_hygiene_test.sh

# The files of the tree: git's (tracked and untracked, not ignored) where it is a checkout.
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  list() { git ls-files -z --cached --others --exclude-standard; }
else
  list() { find . -path ./build -prune -o -path ./.git -prune -o -type f -printf '%P\0'; }
fi
files=$(mktemp)
trap 'rm -f "$files"' EXIT
list | while IFS= read -r -d '' f; do [ -f "$f" ] && [ "$f" != "$self" ] && printf '%s\0' "$f"; done > "$files"

failures=0
report() {  # report WHAT: the matches on stdin, if any, fail the test
  local hits
  hits=$(cat)
  [ -z "$hits" ] && return
  echo "FAIL: $1:" >&2
  echo "$hits" | head -20 >&2
  failures=$((failures + 1))
}

# Machine paths (the patterns are split so that this file does not match them).
xargs -0 grep -I -n -E "(^|[^[:alnum:]_.-])/(wo""rk|ro""ot)/|\.mir""ror/" < "$files" |
  report "machine paths (a work folder, /root, a local mirror): cite the repository to clone instead"

# Experiment patches.
tr '\0' '\n' < "$files" | grep -E '\.(patch|diff)$' |
  report "patches in the tree: keep the figures in bench/NOTES.md, the code in a branch"

# Fixed /tmp names in code: scripts, CMake, Python, CI.
tr '\0' '\n' < "$files" | grep -E '(\.sh|\.py|\.cmake|CMakeLists\.txt|^\.ci/.*)$' | tr '\n' '\0' |
  xargs -0 -r grep -I -n -E '(^|[^[:alnum:]_.${}:-])/t''mp(/|[[:space:]"'"'"';)]|$)' |
  report "fixed /tmp names: use dir=\$(mktemp -d) and trap 'rm -rf \"\$dir\"' EXIT"

if [ $failures -ne 0 ]; then
  echo "tree_hygiene_test: $failures failure(s)" >&2
  exit 1
fi
echo "tree_hygiene_test: no machine paths, no patches, no fixed /tmp names"
