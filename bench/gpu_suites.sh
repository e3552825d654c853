#!/bin/bash
# The full GPU suites in one device call (the tests labelled `gpu`, whose CTest paths point into
# the build tree here, run from copies): GPU = twin bit for bit for every kernel, the tensor-core
# models, the GPU properties and soundness suites, `ssmv run --device gpu`, and compute-sanitizer
# on reduced problem counts. Run from the repo root with the binaries, built here with
# -DCMAKE_CUDA_ARCHITECTURES=90 and stripped, in DIR (carried by the call):
#   bash bench/gpu_suites.sh DIR
# DIR holds fast_math_gpu_test, ssu_gpu_test, chunk_scan_gpu_test, chunk_scan_wgmma_gpu_test,
# mamba3_step_gpu_test, verify_soundness_gpu_test, ssmv_prop_gpu and ssmv; a missing one is reported as a failure.
# Everything goes to $OUT/log; the script's status is the first non-zero step's.
here=$(cd "$(dirname "$0")" && pwd)
cd "${1:?usage: gpu_suites.sh DIR}" || exit 1
log=${OUT:-.}/log
. "$here/device_steps.sh"
step nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
step ./fast_math_gpu_test
step ./ssu_gpu_test
step ./chunk_scan_gpu_test
step ./chunk_scan_wgmma_gpu_test
step ./mamba3_step_gpu_test
step env RC_PARAMS=seed=20261130 ./ssmv_prop_gpu
step env SSMV_SOUNDNESS_CASES=100 ./verify_soundness_gpu_test
step ./ssmv run --device gpu --json "${OUT:-.}/run_gpu_report.json"
step env SSU_GPU_TEST_PROBLEMS=24 compute-sanitizer --tool memcheck --error-exitcode 1 ./ssu_gpu_test
step env SSU_GPU_TEST_PROBLEMS=24 compute-sanitizer --tool racecheck --error-exitcode 1 ./ssu_gpu_test \
  --gtest_filter='SsuGpu.Random*:SsuGpu.Streamed*:SsuGpu.Tokens*'
step env SSU_GPU_TEST_PROBLEMS=24 compute-sanitizer --tool synccheck --error-exitcode 1 ./ssu_gpu_test \
  --gtest_filter='SsuGpu.Random*:SsuGpu.Streamed*:SsuGpu.Tokens*'
step env SSMV_CS_PROBLEMS=12 compute-sanitizer --tool memcheck --error-exitcode 1 ./chunk_scan_gpu_test \
  --gtest_filter='ChunkScanGpu.MatchesTwin*'
step env MAMBA3_STEP_GPU_TEST_PROBLEMS=40 compute-sanitizer --tool memcheck --error-exitcode 1 ./mamba3_step_gpu_test
exit $status
