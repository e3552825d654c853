// SSMV_VECTOR_CLONES: compile a hot loop function three times, for x86-64-v4 (AVX-512), for
// AVX2 and for baseline x86-64, and pick one at load time by the CPU (GCC/Clang
// target_clones). The loops over a row of a state (64–128 doubles) then run 8 or 4 doubles
// wide instead of SSE2's 2 where the CPU allows, and AVX-512 brings the 64-bit integer
// multiplies and compares (the sharp runs' keyed noise, the format roundings) that AVX2 lacks.
// The bits are the same in every clone: the build passes -ffp-contract=off, so no a·b + c is
// contracted even where the target has FMA (x86-64-v4 does), and vectorising independent
// lanes does not reorder any one value's operations (no -ffast-math).
// Measured on an AMD EPYC (Zen 4) dev box: a chunk_scan check's CPU time −12 %, the sharp
// verdict's −20 %, every JSON report byte-identical (bench/NOTES.md, session 19).
// Elsewhere (other compilers, other architectures) it is empty.
//
// No exception may leave a clone: GCC 12 (Debian 12's) terminates the program when one passes
// through a target_clones function's frame, even one thrown by a function it calls (a
// std::function callback included; checked with a ten-line program at -O0 and -O2). Code that
// a clone calls back reports a failure another way (verify/sharp/emulation.h UnitOutputs::stop).
//
// SSMV_VECTOR_FMA_CLONES: the same for x86-64-v4 and x86-64-v3 (AVX2 and FMA), for code whose
// every fused operation is an explicit std::fma (one rounding in every clone, whether an
// instruction or libm's call), so that every clone gives the same bits: the reference's
// double-double rows (reference/tiered.cpp).
#pragma once

// SSMV_X86_TARGETS: 1 where the two macros above compile clones (GCC or Clang on x86-64, not
// nvcc), for code that picks its own target per function (spec/rows_product.cpp); else 0.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__CUDACC__)
#define SSMV_X86_TARGETS 1
#define SSMV_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#define SSMV_VECTOR_FMA_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define SSMV_X86_TARGETS 0
#define SSMV_VECTOR_CLONES
#define SSMV_VECTOR_FMA_CLONES
#endif

#include <bit>
#include <cstdint>

namespace ssmv {

// c ? a : b on the bits, with a and b both computed: for the loops the clones are for. GCC
// made a branch of ?: where one arm was a quotient or a product (the operation moved into the
// arm), and a loop with a branch does not vectorise.
inline double pick(bool c, double a, double b) {
  const uint64_t m = uint64_t{0} - uint64_t(c);
  return std::bit_cast<double>((std::bit_cast<uint64_t>(a) & m) | (std::bit_cast<uint64_t>(b) & ~m));
}

}  // namespace ssmv
