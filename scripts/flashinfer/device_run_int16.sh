#!/bin/bash
# The fourth H200 run of the FlashInfer harness (scripts/flashinfer/README.md), from the folder D
# the device tool carries (.dev-int16: fi_ssu_nt2, fi_ssu_nt4, fi_ssu_nt8 from build.sh,
# FLASHINFER_COMMIT, a copy of scripts/ and mamba_ssm's exported source in triton_src/):
#   1. scaled int16 states (state_scale): single-token simple and vertical, 2-, 4- and 8-token MTP;
#   2. 2- and 8-token MTP launches with fp32 and bf16 states;
#   3. mamba_ssm's Triton selective_state_update on the problems of two FlashInfer dumps
#      (triton_same_problem.py), for ssmv compare;
# small problems (batch 2, H 2, G 1, P 64, N 128, 8 tokens: CI fixtures) and medium ones (batch 8,
# H 8, G 2, 8 tokens: figures only). Nothing is judged here; OUT gets two tar files and the log.
set -u -o pipefail
D=$1
OUT=$2
scratch=$(mktemp -d)  # the intermediate files (results are tarred to OUT); removed on exit
trap 'rm -rf "$scratch"' EXIT
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
R=$scratch/fi_results4
mkdir -p $R $scratch/raw_small $scratch/raw_med $scratch/fixtures $scratch/med
START=$(date +%s)
log() { echo "== $* ($(( $(date +%s) - START )) s)" | tee -a $R/log.txt; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -2; date -u; } 2>&1 | tee -a $R/log.txt
SRC="FlashInfer $(cat $D/FLASHINFER_COMMIT), $(nvcc --version | tail -1), $(nvidia-smi --query-gpu=name --format=csv,noheader), $(date -u +%Y-%m-%d)"
log dumps
# binary name state input K algo | batch H G T seed z sr
run_case() { $D/$1 $2 $3 $4 $5 $6 $7 $8 $9 ${10} ${11} ${12} ${13} ${14} 2>&1 | tee -a $R/log.txt; }
for c in "fi_ssu_nt4 stp_simple_int16state int16 bf16 1 simple" "fi_ssu_nt4 stp_vertical_int16state int16 bf16 1 vertical" \
         "fi_ssu_nt4 stp_simple_fp32in_int16state int16 fp32 1 simple" "fi_ssu_nt4 mtp4_int16state int16 bf16 4 simple" \
         "fi_ssu_nt2 mtp2_int16state int16 bf16 2 simple" "fi_ssu_nt8 mtp8_int16state int16 bf16 8 simple" \
         "fi_ssu_nt2 mtp2_fp32state fp32 bf16 2 simple" "fi_ssu_nt2 mtp2_bf16state bf16 bf16 2 simple" \
         "fi_ssu_nt8 mtp8_fp32state fp32 bf16 8 simple" "fi_ssu_nt8 mtp8_bf16state bf16 bf16 8 simple" \
         "fi_ssu_nt4 cmp_stp_auto_fp32state fp32 bf16 1 auto" "fi_ssu_nt4 cmp_stp_auto_bf16state bf16 bf16 1 auto"; do
  set -- $c
  run_case $1 $scratch/raw_small $2 $3 $4 $5 $6 2 2 1 8 11 1 0
  case $2 in mtp2_*|mtp8_*|stp_simple_fp32in*) ;; *) run_case $1 $scratch/raw_med $2 $3 $4 $5 $6 8 8 2 8 12 1 0 ;; esac
done
python3 scripts/flashinfer/pack_dumps.py $scratch/raw_small $scratch/fixtures --source "$SRC" | tee -a $R/log.txt
python3 scripts/flashinfer/pack_dumps.py $scratch/raw_med $scratch/med --source "$SRC" > /dev/null
log triton
for dir in $scratch/fixtures $scratch/med; do
  for s in fp32 bf16; do
    timeout 200 python3 scripts/flashinfer/triton_same_problem.py $dir/cmp_stp_auto_${s}state.npz \
      $dir/cmp_triton_${s}state.npz --mamba-src $D/triton_src 2>&1 | tee -a $R/log.txt
  done
done
log done
tar -cf $OUT/fixtures.tar -C $scratch/fixtures .
tar -cf $OUT/medium.tar -C $scratch/med .
cp $R/log.txt $OUT/
