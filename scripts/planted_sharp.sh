#!/usr/bin/env bash
# The sharp verdict's proof on the planted-bug catalogue (docs/sharp-verdicts.md): every
# ssmv-planted-<name> binary of BUILD (default build/release) runs its kernel's
# production-like problems (properties/planted/sharp_proof.h), the control ssmv-planted-none
# both kernels'; then sharp_summary.py checks the promise and writes the table. Usage:
#   scripts/planted_sharp.sh [BUILD] [OUT_DIR] [MARKDOWN]
# (defaults: build/release, BUILD/planted/sharp, docs/planted-bugs-sharp.md).
# The planted binaries are built when configured with -DSSMV_BUILD_PLANTED=ON
# (scripts/build.sh --with-planted; CI does).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
out=${2:-$build/planted/sharp}
markdown=${3:-docs/planted-bugs-sharp.md}
mkdir -p "$out"
# Each binary threads its check and emulation over every core (ref::default_threads()):
# two at a time keep a machine busy without oversubscribing it.
scripts/planted_jobs.sh "$build" "$out" | xargs -P 2 -L 1 sh -c 'exec "$0" sharp "$1" "$2" 2>/dev/null'
/usr/bin/python3 properties/planted/sharp_summary.py --catalogue properties/planted/catalogue.json \
  --sharp "$out" --markdown "$markdown"
