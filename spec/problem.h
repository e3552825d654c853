// The problem description shared by every part of ssmv: shapes, options, formats and the
// input tensors of the Mamba2 recurrence (docs/design.md section 2), plus its decode
// form over a state pool (what SSU computes). No MPFR, no CUDA.
//
// Semantics, per token t of sequence s and head h (g = h / (H/G)):
//   δ = dt[t,h] + dt_bias[h];  δ = softplus(δ) if dt_softplus;  δ = clamp(δ, lo, hi)
//   S[h,p,n] = exp(δ·A[h])·S[h,p,n] + (δ·B[t,g,n])·x[t,h,p]
//   y[t,h,p] = Σ_n C[t,g,n]·S[h,p,n] + D·x[t,h,p];  y = y·z·σ(z) if z is given
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "spec/format.h"
#include "spec/format_values.h"

namespace ssmv {

// Thrown by validate(): the message names the field and the offending value.
class ProblemError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct Shape {
  std::vector<int64_t> cu_seqlens;  // [S+1]: sequence s owns packed tokens [cu[s], cu[s+1])
  int64_t H = 0;                    // heads
  int64_t P = 0;                    // head dim
  int64_t N = 0;                    // state dim
  int64_t G = 0;                    // groups of B and C; G divides H

  int64_t num_sequences() const { return cu_seqlens.empty() ? 0 : int64_t(cu_seqlens.size()) - 1; }
  int64_t num_tokens() const { return cu_seqlens.empty() ? 0 : cu_seqlens.back(); }
  int64_t seq_len(int64_t s) const { return cu_seqlens[s + 1] - cu_seqlens[s]; }
  int64_t group_of(int64_t h) const { return h / (H / G); }
  int64_t state_elements_per_sequence() const { return H * P * N; }
};

struct Formats {
  Format input = Format::bf16;   // x, dt, B, C, z
  Format state = Format::fp32;   // initial and returned states, the state pool
  Format output = Format::bf16;  // y
};

enum class DMode : uint8_t { none, per_head, per_head_dim };

// All tensors are row-major and hold values exact in their format (float holds every
// bf16, fp16 and fp32 value exactly). The input-format tensors are FormatValues
// (spec/format_values.h): a dump's or a production-shaped generator's are narrowed to the
// input format (bf16 and fp16 held as their bits, 2 bytes an element, and never written
// again), a test's may stay loose floats. An optional tensor (z, dt_bias, D, initial_state)
// is absent when empty; ask has_z(), has_dt_bias(), has_D(), has_initial_state(). (The
// kernels' Params say the same with a null pointer: fast/*/params.h.)
struct Problem {
  Shape shape;
  Formats formats;
  bool dt_softplus = false;
  // δ = clamp(δ, lo, hi); the default (-inf, +inf) clamps nothing.
  float dt_limit_lo = -std::numeric_limits<float>::infinity();
  float dt_limit_hi = std::numeric_limits<float>::infinity();

  FormatValues x;                    // [T, H, P]    input format
  FormatValues dt;                   // [T, H]       input format
  std::vector<float> A;              // [H]          fp32
  FormatValues B;                    // [T, G, N]    input format
  FormatValues C;                    // [T, G, N]    input format
  FormatValues z;                    // [T, H, P]    input format, or empty
  std::vector<float> dt_bias;        // [H]          fp32, or empty
  std::vector<float> D;              // [H] or [H, P] fp32, or empty
  std::vector<float> initial_state;  // [S, H, P, N] state format, or empty (zero state)

  DMode d_mode() const;
  bool has_z() const { return !z.empty(); }
  bool has_dt_bias() const { return !dt_bias.empty(); }
  bool has_initial_state() const { return !initial_state.empty(); }
  bool has_D() const { return !D.empty(); }
  // D for (h, p); 0 when D is absent.
  float d_value(int64_t h, int64_t p) const;

  // Index helpers for the row-major layouts above.
  int64_t x_index(int64_t t, int64_t h, int64_t p) const { return (t * shape.H + h) * shape.P + p; }
  int64_t dt_index(int64_t t, int64_t h) const { return t * shape.H + h; }
  int64_t bc_index(int64_t t, int64_t g, int64_t n) const { return (t * shape.G + g) * shape.N + n; }
  int64_t state_index(int64_t s, int64_t h, int64_t p, int64_t n) const {
    return ((s * shape.H + h) * shape.P + p) * shape.N + n;
  }
};

// The decode form (SSU): request s is sequence s of `problem` (one or more tokens) and
// works on a state pool. It reads pool[slot_in[s]] as its initial state and writes its
// final state to pool[slot_out[s]]. A request whose slot_in is pad_slot_id reads a zero
// state and writes no state; its y is still defined (computed from the zero state).
struct DecodeProblem {
  Problem problem;                // problem.initial_state must be empty
  int64_t slots = 0;
  std::vector<float> state_pool;  // [slots, H, P, N] state format
  std::vector<int64_t> slot_in;   // [S] slot read by request s, or pad_slot_id
  std::vector<int64_t> slot_out;  // [S] slot written by request s; empty means slot_in
  int64_t pad_slot_id = -1;

  int64_t out_slot(int64_t s) const { return slot_out.empty() ? slot_in[s] : slot_out[s]; }
  bool is_pad(int64_t s) const { return slot_in[s] == pad_slot_id; }
};

// Largest state (elements over all sequences, or of a state pool) ssmv accepts: 2^34
// elements (64 GiB in fp32), beyond any problem the reference or an H200 could hold.
inline constexpr int64_t kMaxStateElements = int64_t{1} << 34;
// Largest packed token count: 2^31 - 1 (kernels index tokens with 32-bit integers).
inline constexpr int64_t kMaxTokens = (int64_t{1} << 31) - 1;

// Throws ProblemError naming the field and value: G not dividing H, non-positive sizes,
// cu_seqlens not starting at 0 / decreasing / empty sequences, tensor sizes that disagree
// with the shape, values not exact in their format (a tensor narrowed to the input format is
// exact by construction), NaN or Inf inputs, dt_limit with lo > hi or NaN, states too large.
void validate(const Problem& p);
// Also checks slot indices (in range or pad), distinct written slots, and that no slot
// written by one request is read by another (the result would depend on order).
void validate(const DecodeProblem& d);

// `p` as a decode launch: request s is sequence s and reads and writes slot s, which holds
// sequence s's initial state (zeros without one); S slots, no pad.
DecodeProblem one_slot_per_sequence(Problem p);

}  // namespace ssmv
