// rapidcheck generators of ssmv problems (spec/problem.h) in two families:
//
//  * realistic Mamba2 data: A = −exp(U[log 1, log 16]); dt_bias = softplus⁻¹(dt0) with dt0
//    log-uniform in [1e-3, 0.1]; dt ~ N(0, 0.5²), x, B, C, z ~ N(0, 1) in the input format;
//    D ~ N(1, 0.1²); initial states ~ N(0, 0.1²); sequence lengths small or at a chunk
//    boundary ± 1;
//  * adversarial data: decay → 1 (A → 0), cancellation in C·S (paired state columns with
//    opposite C), tiny and huge magnitudes, subnormal inputs, zeros, δ just below (and, for
//    SSU, above) the softplus shortcut at 20, softplus off with a dt_limit clamp, pad slots
//    and repeated read slots (decode), sequences of length 1, lengths at chunk size ± 1.
//
// Shapes shrink toward one sequence, one head, P = N = 1 and few tokens; values shrink
// toward 0, ±1 and powers of two (float_gen.h). Problems stay small (T·H·P·N capped) so the
// MPFR reference and the twins take milliseconds.
//
// Every generated problem lies inside the ranges the contracts' error budgets cover, so a
// bound that throws std::invalid_argument is a generator bug: for the chunked family A ≤ 0,
// δ ≥ 0, softplus arguments in [−104, 20], |z| < 87 and, per head, the log-decay of any
// 256-token window aligned to a sequence start at least −96 (the exp budget covers
// [−104, 89]; any chunk of 64, 128 or 256 tokens lies inside one such window); with fp16
// inputs, the production contract's rounded intermediates (dt-scaled B, decayed C·Bᵀ,
// incoming states) stay below 2^14 (docs/bounds.md §4: their overflow is outside the
// contract).
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "fast/chunk_scan/contract.h"
#include "spec/problem.h"

namespace ssmv::prop {

// Whose budget ranges the data must respect.
enum class Target : uint8_t {
  ssu,         // sequential family: δ may pass the softplus shortcut at 20
  chunk_scan,  // chunked family (also the hand-off, whose prefix runs chunk_scan)
};

struct PrefillOptions {
  Target target = Target::chunk_scan;
  int64_t chunk_size = 64;        // long sequences are drawn at multiples of it ± 1
  int64_t max_sequences = 3;
  int64_t min_len = 1;            // every sequence at least this long
  int64_t max_updates = 12288;    // cap on T·H·P·N (state updates the reference certifies)
  std::optional<Format> state_format;  // fixed state format, or drawn
  bool initial_state = true;      // may draw initial states
};

struct GeneratedProblem {
  Problem problem;
  std::string family;             // "realistic" or "adversarial"
  std::vector<std::string> features;  // adversarial features drawn ("tiny", "cancellation", ...)
  bool chunk_edge_length = false; // some sequence has length k·L − 1, k·L or k·L + 1
};

struct DecodeOptions {
  int64_t max_requests = 8;
  int64_t max_tokens_per_request = 6;
  int64_t max_updates = 8192;
  std::optional<Format> state_format;
};

struct GeneratedDecode {
  DecodeProblem decode;
  std::string family;
  std::vector<std::string> features;  // adversarial features, plus "pad", "repeated_read"
};

rc::Gen<GeneratedProblem> prefill_problem(const PrefillOptions& options);
rc::Gen<GeneratedDecode> decode_problem(const DecodeOptions& options);

// Inside a property: a chunk size drawn from {64, 128, 256} (shrinking toward 64), a contract
// (drawn, production first, unless given) and a prefill problem drawn around that chunk size
// (options.chunk_size is overwritten). The case is labelled (label_case).
struct ChunkCase {
  GeneratedProblem g;
  chunk_scan::ContractKind kind = chunk_scan::ContractKind::production;
  int64_t L = 64;
};
ChunkCase draw_chunk_case(PrefillOptions options, std::optional<chunk_scan::ContractKind> kind = std::nullopt);

// The length of the shortest sequence.
int64_t shortest_sequence(const Shape& s);

// Labels the current rapidcheck case (RC_TAG by family and input format; RC_CLASSIFY for
// chunk-edge lengths and each adversarial feature), so the distribution shows in the log.
void label_case(const GeneratedProblem& g);
void label_case(const GeneratedDecode& g);

// One line: shape, formats, options (rapidcheck prints it for a counterexample).
std::string describe(const Problem& p);
void showValue(const GeneratedProblem& g, std::ostream& os);
void showValue(const GeneratedDecode& g, std::ostream& os);

}  // namespace ssmv::prop

namespace ssmv::chunk_scan {
// rapidcheck prints a drawn contract kind by its name ("production", "fp32").
void showValue(ContractKind kind, std::ostream& os);
}  // namespace ssmv::chunk_scan
