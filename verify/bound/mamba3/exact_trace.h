// What the Mamba-3 bounds need of the exact recurrence (docs/mamba3-semantics.md §3), taken from
// the certified reference run one token at a time (verify/family/mamba3/certified_trace.h):
// the exact angle and |y| of every token, and |S| at the ends of the kernel's chunks — every
// token for the step kernel (one launch per token: chunks of 1), every `chunk_size` tokens of a
// sequence and its last token for the chunked prefill. Everything else exact (λ, α, β, γ, tanh,
// u = B + B_bias, b_t and c_t from θ_t) the bounds evaluate in double with a stated margin
// (docs/mamba3-bounds.md §9).
#pragma once

#include <cstdint>
#include <vector>

#include "spec/mamba3/problem.h"

namespace ssmv::bound::mamba3 {

struct ExactTrace {
  std::vector<double> angle;        // [T, H, R] θ_t reduced to [0, 2π) (any representative mod 2π)
  std::vector<double> angle_error;  // [T, H, R] |θ_t − angle| modulo 2π, at most
  std::vector<double> S_abs;        // [chunk ends, H, P, N] >= |S_t| after the chunk's last token t
  std::vector<double> y_abs;        // [T, H, P] >= |y_t| (gated when z is given)
};

// The chunks of sequence s: tokens [cu[s] + k·chunk, min(cu[s] + (k+1)·chunk, cu[s+1])), k = 0, 1, ...
// (the prefill kernel's chunks start at each sequence's first token). chunk >= 1.
int64_t chunks_of_sequence(const ssmv::mamba3::Shape& sh, int64_t s, int64_t chunk);
// The chunk ends of all sequences before s (the index of sequence s's first chunk end).
int64_t first_chunk_end(const ssmv::mamba3::Shape& sh, int64_t s, int64_t chunk);
// Every sequence's chunk ends: the leading dimension of ExactTrace::S_abs.
int64_t chunk_ends(const ssmv::mamba3::Shape& sh, int64_t chunk);

}  // namespace ssmv::bound::mamba3
