#!/usr/bin/env bash
# The planted-bug catalogue side by side with today's practice (docs/planted-bugs.md):
# every ssmv-planted-<name> binary of BUILD (default build/release) runs its kernel's
# problem sets (properties/planted/side_by_side.h), the control ssmv-planted-none both
# kernels'; then summary.py writes the tables. Usage:
#   scripts/planted_side_by_side.sh [BUILD] [OUT_DIR] [MARKDOWN]
# (defaults: build/release, BUILD/planted/side_by_side, docs/planted-bugs-table.md).
# The CI results of the catalogue (ctest -R '^planted\.') must exist in BUILD/planted/results.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
out=${2:-$build/planted/side_by_side}
markdown=${3:-docs/planted-bugs-table.md}
mkdir -p "$out"
scripts/planted_jobs.sh "$build" "$out" | xargs -P "$(nproc)" -L 1 sh -c 'exec "$0" side-by-side "$1" "$2" 2>/dev/null'
/usr/bin/python3 properties/planted/summary.py --catalogue properties/planted/catalogue.json \
  --results "$build/planted/results" --side-by-side "$out" --markdown "$markdown"
