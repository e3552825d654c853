#!/bin/bash
# The third H200 run of the FlashInfer harness (scripts/flashinfer/README.md): vLLM's
# --mamba-backend flashinfer configuration, mamba_ssm's Triton chunk_scan prefill handing its
# stored state to FlashInfer's decode (make_handoff.py), judged by ssmv check --kernel handoff.
# Run from .dev-flashinfer with carry [".dev-flashinfer", ".triton_src"]; results in OUT.
set -u -o pipefail
D=$1
OUT=$2
scratch=$(mktemp -d)  # the intermediate files (results are tarred to OUT); removed on exit
trap 'rm -rf "$scratch"' EXIT
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
R=$scratch/fi_results3
mkdir -p $R/dumps
SRC="FlashInfer $(cat $D/FLASHINFER_COMMIT), $(nvcc --version | tail -1)"
timeout 300 python3 scripts/flashinfer/make_handoff.py --driver $D/fi_ssu_nt4 --mamba-src ../.triton_src \
  --out $scratch/ho --source "$SRC" 2>&1 | tee $R/log.txt
cp $scratch/ho/*.npz $R/dumps/
for f in $R/dumps/*.npz; do
  echo "== $(basename $f)" | tee -a $R/log.txt
  $D/ssmv check $f 2>&1 | tee -a $R/log.txt
done
tar -cf $OUT/handoff.tar -C $R .
