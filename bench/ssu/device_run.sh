#!/bin/bash
# One device call for SSU (issue 3): GPU tests, compute-sanitizer memcheck, racecheck and
# synccheck on a reduced problem count, then the benchmark. Run from the repo root with the
# binaries (ssu_gpu_test, ssu_bench, optionally ssu_bench_<variant>) copied into
# build-dev-ssu/ (built here with -DCMAKE_CUDA_ARCHITECTURES=90, carried by the call);
# everything goes to $OUT/log. Each step's exit status is printed; the script's status is
# the first non-zero one.
cd build-dev-ssu || exit 1
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
step ./ssu_gpu_test
export SSU_GPU_TEST_PROBLEMS=24
step compute-sanitizer --tool memcheck --error-exitcode 1 ./ssu_gpu_test --gtest_filter='SsuGpu.Random*:SsuGpu.Unaligned*:SsuGpu.Benchmark*:SsuGpu.Streamed*'
step compute-sanitizer --tool racecheck --error-exitcode 1 ./ssu_gpu_test --gtest_filter='SsuGpu.Random*:SsuGpu.Streamed*'
step compute-sanitizer --tool synccheck --error-exitcode 1 ./ssu_gpu_test --gtest_filter='SsuGpu.Random*:SsuGpu.Streamed*'
unset SSU_GPU_TEST_PROBLEMS
step ./ssu_bench 200
for v in ./ssu_bench_*; do [ -x "$v" ] && step "$v" 200 256; done
exit $status
