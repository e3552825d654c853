#!/usr/bin/env bash
# The `ssmv check` timing table, rerunnable anywhere without a GPU: makes production-shaped
# dumps with the host twins (make_check_dumps), times the plain double-precision recurrence
# over each on one thread (the baseline), then `ssmv check DUMP --threads K` with and without
# the sharp verdict under /usr/bin/time -v, and prints a Markdown table.
#
#   bench/check/check_bench.sh SSMV MAKE_DUMPS OUT [--threads K] [--quick]
#   e.g. bench/check/check_bench.sh build/release/ssmv \
#          build/release/bench/check/make_check_dumps "$(mktemp -d)" --quick
#
# OUT keeps the logs and table.md; the dumps live in a scratch folder removed at the end.
# K defaults to every core (nproc). --quick: small shapes, about 30 s on two cores.
# ratio = plain s / (ssmv wall s × K): ssmv's throughput per core as a fraction of the plain
# double loop's on one core (same dump, same machine).
set -euo pipefail

fail() { echo "check_bench.sh: $*" >&2; exit 2; }
[ $# -ge 3 ] || fail "usage: check_bench.sh SSMV MAKE_DUMPS OUT [--threads K] [--quick]"
ssmv=$1 make_dumps=$2 out=$3
shift 3
threads=$(nproc) quick=0
while [ $# -gt 0 ]; do
  case $1 in
    --threads)
      [[ ${2-} =~ ^[1-9][0-9]*$ ]] || fail "option '--threads' = '${2-}': expected an integer >= 1"
      threads=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    *) fail "unknown option '$1'" ;;
  esac
done
[ -x "$ssmv" ] || fail "SSMV = '$ssmv': not an executable file"
[ -x "$make_dumps" ] || fail "MAKE_DUMPS = '$make_dumps': not an executable file"
[ -x /usr/bin/time ] || fail "/usr/bin/time not found (Debian package 'time')"
mkdir -p "$out"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# Rows: name|kind|make_check_dumps options.
if [ "$quick" = 1 ]; then
  rows=("chunk_scan_1x2048_H8|chunk_scan|--tokens 2048 --heads 8"
        "handoff_2048_H8|handoff|--tokens 2048 --heads 8"
        "ssu_batch_32x4_H32|ssu_batch|--batch 32 --tokens 4 --heads 32")
  for t in 1024 4096; do rows+=("ssu_1x${t}_H2|ssu|--tokens $t --heads 2"); done
  for t in 1024 4096; do rows+=("chunk_scan_1x${t}_H2|chunk_scan|--tokens $t --heads 2"); done
else
  rows=("chunk_scan_1x8192_H32|chunk_scan|--tokens 8192 --heads 32"
        "handoff_8192_H32|handoff|--tokens 8192 --heads 32"
        "ssu_batch_256x4_H32|ssu_batch|--batch 256 --tokens 4 --heads 32")
  for t in 1024 4096 16384 65536; do rows+=("ssu_1x${t}_H8|ssu|--tokens $t --heads 8"); done
  for t in 1024 65536; do rows+=("chunk_scan_1x${t}_H8|chunk_scan|--tokens $t --heads 8"); done
fi

# Fields of a /usr/bin/time -v log.
wall_s() { awk '/Elapsed \(wall clock\)/ {n = split($NF, a, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + a[i]; print s}' "$1"; }
rss_mb() { awk '/Maximum resident set size/ {printf "%.0f", $NF * 1024 / 1e6}' "$1"; }
cpu_pct() { awk '/Percent of CPU/ {print $NF}' "$1"; }

# One timed `ssmv check`; its output in LOG.txt, time's in LOG.time; echoes the exit status.
timed_check() {
  local dump=$1 log=$2 rc=0
  shift 2
  /usr/bin/time -v "$ssmv" check "$dump" --threads "$threads" "$@" > "$log.txt" 2> "$log.time" || rc=$?
  echo "$rc"
}

table=$out/table.md
{
  echo "ssmv check on $(nproc) cores, --threads $threads, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(uname -n)"
  echo
  echo "| dump | work (state updates) | plain double s (1 thread) | ssmv wall s | --no-sharp wall s | peak RSS MB | dump MB | CPU | ratio (per core) | verdict |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
} > "$table"
for row in "${rows[@]}"; do
  IFS='|' read -r name kind args <<< "$row"
  dump=$scratch/$name.npz log=$out/$name
  # shellcheck disable=SC2086  # args is a list of options
  "$make_dumps" "$kind" "$dump" $args --threads "$threads" > "$log.make.log"
  "$make_dumps" plain "$dump" > "$log.plain.log"
  rc=$(timed_check "$dump" "$log.check" --timings)
  rc_nosharp=$(timed_check "$dump" "$log.nosharp" --no-sharp)
  work=$(sed -n 's/.*: \([0-9.e+]*\) state updates.*/\1/p' "$log.make.log")
  plain=$(sed -n 's/.* median \([0-9.]*\) s .*/\1/p' "$log.plain.log")
  wall=$(wall_s "$log.check.time")
  ratio=$(awk -v p="$plain" -v w="$wall" -v k="$threads" 'BEGIN {r = p / (w * k); printf "%.3g (1/%.0f)", r, 1 / r}')
  dump_mb=$(awk -v b="$(stat -c %s "$dump")" 'BEGIN {printf "%.1f", b / 1e6}')
  verdict="$(tail -n 1 "$log.check.txt") (exit $rc; --no-sharp exit $rc_nosharp)"
  echo "| $name | $work | $plain | $wall | $(wall_s "$log.nosharp.time") | $(rss_mb "$log.check.time") | $dump_mb |" \
       "$(cpu_pct "$log.check.time") | $ratio | $verdict |" >> "$table"
  echo "done: $name ($(cat "$log.make.log"))" >&2
  rm -f "$dump"  # keep the scratch folder small between rows
done
{
  echo
  echo "Phases of each check with the sharp verdict (ssmv check --timings):"
  echo
  for row in "${rows[@]}"; do
    IFS='|' read -r name _ _ <<< "$row"
    echo "* $name: $(grep -h '^timings:' "$out/$name.check.time" | sed 's/^timings: //')"
  done
} >> "$table"
cat "$table"
