#!/usr/bin/env bash
# On the H200 host (docs/sharp-verdicts.md, bench/NOTES.md "Sharp verdicts at production size"):
# production-size dumps of mamba_ssm's Triton kernels, correct and with the running state
# rounded to bf16 once per chunk (scripts/triton/production_check.py), each checked by
# `ssmv check` with the sharp verdict (the default) and without it (--no-sharp), timed with
# /usr/bin/time -v. Usage: bench/check/sharp_production.sh SSMV OUT   (OUT: logs, JSON reports)
set -uo pipefail
ssmv=$1
out=$2
dumps=$(mktemp -d)  # the dumps; removed on exit (the JSON reports are copied to OUT)
trap 'rm -rf "$dumps"' EXIT
mkdir -p "$dumps" "$out"
python3 scripts/triton/production_check.py --out "$dumps" --varlen 2>&1 | tail -4
python3 scripts/triton/production_check.py --out "$dumps" --plant running_state_bf16 2>&1 | tail -3
for d in "$dumps"/*.npz; do
  name=$(basename "$d" .npz)
  for mode in sharp no-sharp; do
    flags=(--threads 16)
    [ "$mode" = no-sharp ] && flags+=(--no-sharp)
    [ "$mode" = sharp ] && flags+=(--json "$dumps/$name.json")
    /usr/bin/time -v "$ssmv" check "$d" "${flags[@]}" > "$dumps/$name.$mode.txt" 2> "$dumps/$name.$mode.time"
    rc=$?
    wall=$(grep "Elapsed (wall" "$dumps/$name.$mode.time" | awk '{print $NF}')
    rss=$(grep "Maximum resident" "$dumps/$name.$mode.time" | awk '{print $NF}')
    cpu=$(grep "Percent of CPU" "$dumps/$name.$mode.time" | awk '{print $NF}')
    echo "$name $mode rc=$rc wall=$wall rss_kb=$rss cpu=$cpu"
  done
  grep -A6 "^sharp verdict" "$dumps/$name.sharp.txt" | cut -c1-400
  grep -E "VIOLATION|WITHIN|EXACT" "$dumps/$name.sharp.txt" | head -4 | cut -c1-200
done 2>&1 | tee "$out/sharp_production.log"
cp "$dumps"/*_planted.json "$out"/ 2>/dev/null
cp "$dumps"/chunk_scan_varlen_fp16.sharp.txt "$out"/ 2>/dev/null
