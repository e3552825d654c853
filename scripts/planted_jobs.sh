#!/usr/bin/env bash
# The job lines of a run over the planted-bug catalogue, one per line: "BINARY KERNEL FILE"
# for every ssmv-planted-<name> of BUILD (its kernel, OUT/<name>.<kernel>.json), the control
# ssmv-planted-none twice (ssu and chunk_scan). Used by planted_side_by_side.sh and
# planted_sharp.sh. Usage: scripts/planted_jobs.sh BUILD OUT
set -euo pipefail
build=$1
out=$2
if [ ! -x "$build/planted/ssmv-planted-none" ]; then
  echo "planted_jobs: no planted binaries in $build/planted: configure with" \
    "-DSSMV_BUILD_PLANTED=ON (or scripts/build.sh --with-planted) and build" >&2
  exit 1
fi
for bin in "$build"/planted/ssmv-planted-*; do
  name=${bin##*/ssmv-planted-}
  if [ "$name" = none ]; then
    printf '%s\n' "$bin ssu $out/none.ssu.json" "$bin chunk_scan $out/none.chunk_scan.json"
  else
    printf '%s\n' "$bin ${name%%.*} $out/$name.${name%%.*}.json"
  fi
done
