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
// Production-shaped cases: one case in `production_share` (options below) draws the shapes
// kernels meet in production, which the small shapes never reach (N ≤ 64, P ≤ 8, H ≤ 4), in
// one of three profiles — wide (N of 128, 192 or 256: a second and later 64-wide tile of N,
// and with 192 a second chunk of SSU's lane layout, J = 2; P of 64 or 128: later warps of a
// head and chunk_scan's second 64-row tile of P), heads (N of 128, 192 or 256; H = 8 in 2 or
// 4 groups) or long (one or two sequences of as many tokens as the work cap allows, N of 16,
// 64 or 128: hundreds of tokens, past the first chunks) — inside a work cap of k*ProductionWork × max_updates
// (prefill: the twin's chunk work counted too, production_work() below). draw_chunk_case
// draws chunk 256 for them. Each production dimension is drawn at its production value and
// shrinks toward 1 (towards(), the target first, then halfway), lengths shrink as usual, and
// the choice of a production case shrinks to a small one: a failing production case still
// shrinks small.
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
  int64_t production_share = 16;  // one case in this many is production-shaped (1: all, 0: none)
};

struct GeneratedProblem {
  Problem problem;
  std::string family;             // "realistic" or "adversarial"
  std::vector<std::string> features;  // adversarial features drawn ("tiny", "cancellation", ...)
  bool chunk_edge_length = false; // some sequence has length k·L − 1, k·L or k·L + 1
  std::string profile;            // production-shaped: "wide", "heads" or "long"; "" otherwise
  int64_t chunk_size = 0;         // the options' chunk size it was drawn around
};

struct DecodeOptions {
  int64_t max_requests = 8;
  int64_t max_tokens_per_request = 6;
  int64_t max_updates = 8192;
  std::optional<Format> state_format;
  // One case in this many is production-shaped (1: all, 0: none): decode suites run 8000 to
  // 10000 cases of about 1 ms, and a production case costs 10 to 100 ms, so the share is
  // smaller than prefill's for a like number of production cases per property (60 to 80).
  int64_t production_share = 128;
};

struct GeneratedDecode {
  DecodeProblem decode;
  std::string family;
  std::vector<std::string> features;  // adversarial features, plus "pad", "repeated_read"
  std::string profile;                // as GeneratedProblem::profile
};

// Production cases' work caps, in units of the options' max_updates: a prefill case up to
// about 40 ms of twin and reference on the development box, a decode case up to 30 to 100 ms
// (SSU's check costs 1 to 3 µs per state update at these widths).
inline constexpr int64_t kPrefillProductionWork = 12;
inline constexpr int64_t kDecodeProductionWork = 4;
// The work of a prefill problem in state-update equivalents: T·H·P·N for the reference plus
// the twin's chunk products, Σ_sequences len·H·min(L, len)·(N + P + 26)/9 (fitted on the
// development box, 2026-12-02: 22 ns per chunk-product term against 0.2 µs per reference
// state update).
int64_t production_work(const Shape& s, int64_t chunk_size);

rc::Gen<GeneratedProblem> prefill_problem(const PrefillOptions& options);
rc::Gen<GeneratedDecode> decode_problem(const DecodeOptions& options);

// Inside a property: a chunk size drawn from {64, 128, 256} (shrinking toward 64), a contract
// (drawn, production first, unless given) and a prefill problem drawn around that chunk size
// (options.chunk_size is overwritten). The case is labelled (label_case).
// Production cases (options.production_share) draw chunk 256, shrinking toward 128 and 64.
struct ChunkCase {
  GeneratedProblem g;
  chunk_scan::ContractKind kind = chunk_scan::ContractKind::production;
  int64_t L = 64;
};
ChunkCase draw_chunk_case(PrefillOptions options, std::optional<chunk_scan::ContractKind> kind = std::nullopt);

// The length of the shortest sequence.
int64_t shortest_sequence(const Shape& s);

// Labels the current rapidcheck case (RC_TAG by family and input format; feature counts for
// chunk-edge lengths, each adversarial feature, the production profile and the production
// shape coverage: N>=128, P>=64, P>64, H>=8, T>=256, chunk=256), so the distribution shows in the log.
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
