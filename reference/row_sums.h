// Σ_n a[n]·rows[p·N + n] for every row p of a [P, N] matrix, each sum in the order of n from
// zero, a product then an add — the bits of the scalar loop — computed four rows side by side
// as the lanes of a vector (each 4 × 4 block of the rows transposed in registers): the scalar
// loop waited on each add's latency. Compiled for AVX-512, AVX2 (nothing is contracted:
// -ffp-contract=off) and generic x86-64 (row_sums.cpp). The fast tier's
// carried errors Σ|C|·E and the magnitude recurrence's Σ|C|·Ŝ are such sums.
#pragma once

#include <cstdint>

namespace ssmv::ref {

void weighted_row_sums(const double* a, const double* rows, int64_t P, int64_t N, double* out);

}  // namespace ssmv::ref
