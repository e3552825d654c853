#!/bin/bash
# One device call for SSU (issue 3): GPU tests, compute-sanitizer memcheck and racecheck on
# a reduced problem count, then the benchmark and its geometry variants. Run from the repo
# root with the binaries in build-ssu/dev (built here with -DCMAKE_CUDA_ARCHITECTURES=90);
# everything goes to $OUT/log. Each step's exit status is printed; the script's status is
# the first non-zero one.
cd build-ssu/dev || exit 1
log=$OUT/log
status=0
step() {
  echo "=== $* ($(date -u +%FT%TZ))" | tee -a "$log"
  "$@" 2>&1 | tee -a "$log"
  local rc=${PIPESTATUS[0]}
  echo "=== rc=$rc: $*" | tee -a "$log"
  [ $status -eq 0 ] && status=$rc
}
step nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
step ./fast_math_gpu_test
step ./ssu_gpu_test
export SSU_GPU_TEST_PROBLEMS=24
step compute-sanitizer --tool memcheck --error-exitcode 1 ./ssu_gpu_test --gtest_filter='SsuGpu.Random*:SsuGpu.Unaligned*:SsuGpu.Benchmark*'
step compute-sanitizer --tool racecheck --error-exitcode 1 ./ssu_gpu_test --gtest_filter='SsuGpu.Random*:SsuGpu.Unaligned*'
unset SSU_GPU_TEST_PROBLEMS
step ./ssu_bench 200
for v in rows8_min1 rows4 rows4_min8 rows16_min3; do step ./ssu_bench_$v 200 256; done
exit $status
