// SSMV_VECTOR_CLONES: compile a hot loop function twice, for AVX2 and for baseline x86-64,
// and pick one at load time by the CPU (GCC/Clang target_clones). The loops over a row of a
// state (64–128 doubles) then run 4 doubles wide instead of SSE2's 2 where the CPU allows.
// The bits are the same in both clones: "avx2" does not include FMA, so no a·b + c is
// contracted, and vectorising independent lanes does not reorder any one value's operations
// (no -ffast-math). Elsewhere (other compilers, other architectures) it is empty.
//
// SSMV_VECTOR_FMA_CLONES: the same for x86-64-v3 (AVX2 and FMA), for code whose every fused
// operation is an explicit std::fma (one rounding in both clones) and whose results are
// tested equal in both: the reference's double-double rows (reference/tiered.cpp).
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__CUDACC__)
#define SSMV_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#define SSMV_VECTOR_FMA_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
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
