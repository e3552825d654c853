#!/bin/bash
# Stage (e) on wgmma (issue 19, branch cswg) in one device call: the wgmma model regimes
# (the MN-major B form among them), GPU = twin with stage (e) on wgmma and on mma.sync, the
# chunk_scan properties on the GPU, chunk_scan_bench (both stage (e) kernels in one process;
# twice, and a reference binary chunk_scan_bench_main when DIR has one), compute-sanitizer
# memcheck and racecheck, and ncu on one 1 × 8192 launch of each stage (e) kernel (with
# source counters: per-SASS-instruction counts in $OUT/<kernel>_sass.csv). Run from
# the repo root with the binaries, built here with -DCMAKE_CUDA_ARCHITECTURES=90 and
# stripped, in DIR (carried by the call), beside a copy of bench/device_steps.sh:
#   bash DIR/stage_e_wgmma_run.sh DIR
# Everything goes to $OUT/log; the status is the first non-zero step's.
here=$(cd "$(dirname "$0")" && pwd)
cd "${1:?usage: stage_e_wgmma_run.sh DIR}" || exit 1
log=${OUT:-.}/log
scratch=$(mktemp -d)  # ncu's reports; removed on exit
trap 'rm -rf "$scratch"' EXIT
. "$here/device_steps.sh"
step nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
step ./chunk_scan_wgmma_gpu_test
step ./chunk_scan_gpu_test
step env RC_PARAMS=seed=20261130 ./ssmv_prop_gpu --gtest_filter='*ChunkScan*:*Handoff*'
step ./chunk_scan_bench
[ -x ./chunk_scan_bench_main ] && step ./chunk_scan_bench_main
step ./chunk_scan_bench
step env SSMV_CS_PROBLEMS=12 compute-sanitizer --tool memcheck --error-exitcode 1 ./chunk_scan_gpu_test \
  --gtest_filter='ChunkScanGpu.MatchesTwin*'
step env SSMV_CS_PROBLEMS=6 compute-sanitizer --tool racecheck --error-exitcode 1 ./chunk_scan_gpu_test \
  --gtest_filter='ChunkScanGpu.MatchesTwin*'
for k in scan_wgmma_kernel scan_async_kernel; do
  step timeout 120 ncu --clock-control none -k "regex:$k" --launch-count 1 --section SpeedOfLight \
    --section ComputeWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats \
    --section SourceCounters --metrics smsp__inst_executed.sum,sm__inst_issued.avg.pct_of_peak_sustained_active \
    -f -o "$scratch/$k" ./chunk_scan_bench
  step ncu -i "$scratch/$k.ncu-rep"
  ncu -i "$scratch/$k.ncu-rep" --page source --csv --print-source sass > "${OUT:-.}/${k}_sass.csv" 2>&1
done
exit $status
