// What the Mamba-3 bounds need of the exact recurrence (docs/mamba3-semantics.md §3), taken from
// the certified reference run one token at a time (verify/family/mamba3/certified_trace.h):
// the exact angle and |y| of every token, and |S| at the ends of the kernel's chunks — every
// token for the step kernel (one launch per token: chunks of 1), every `chunk_size` tokens of a
// sequence and its last token for the chunked prefill, the prefill's chunk ends and then every
// token for a hand-off (TraceGrid). Everything else exact (λ, α, β, γ, tanh,
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
  std::vector<double> S_abs;        // [kept tokens, H, P, N] >= |S_t| after each kept token t (TraceGrid)
  std::vector<double> y_abs;        // [T, H, P] >= |y_t| (gated when z is given)
};

// The tokens after which a trace keeps |S|, per sequence: the last token of every chunk of
// `chunk` tokens over the sequence's first `chunked` tokens (and the last of those), then every
// token after them — a hand-off's decode steps, one launch per token. chunked = 0: the whole
// sequence is chunked (the step kernel: chunk 1; the prefill: its chunk size). A hand-off's
// |S| after every token would be T·P·N doubles per pair (537 MB at 8192 tokens, P 64, N 128);
// on this grid it is (T/chunk + decode tokens)·P·N.
struct TraceGrid {
  int64_t chunk = 1;
  int64_t chunked = 0;

  // How many tokens of a sequence of `length` tokens keep |S|.
  int64_t kept(int64_t length) const;
  // Whether token `local` of such a sequence keeps |S|, and its row among the sequence's kept
  // tokens (valid when kept).
  bool keeps(int64_t local, int64_t length) const;
  int64_t row(int64_t local, int64_t length) const;
};

// The chunks of sequence s: tokens [cu[s] + k·chunk, min(cu[s] + (k+1)·chunk, cu[s+1])), k = 0, 1, ...
// (the prefill kernel's chunks start at each sequence's first token). chunk >= 1.
int64_t chunks_of_sequence(const ssmv::mamba3::Shape& sh, int64_t s, int64_t chunk);
// The chunk ends of all sequences before s (the index of sequence s's first chunk end).
int64_t first_chunk_end(const ssmv::mamba3::Shape& sh, int64_t s, int64_t chunk);
// Every sequence's chunk ends: the leading dimension of ExactTrace::S_abs.
int64_t chunk_ends(const ssmv::mamba3::Shape& sh, int64_t chunk);
// The same on any grid: the kept tokens of the sequences before s, and of all of them.
int64_t first_kept(const ssmv::mamba3::Shape& sh, int64_t s, const TraceGrid& g);
int64_t kept_tokens(const ssmv::mamba3::Shape& sh, const TraceGrid& g);

}  // namespace ssmv::bound::mamba3
