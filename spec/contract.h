// A kernel's precision contract, as data: where it may round and to what, the error
// budgets of its transcendentals, how it reduces, and any documented difference between
// the GPU and its host twin. fast/ declares the bundled kernels' contracts with these
// types (fast/ must not depend on verify/); verify/ reads them (and JSON files of the same
// shape) to build per-element error bounds. Fields and JSON names: docs/contracts.md;
// the bounds: docs/bounds.md.
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
  final_incoming_state,     // chunked: the state entering a sequence's last chunk (piece), before
                            // exp(cs_last)·h + chunk state forms the final state (mamba_ssm's
                            // chunk_state_varlen reads the inter-chunk states in C's dtype)
};

// How a rounding point rounds: to nearest even (error ≤ ½ ULP of the format), or
// stochastically (the stored value is one of the two neighbours of the exact value, drawn at
// random — FlashInfer's Philox-driven fp16 state stores: error < 1 ULP of the format for any
// draw, so a bound that allows a whole ULP covers every draw and verdicts stay deterministic;
// whether the draws are unbiased is a statistical question, verify/judge/stochastic_bias.h).
enum class RoundingMode : uint8_t { nearest, stochastic };

struct Rounding {
  Point point;
  FormatRef format;  // rounded in this format
  RoundingMode mode = RoundingMode::nearest;
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
  mma_m16n8k16,     // tensor-core steps of 16 products, truncating sum (docs/design.md §4)
  any_order,        // products rounded separately, the terms summed in any association
                    // (Triton's tl.sum / tl.cumsum: the order is the compiler's)
};

// Which sum of the algorithm a Reduction describes (JSON names in sum_name). The sequential
// family has only y; the chunked family all five (docs/bounds.md §2.5, §3.3–3.10).
enum class Sum : uint8_t {
  cumsum,         // chunked: cs_m = Σ_{k≤m} δ_k·A within a chunk
  chunk_state,    // chunked: Σ_k x_k[p]·B̃_k[n] over a chunk
  state_passing,  // chunked: h = exp(cs_last)·h + chunk state, once per chunk
  cb,             // chunked: C·Bᵀ, Σ_n C_m[n]·B_k[n]
  y,              // both: the output sum (Σ_n C·S + D·x; chunked: inter + intra terms)
};

struct Reduction {
  Sum sum = Sum::y;  // which sum: how the bounds select it
  std::string what;  // human description only: "y = Σ_n C·S", "C·Bᵀ", "chunk state", ...
  ReductionOrder order = ReductionOrder::sequential_fma;
  // sequential_fma only: the terms are split into `partials` interleaved partial sums,
  // each accumulated sequentially, then combined by a pairwise tree (1: purely sequential).
  int64_t partials = 1;
  std::string detail;  // e.g. "each lane: N/32 sequential fmaf; then a 5-level shuffle tree"
};

// The most roundings any one term of a `length`-term sum passes through under `r`
// (the k of the γ_k that bounds the sum): sequential ceil(length/partials) +
// ceil(log2 partials); tree ceil(log2 length) (the additions; a product rounded before the
// tree is one more); mma_m16n8k16 one per 16-wide step; any_order length (at most
// length − 1 additions in any association plus the rounding of the term's own product).
int64_t reduction_depth(const Reduction& r, int64_t length);

// The layout of the chunks of a chunked kernel on the packed token axis.
enum class ChunkLayout : uint8_t {
  sequence,  // chunks restart at every sequence (chunk j of sequence s: cu[s] + j·L)
  global,    // chunk boundaries at multiples of chunk_size on the packed axis (mamba_ssm
             // varlen with seq_idx): a chunk may hold the tail of one sequence and the head
             // of the next; the cumulative sum runs from the chunk's first token
};

// One sequence's share of a chunk: packed tokens [start, start + len) of the chunk that
// begins at chunk_start (= start unless the layout is global and the sequence starts
// mid-chunk: then chunk_start = start rounded down to a multiple of the chunk size).
struct ChunkPiece {
  int64_t start, len, chunk_start;
};
// The pieces of the packed tokens [begin, end) (one sequence) in chunks of `chunk_size` laid
// out by `layout`, in order. What the chunked bound and the sharp verdict's emulation walk.
std::vector<ChunkPiece> chunk_pieces(int64_t begin, int64_t end, int64_t chunk_size, ChunkLayout layout);

struct Contract {
  std::string name;      // "ssu", "chunk_scan.production", "chunk_scan.fp32", ...
  std::string kernel;    // "ssu", "chunk_scan", or an external kernel's name
  Family family = Family::sequential;
  int64_t chunk_size = 0;            // chunked family only
  ChunkLayout chunk_layout = ChunkLayout::sequence;  // chunked; sequence for the sequential family
  Format accumulation = Format::fp32;
  // The input formats (x, dt, B, C, z) the contract describes; empty: every format. A kernel
  // whose arithmetic changes with the input format in a way no rounding point names (Triton's
  // tl.dot rounds fp32 operands to tf32) lists the formats it was written for.
  std::vector<Format> input_formats;
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

std::string_view family_name(Family f);                   // "sequential", "chunked"
std::string_view reduction_order_name(ReductionOrder o);  // "sequential_fma", "tree", "mma_m16n8k16", "any_order"
std::string_view point_name(Point p);
std::string_view rounding_mode_name(RoundingMode m);  // "nearest", "stochastic"
bool parse_rounding_mode(std::string_view text, RoundingMode& out);
// True when a rounding point may be declared stochastic: the stored values (stored_state,
// output) — the points where a kernel writes to memory — and only to a format coarser than
// fp32 (a fixed fp32 format, or input/state/output, which resolve per problem).
bool stochastic_rounding_allowed(Point p, FormatRef f);
std::string_view format_ref_name(FormatRef f);
std::string_view sum_name(Sum s);                  // "cumsum", "chunk_state", "state_passing", "CB", "y"
std::string_view chunk_layout_name(ChunkLayout l); // "sequence", "global"
// The Sum named `text` (sum_name's names); false when there is none.
bool parse_sum(std::string_view text, Sum& out);
bool parse_chunk_layout(std::string_view text, ChunkLayout& out);

// The sums a family evaluates: sequential {y}; chunked {cumsum, chunk_state,
// state_passing, cb, y}, in that order.
const std::vector<Sum>& family_sums(Family f);
// The contract's reduction of `s`, or nullptr when it declares none.
const Reduction* find_reduction(const Contract& c, Sum s);
// What the bounds assume for a sum the contract does not declare: one sequential chain of
// fused multiply-adds (partials 1: the deepest order), `what` and `detail` saying so.
Reduction undeclared_reduction(Sum s);
// find_reduction, else undeclared_reduction.
Reduction reduction_of(const Contract& c, Sum s);
// True when the contract describes problems with inputs in `input` (input_formats empty or
// holding it).
bool describes_input_format(const Contract& c, Format input);
// The concrete format of a FormatRef for a problem's formats.
Format resolve(FormatRef ref, Format input, Format state, Format output);

}  // namespace ssmv
