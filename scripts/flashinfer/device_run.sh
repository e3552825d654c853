#!/bin/bash
# The H200 run of the FlashInfer harness (scripts/flashinfer/README.md), from the repository
# root of the device machine: D holds what build.sh built here (libfi_fast_math.so, fi_ssu_nt4,
# fi_ssu_nt4_sr), a stripped ssmv and FLASHINFER_COMMIT; results go to OUT (two tar files).
#   1. the budgets of the fast-math expressions over every fp32 argument (measure_budgets.py);
#   2. the contract JSON from them (contract_from_budgets.py);
#   3. dumps of FlashInfer's kernel: small fixtures (brought back) and realistic shapes
#      (batch 64, H 32, G 4, P 64, N 128; judged here, not brought back);
#   4. ssmv check of each realistic dump with flashinfer.ssu (and the bundled ssu preset).
set -u -o pipefail
D=$1
OUT=$2
scratch=$(mktemp -d)  # the intermediate files (results are tarred to OUT); removed on exit
trap 'rm -rf "$scratch"' EXIT
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
R=$scratch/fi_results
mkdir -p $R/budgets $R/checks $scratch/raw_small $scratch/raw_big $scratch/fixtures $scratch/big
START=$(date +%s)
log() { echo "== $* ($(( $(date +%s) - START )) s)" | tee -a $R/log.txt; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -2; date -u; } 2>&1 | tee -a $R/log.txt
log budgets
timeout 240 python3 scripts/flashinfer/measure_budgets.py --lib $D/libfi_fast_math.so --out $R/budgets \
  > $R/budgets/log.txt 2>&1; echo "measure_budgets rc=$?" | tee -a $R/log.txt
grep -v "^|" $R/budgets/log.txt | tail -40
$D/ssmv contract show triton.ssu > $scratch/triton.json
python3 scripts/flashinfer/contract_from_budgets.py $scratch/triton.json $R/budgets/budgets.json $R/flashinfer.ssu.json
python3 scripts/flashinfer/contract_from_budgets.py $scratch/triton.json $R/budgets/budgets.json $R/flashinfer.ssu.sr.json --stochastic
SRC="FlashInfer $(cat $D/FLASHINFER_COMMIT), $(nvcc --version | tail -1), $(nvidia-smi --query-gpu=name --format=csv,noheader), $(date -u +%Y-%m-%d)"
log dumps
# name state input K algo batch H G T seed z sr
run_case() { local bin=$1 raw=$2; shift 2; $D/$bin $raw "$@" 2>&1 | tee -a $R/log.txt; }
for c in "stp_simple_fp32state fp32 bf16 1 simple" "stp_vertical_fp32state fp32 bf16 1 vertical" \
         "stp_horizontal_fp32state fp32 bf16 1 horizontal" "stp_vertical_bf16state bf16 bf16 1 vertical" \
         "stp_vertical_fp16state fp16 bf16 1 vertical" "stp_simple_fp32in_fp32state fp32 fp32 1 simple" \
         "mtp4_fp32state fp32 bf16 4 simple" "mtp4_bf16state bf16 bf16 4 simple" "mtp4_fp32in_fp32state fp32 fp32 4 simple"; do
  set -- $c
  run_case fi_ssu_nt4 $scratch/raw_small $1 $2 $3 $4 $5 2 2 1 8 11 1 0
  run_case fi_ssu_nt4 $scratch/raw_big $1 $2 $3 $4 $5 64 32 4 $([ $4 = 1 ] && echo 2 || echo 8) 12 1 0
done
for c in "stp_vertical_fp16state_sr fp16 bf16 1 vertical" "mtp4_fp16state_sr fp16 bf16 4 simple"; do
  set -- $c
  run_case fi_ssu_nt4_sr $scratch/raw_small $1 $2 $3 $4 $5 2 2 1 8 11 1 1
  run_case fi_ssu_nt4_sr $scratch/raw_big $1 $2 $3 $4 $5 64 32 4 $([ $4 = 1 ] && echo 2 || echo 8) 12 1 1
done
python3 scripts/flashinfer/pack_dumps.py $scratch/raw_small $scratch/fixtures --source "$SRC" | tee -a $R/log.txt
python3 scripts/flashinfer/pack_dumps.py $scratch/raw_big $scratch/big --source "$SRC" > /dev/null
tar -cf $OUT/fixtures.tar -C $scratch/fixtures .
log checks
for f in $scratch/big/*.npz; do
  n=$(basename $f .npz)
  case $n in *_sr) C=$R/flashinfer.ssu.sr.json ;; *) C=$R/flashinfer.ssu.json ;; esac
  t0=$(date +%s.%N)
  timeout 150 $D/ssmv check $f --contract $C --json $R/checks/$n.json > $R/checks/$n.txt 2>&1
  echo "$n rc=$? $(awk "BEGIN{print $(date +%s.%N) - $t0}") s wall" | tee -a $R/log.txt
  grep -E "(WITHIN|VIOLATION|EXACT|INVALID)|stochastic" $R/checks/$n.txt | tee -a $R/log.txt
  if [ $(( $(date +%s) - START )) -gt 420 ]; then log "time up: later checks skipped"; break; fi
done
log old preset
for n in stp_vertical_fp32state mtp4_fp32state; do
  timeout 150 $D/ssmv check $scratch/big/$n.npz --contract ssu > $R/checks/${n}_ssu.txt 2>&1
  echo "$n ssu rc=$?" | tee -a $R/log.txt; grep -E "(WITHIN|VIOLATION|EXACT|INVALID)" $R/checks/${n}_ssu.txt | tee -a $R/log.txt
  if [ $(( $(date +%s) - START )) -gt 500 ]; then break; fi
done
log done
tar -cf $OUT/results.tar -C $R .
