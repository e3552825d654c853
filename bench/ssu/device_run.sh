#!/bin/bash
# One device call for the SSU kernels: GPU tests, compute-sanitizer memcheck, racecheck and
# synccheck on a reduced problem count, then the benchmarks — ssmv's ssu_bench, its geometry
# variants (ssu_bench_<variant>) and, in the same run where they are present, FlashInfer's
# kernel (fi_bench_nt*, scripts/flashinfer/build.sh) and mamba_ssm's Triton kernel
# (scripts/triton/ssu_bench.py, with .triton_src carried). Run from the repo root:
#   bash bench/ssu/device_run.sh DIR
# DIR (default build-dev-ssu) holds the binaries, built here with -DCMAKE_CUDA_ARCHITECTURES=90
# and carried by the call; everything goes to $OUT/log. Each step's exit status is printed;
# the script's status is the first non-zero one.
root=$(pwd)
here=$(cd "$(dirname "$0")" && pwd)
cd "${1:-build-dev-ssu}" || exit 1
log=$OUT/log
. "$here/../device_steps.sh"
step nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
step ./ssu_gpu_test
export SSU_GPU_TEST_PROBLEMS=24
filter='SsuGpu.Random*:SsuGpu.Unaligned*:SsuGpu.Benchmark*:SsuGpu.Streamed*:SsuGpu.Tokens*:SsuGpu.Octet*'
step compute-sanitizer --tool memcheck --error-exitcode 1 ./ssu_gpu_test --gtest_filter="$filter"
step compute-sanitizer --tool racecheck --error-exitcode 1 ./ssu_gpu_test --gtest_filter="$filter"
step compute-sanitizer --tool synccheck --error-exitcode 1 ./ssu_gpu_test --gtest_filter="$filter"
unset SSU_GPU_TEST_PROBLEMS
step ./ssu_bench 200
for v in ./ssu_bench_*; do [ -x "$v" ] && step "$v" 200; done
for f in ./fi_bench_nt*; do [ -x "$f" ] && step "$f" 200; done
if [ -d "$root/.triton_src" ]; then
  cd "$root" && step python3 scripts/triton/ssu_bench.py --iterations 200
fi
exit $status
