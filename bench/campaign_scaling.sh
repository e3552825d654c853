#!/usr/bin/env bash
# The campaign figures of bench/NOTES.md ("MPI campaigns"): ssmv-campaign on 1, 2, 4, 8, 16
# MPI ranks (CPU scaling; each report compared with the 1-rank one), a GPU campaign on one
# rank, and every twin property on 16 ranks. Run on the H200 host from a folder holding the
# stripped ssmv-campaign and, where the host has no Open MPI, Debian's Open MPI unpacked
# (`apt-get download openmpi-bin openmpi-common libopenmpi3 libpmix2 libhwloc15 ...`, then
# `dpkg -x` each into a prefix, tarred as ompi-prefix.tar.gz) with ompi-env.sh setting
# OPAL_PREFIX, PMIX_INSTALL_PREFIX, LD_LIBRARY_PATH and PATH for the prefix $P (where this
# script unpacks it, in its scratch folder).
# Usage: bash campaign_scaling.sh OUTDIR. Sizes: CPU_CASES (2000), RANKS ("1 2 4 8 16"),
# GPU_MULT (8), TWIN_MULT (5), TWIN_RANKS (16).
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=$1
mkdir -p "$out"
scratch=$(mktemp -d)  # the unpacked Open MPI and the campaign folders; removed on exit
trap 'rm -rf "$scratch"' EXIT
exec > >(tee -a "$out/device.log") 2>&1
launcher=mpirun
if [ -f "$here/ompi-prefix.tar.gz" ]; then
  P=$scratch/ompi; mkdir -p $P && tar xzf "$here/ompi-prefix.tar.gz" -C $P
  source "$here/ompi-env.sh"
  launcher=mpirun.openmpi
fi
B=${SSMV_CAMPAIGN:-$here/ssmv-campaign}
echo "== host"; date -u; nproc; nvidia-smi -L; echo "system mpirun: $(command -v mpirun || echo none)"
$launcher --version | head -1
echo "ssmv-campaign gpus: $($B gpus)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi() { $launcher --allow-run-as-root --oversubscribe --bind-to none -n "$@"; }
elapsed() { awk "BEGIN{print $2 - $1}"; }
W=$scratch/campaigns; mkdir -p $W
cpu="--properties SsuContract.StateFp32,ChunkScanContract.Production64,VarlenPacking.Ssu,HandoffContract.Production --cases ${CPU_CASES:-2000} --multiplier 1 --units 32"
echo "== CPU scaling: $cpu"
for r in ${RANKS:-1 2 4 8 16}; do
  s=$(date +%s.%N)
  timeout 100 bash -c "$(declare -f mpi); launcher=$launcher; mpi $r $B run $W/cpu$r $cpu > $W/cpu$r.log 2>&1"; rc=$?
  echo "ranks $r rc $rc wall $(elapsed $s $(date +%s.%N)) s: $(grep '^\[campaign\] \(PASS\|FAIL\|INCOMPLETE\)' $W/cpu$r.log)"
  cmp -s $W/cpu1/report.json $W/cpu$r/report.json && echo "  report identical to 1 rank" || echo "  REPORT DIFFERS from 1 rank"
done
echo "== GPU campaign, one rank: gpu properties x${GPU_MULT:-8}"
s=$(date +%s.%N)
timeout 130 bash -c "$(declare -f mpi); launcher=$launcher; mpi 1 $B run $W/gpu --properties gpu --multiplier ${GPU_MULT:-8} --units 8 > $W/gpu.log 2>&1"; rc=$?
echo "gpu rc $rc wall $(elapsed $s $(date +%s.%N)) s: $(grep '^\[campaign\]' $W/gpu.log | tail -1)"
$B report $W/gpu > /dev/null 2>&1; cp $W/gpu/report.md $out/gpu-report.md; cp $W/gpu/report.json $out/gpu-report.json
echo "== twin campaign, ${TWIN_RANKS:-16} ranks: every twin property x${TWIN_MULT:-5}"
s=$(date +%s.%N)
timeout 100 bash -c "$(declare -f mpi); launcher=$launcher; mpi ${TWIN_RANKS:-16} $B run $W/twin --properties twin --multiplier ${TWIN_MULT:-5} --units 16 > $W/twin.log 2>&1"; rc=$?
echo "twin rc $rc wall $(elapsed $s $(date +%s.%N)) s: $(grep '^\[campaign\]' $W/twin.log | tail -1)"
$B report $W/twin > /dev/null 2>&1; cp $W/twin/report.md $out/twin-report.md
grep -h '"seconds"' $W/twin/units/*.json | awk '{s+=$2} END {print "twin unit CPU seconds", s}'
