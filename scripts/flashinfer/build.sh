#!/bin/sh
# Builds the FlashInfer harness of this folder on the development machine (nvcc, sm_90) into OUT:
#   libfi_fast_math.so            the fast-math expressions measured by measure_budgets.py
#   fi_ssu_nt4, fi_ssu_nt4_sr     ssu_driver.cu: STP and 4-token MTP launches; _sr with Philox
#                                 stochastic rounding of fp16 states (PHILOX_ROUNDS = 10)
#   fi_bench_nt2, _nt4, _nt8      fi_bench.cu: the kernel timed as bench/ssu/ssu_bench times ssmv's
#                                 (one token per request, and 2, 4, 8 tokens in one MTP launch)
#   fi_ssu_nt2, fi_ssu_nt8        ssu_driver.cu with NTOKENS_MTP = 2 and 8 (2- and 8-token launches)
# FI_SRC is an export of FlashInfer's include/ (git archive HEAD include/flashinfer), never
# committed. Flags: FlashInfer's JIT (flashinfer/jit/core.py gen_jit_spec, jit/cpp_ext.py
# build_cuda_cflags, jit/mamba/selective_state_update.py gen_selective_state_update_sm90_module),
# plus --diag_warning=2361: at the fetched commit kernel_selective_state_update_stp.cuh:1289
# narrows params.state_stride_batch (int64_t) into a std::vector<uint64_t> initializer, an error
# in nvcc 13's front end; host code only (the TMA descriptor's stride), no arithmetic changes.
# Usage: scripts/flashinfer/build.sh FI_SRC OUT
set -eu
FI_SRC=$1
OUT=$2
HERE=$(cd "$(dirname "$0")" && pwd)
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
mkdir -p "$OUT"
FLAGS="-std=c++20 -O3 -DNDEBUG -use_fast_math -arch=sm_90 --expt-relaxed-constexpr -DFLASHINFER_ENABLE_F16 \
 -DFLASHINFER_ENABLE_BF16 -DFLASHINFER_MAMBA_ENABLE_SM90 -Xcudafe --diag_warning=2361 -I$FI_SRC/include -I$HERE/../.."
"$NVCC" -O3 -use_fast_math -arch=sm_90 -shared -Xcompiler -fPIC "$HERE/fast_math_eval.cu" -o "$OUT/libfi_fast_math.so"
"$NVCC" $FLAGS -DNTOK=4 -DPHILOX=0 "$HERE/ssu_driver.cu" -o "$OUT/fi_ssu_nt4" -lcuda &
"$NVCC" $FLAGS -DNTOK=4 -DPHILOX=10 "$HERE/ssu_driver.cu" -o "$OUT/fi_ssu_nt4_sr" -lcuda &
"$NVCC" $FLAGS -DNTOK=2 -DPHILOX=0 "$HERE/ssu_driver.cu" -o "$OUT/fi_ssu_nt2" -lcuda &
"$NVCC" $FLAGS -DNTOK=8 -DPHILOX=0 "$HERE/ssu_driver.cu" -o "$OUT/fi_ssu_nt8" -lcuda &
wait
for k in 2 4 8; do "$NVCC" $FLAGS -DNTOK=$k "$HERE/fi_bench.cu" -o "$OUT/fi_bench_nt$k" -lcuda & done
wait
