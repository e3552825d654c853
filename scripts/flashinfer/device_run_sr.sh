#!/bin/bash
# The second H200 run of the FlashInfer harness (scripts/flashinfer/README.md): stochastic
# rounding dumps with one store per sequence (the bias test is tight there) and with several
# launches (one seed for all, a new seed per launch), and decode dumps with mild dt (δ about
# 0.02-0.1, no flushed decays) judged by flashinfer.ssu, the bundled ssu and triton.ssu presets.
# D as for device_run.sh; results in OUT (two tar files).
set -u -o pipefail
D=$1
OUT=$2
scratch=$(mktemp -d)  # the intermediate files (results are tarred to OUT); removed on exit
trap 'rm -rf "$scratch"' EXIT
R=$scratch/fi_results2
mkdir -p $R/checks $scratch/raw2_small $scratch/raw2_big $scratch/fixtures2 $scratch/big2
START=$(date +%s)
log() { echo "== $* ($(( $(date +%s) - START )) s)" | tee -a $R/log.txt; }
SRC="FlashInfer $(cat $D/FLASHINFER_COMMIT), $(nvcc --version | tail -1), $(nvidia-smi --query-gpu=name --format=csv,noheader), $(date -u +%Y-%m-%d)"
run_case() { local bin=$1 raw=$2; shift 2; $D/$bin $raw "$@" 2>&1 | tee -a $R/log.txt; }
log dumps
# name state input K algo batch H G T seed z sr
run_case fi_ssu_nt4_sr $scratch/raw2_small mtp4_fp16state_sr_1launch fp16 bf16 4 simple 2 2 1 4 21 1 1
run_case fi_ssu_nt4_sr $scratch/raw2_small stp_vertical_fp16state_sr_1token fp16 bf16 1 vertical 2 2 1 1 22 1 1
run_case fi_ssu_nt4_sr $scratch/raw2_big mtp4_fp16state_sr_1launch fp16 bf16 4 simple 64 32 4 4 23 1 1
run_case fi_ssu_nt4_sr $scratch/raw2_big stp_vertical_fp16state_sr_1token fp16 bf16 1 vertical 64 32 4 1 24 1 1
run_case fi_ssu_nt4_sr $scratch/raw2_big stp_vertical_fp16state_sr_T8_oneseed fp16 bf16 1 vertical 16 32 4 8 25 1 1
run_case fi_ssu_nt4_sr $scratch/raw2_big stp_vertical_fp16state_sr_T8_newseed fp16 bf16 1 vertical 16 32 4 8 25 1 2
export FI_DT_MEAN=0 FI_DT_STD=0.5
run_case fi_ssu_nt4 $scratch/raw2_big mild_stp_vertical_fp32state fp32 bf16 1 vertical 64 32 4 2 26 1 0
run_case fi_ssu_nt4 $scratch/raw2_big mild_mtp4_fp32state fp32 bf16 4 simple 64 32 4 8 27 1 0
run_case fi_ssu_nt4 $scratch/raw2_big mild_stp_simple_fp32in_fp32state fp32 fp32 1 simple 64 32 4 2 28 1 0
run_case fi_ssu_nt4 $scratch/raw2_small mild_mtp4_fp32state fp32 bf16 4 simple 2 2 1 8 29 1 0
unset FI_DT_MEAN FI_DT_STD
python3 scripts/flashinfer/pack_dumps.py $scratch/raw2_small $scratch/fixtures2 --source "$SRC" | tee -a $R/log.txt
python3 scripts/flashinfer/pack_dumps.py $scratch/raw2_big $scratch/big2 --source "$SRC" --without-contract > /dev/null
tar -cf $OUT/fixtures2.tar -C $scratch/fixtures2 .
log checks
for f in $scratch/big2/*.npz; do
  n=$(basename $f .npz)
  case $n in *_sr*) CS="flashinfer.ssu.sr" ;; *) CS="flashinfer.ssu ssu triton.ssu" ;; esac
  for C in $CS; do
    t0=$(date +%s.%N)
    timeout 150 $D/ssmv check $f --contract $C --json $R/checks/${n}_$C.json > $R/checks/${n}_$C.txt 2>&1
    echo "$n $C rc=$? $(awk "BEGIN{print $(date +%s.%N) - $t0}") s wall" | tee -a $R/log.txt
    grep -E "(WITHIN|VIOLATION|EXACT|INVALID)|stochastic|bound of worst" $R/checks/${n}_$C.txt | tee -a $R/log.txt
  done
  if [ $(( $(date +%s) - START )) -gt 400 ]; then log "time up: later checks skipped"; break; fi
done
log done
tar -cf $OUT/results2.tar -C $R .
