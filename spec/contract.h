// A kernel's precision contract, as data: where it may round and to what, the error
// budgets of its transcendentals, how it reduces, and any documented difference between
// the GPU and its host twin. fast/ declares the bundled kernels' contracts with these
// types (fast/ must not depend on verify/); verify/ reads them (and JSON files of the same
// shape) to build per-element error bounds. See ../shared/BOUNDS.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spec/format.h"

namespace ssmv {

// The format an intermediate is rounded to, relative to the problem's formats where the
// kernel follows them (the production chunk_scan rounds to "the input format").
enum class FormatRef : uint8_t { input, state, output, fp32, bf16, fp16 };

// The algorithm family the bound follows.
enum class Family : uint8_t {
  sequential,  // SSU: token by token, state kept in fp32 between the tokens of one launch
  chunked,     // chunk_scan: chunked SSD with chunk length chunk_size
};

// Named values of the algorithm that a kernel may round before using them.
enum class Point : uint8_t {
  dt_scaled_B,              // chunked: B_k·δ_k·exp(s_last − s_k) before the chunk-state product
  decayed_CB,               // chunked: (C_m·B_k)·exp(s_m − s_k)·δ_k before it multiplies x_k
  incoming_state,           // chunked: the state entering a chunk, before C·S (inter-chunk term)
  stored_state,             // the state stored between launches / chunks / decode steps
  output,                   // y stored in the output format
};

struct Rounding {
  Point point;
  FormatRef format;  // rounded to nearest even in this format
};

// Error budget of one transcendental, in ULPs of fp32 (the format it is evaluated in):
// |computed − exact| ≤ (ulp_const + ulp_per_abs_arg·|arg|)·ulp(exact) + abs_error,
// valid for arguments in [arg_lo, arg_hi].
struct TranscendentalBudget {
  std::string function;  // "exp", "softplus", "sigmoid", "log1p"
  double ulp_const = 0;
  double ulp_per_abs_arg = 0;
  double abs_error = 0;
  double arg_lo = 0, arg_hi = 0;
  std::string how_measured;  // command/date of the measurement that backs the figures
};

// How a reduction is evaluated (the γ of its bound depends on it).
enum class ReductionOrder : uint8_t {
  sequential_fma,   // s = fma(a_i, b_i, s), i = 0..len-1
  tree,             // pairwise, depth ceil(log2 len)
  mma_m16n8k16,     // tensor-core steps of 16 products, truncating sum (DESIGN.md §4)
};

struct Reduction {
  std::string what;  // "y = Σ_n C·S", "C·Bᵀ", "chunk state", ...
  ReductionOrder order = ReductionOrder::sequential_fma;
  // sequential_fma only: the terms are split into `partials` interleaved partial sums,
  // each accumulated sequentially, then combined by a pairwise tree (1: purely sequential).
  int64_t partials = 1;
  std::string detail;  // e.g. "each lane: N/32 sequential fmaf; then a 5-level shuffle tree"
};

// The most roundings any one term of a `length`-term sum passes through under `r`
// (the k of the γ_k that bounds the sum): sequential ceil(length/partials) +
// ceil(log2 partials); tree ceil(log2 length); mma_m16n8k16 one per 16-wide step.
int64_t reduction_depth(const Reduction& r, int64_t length);

struct Contract {
  std::string name;      // "ssu", "chunk_scan.production", "chunk_scan.fp32", ...
  std::string kernel;    // "ssu", "chunk_scan", or an external kernel's name
  Family family = Family::sequential;
  int64_t chunk_size = 0;            // chunked family only
  Format accumulation = Format::fp32;
  std::vector<Rounding> roundings;   // every intermediate rounding below fp32
  std::vector<TranscendentalBudget> transcendentals;
  std::vector<Reduction> reductions;
  bool flush_to_zero = false;        // subnormal intermediates may be flushed to zero
  bool softplus_shortcut = false;    // softplus(v) = v for v > 20 (error ≤ e^-20·... stated in the budget)
  // Largest GPU-vs-twin difference measured, in ULPs of the output and state formats
  // (0: bit-identical), with how it was measured.
  double gpu_twin_max_ulps = 0;
  std::string gpu_twin_how_measured;
};

std::string_view point_name(Point p);
std::string_view format_ref_name(FormatRef f);
// The concrete format of a FormatRef for a problem's formats.
Format resolve(FormatRef ref, Format input, Format state, Format output);

}  // namespace ssmv
