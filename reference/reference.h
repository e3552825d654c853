// The certified arbitrary-precision reference of the Mamba2 recurrence (docs/design.md §2):
// ground truth for every verdict ssmv gives.
//
// Two tiers (docs/reference-tiers.md). With Options::tier = automatic (the default) each
// (sequence, head) pair first runs a fast pass in double-double (reference/tiered.h) that
// carries a rigorous error bound for every value; a value is settled when its enclosure
// decides its nearest double and its correct rounding in fp32, bf16 and fp16, and the
// bound is within 2^-certified_bits of its magnitude. The first value it cannot settle
// sends the pair to the MPFR tier below, which recomputes it from its first token and
// hands over only what the fast pass has not. Both tiers give the same nearest, rounded
// and magnitude for every element (reference/tests/reference_tier_equivalence_test.cpp);
// value and certified_error differ within certified_error.
//
// MPFR tier: every value is computed once, at `precision_bits`, beside an a-priori running
// error bound of that run (every MPFR operation rounds correctly: relative error 2^-p;
// reference/mpfr_bound.h, docs/reference-tiers.md [6]). A value is returned only when its
// bound is at most 2^-certified_bits of its magnitude (the same computation on absolute
// values), else CertificationError is thrown; and its enclosure (value ± bound) decides its
// nearest double and its correct rounding in fp32, bf16 and fp16, else the pair is run
// again at `check_precision_bits`, where an undecided value (an exact tie, e.g. an exact
// cancellation to 0) is taken as computed. δ, the decay and the gates' magnitudes come
// from the check precision in both tiers.
//
// One core (reference/head_recurrence.h) computes one (sequence, head) pair over its
// tokens; compute(), compute_streaming() and compute_decode() all run it. Memory is
// O(P·N) per worker thread plus what the caller keeps: compute() keeps every output,
// compute_streaming() hands each token's outputs to a Sink and keeps nothing.
#pragma once

#include <mpfr.h>

#include <boost/multiprecision/mpfr.hpp>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "reference/handed_value.h"
#include "spec/format.h"
#include "spec/problem.h"
#include "spec/token_head_column.h"

namespace ssmv::ref {

using Real = boost::multiprecision::mpfr_float;

// Default working precision of the MPFR tier (bits); a pair whose roundings its bound does
// not decide runs again with 64 more.
// 127 rather than 128: MPFR 4.2 has fast paths for operands of one precision strictly
// below a limb boundary (mpfr_mul_2 and add1sp2 for p < 128, add1sp3 for p < 192). The
// update S = a·S + u·x (mul, mul, add) costs 610 instructions at 127 bits against 707 at
// 128, and 948 at 191 against 1069 at 192 (callgrind, MPFR 4.2.0); one bit of 63 spare.
inline constexpr int kDefaultPrecisionBits = 127;
// Extra bits of the check precision over the working precision when check_precision_bits = 0.
inline constexpr int kDefaultCheckExtraBits = 64;
// Required certificate: the error bound is at most 2^-kCertifiedBits of the value's magnitude.
inline constexpr int kCertifiedBits = 64;

// The worker count Options::threads = 0 means: `n` threads (n >= 1), or every core (n = 0,
// the initial setting). For programs that judge through layers that build their own
// Options, e.g. `ssmv check --threads N`.
void set_default_threads(int n);
int default_threads();  // the count 0 resolves to now (>= 1)

class CertificationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The number type the core runs on. Both give identical bits (reference_certification_test:
// RawAndBoostArithmeticGiveIdenticalBits);
// every operation is one correctly rounded MPFR operation at the run's precision.
enum class Arithmetic : uint8_t {
  raw_mpfr,    // mpfr_t directly (default: fastest)
  boost_mpfr,  // boost::multiprecision::mpfr_float (Real); one thread (Boost 1.74's default
               // precision is process-wide: reference/driver.cpp run_with)
};

// Which tiers run (see the top of this file).
enum class Tier : uint8_t {
  // double-double fast pass, MPFR for the pairs it cannot settle (default); with a
  // precision_bits other than kDefaultPrecisionBits, the MPFR tier alone
  automatic,
  mpfr_only,  // every pair in MPFR
};

struct ExactScalars;  // below

struct Options {
  int precision_bits = kDefaultPrecisionBits;  // >= 24, so every input is exact
  // The check precision (δ, decay, gates; the retry of a pair with an undecided value):
  // 0: precision_bits + 64; otherwise > precision_bits.
  int check_precision_bits = 0;
  int certified_bits = kCertifiedBits;
  // Packed token positions q (cu[s] < q <= cu[s+1]) at which to return the state of the
  // sequence s containing token q-1, after tokens [cu[s], q). Chunk boundaries, typically.
  std::vector<int64_t> state_positions;
  // Worker threads over (sequence, head) pairs; 0: the process default (set_default_threads,
  // else every core). Results are identical for any count.
  int threads = 0;
  Arithmetic arithmetic = Arithmetic::raw_mpfr;
  Tier tier = Tier::automatic;
  // compute_scalars' result for this problem at these options' check precision, or null: the
  // fast tier then reads each token's δ and decay from it (the same bits it would compute).
  // Refused (std::invalid_argument) when its precision or size does not match.
  const ExactScalars* scalars = nullptr;
  // The caller has validate()d the problem (compute_streaming and compute_scalars then skip it):
  // a check validates a dump once, not once per step (each pass reads every input element;
  // 546 MB of states in a 256-request decode dump).
  bool validated = false;

  int resolved_check_precision_bits() const {
    return check_precision_bits ? check_precision_bits : precision_bits + kDefaultCheckExtraBits;
  }
};

// Magnitudes are upper bounds of the exact absolute recurrence, computed in double and
// rigorous in every range, subnormals included (reference/magnitude.h gives the
// argument); 0 exactly when every term is 0, and then the value is exactly 0 with bound 0.

// Exact values with what error bounds need beside them.
struct ExactValues {
  // Variables of the check precision holding the MPFR tier's value (of its working run, or
  // of the check precision's retry) or the fast tier's double-double value; either lies
  // within certified_error of the exact value.
  std::vector<Real> value;
  std::vector<double> nearest;           // value rounded to the nearest double
  std::vector<double> magnitude;         // upper bound of the value's scale (see each field)
  // An upper bound of |value − exact| (MPFR tier: the a-priori bound of its run, 0 when
  // every operation was exact; fast tier: the running error bound of
  // docs/reference-tiers.md), ≤ 2^-certified_bits·magnitude.
  std::vector<double> certified_error;
  size_t size() const { return nearest.size(); }
  Bits rounded(Format f, size_t i) const;  // value correctly rounded (RNE) to f
  void resize(size_t n, int precision_bits);  // n zeros of the given precision
};

struct StateAt {
  int64_t position = 0;   // packed token position q
  int64_t sequence = 0;   // sequence s
  ExactValues state;      // [H, P, N]; magnitude = |state| recurrence (see final_state)
};

// What each tier settled in one call. A pair counts as fast when the fast pass settled
// all of it; an element (y, final state or requested state) counts under the tier that
// handed it over.
struct TierCounts {
  int64_t fast_pairs = 0, mpfr_pairs = 0;
  int64_t fast_elements = 0, mpfr_elements = 0;
};

struct ExactResult {
  // y [T, H, P]; magnitude = |zσ(z)|·(Σ_n |C_n|·Sabs_n + |D·x|) with Sabs below.
  ExactValues y;
  // [T, H, P] Σ_n |C_n·S_n| (exact S, before the gate): each product of the run that
  // handed the value over rounded to the nearest double and summed in double, an estimate within (N+1)·2^-53.
  std::vector<double> sum_abs_CS;
  std::vector<double> sum_abs_C_Sabs;   // [T, H, P] Σ_n |C_n|·Ŝ_n, Ŝ the upper bound of Sabs
  std::vector<double> abs_Dx;           // [T, H, P] |D·x|
  std::vector<double> y_ungated;        // [T, H, P] Σ_n C_n·S_n + D·x (nearest double)
  std::vector<double> delta;            // [T, H] exact δ after softplus and clamp (nearest)
  std::vector<double> decay;            // [T, H] exact exp(δ·A) (nearest)
  // [S, H, P, N]; magnitude = Sabs: the recurrence on absolute values,
  // Sabs_t = |a_t|·Sabs_{t-1} + |δ_t·B_t·x_t|, Sabs_0 = |h0|.
  ExactValues final_state;
  std::vector<StateAt> states_at;       // one per Options::state_positions entry, in order
  int precision_bits = 0;
  int check_precision_bits = 0;
  TierCounts tiers;
};

// Throws ProblemError (bad problem or options) or CertificationError (precision too low).
ExactResult compute(const Problem& problem, const Options& options = {});

// As compute(), starting from a full-precision initial state [S, H, P, N] (typically a
// previous result's final_state, with its magnitudes) instead of problem.initial_state,
// which must be empty. A prefill of [0,k) followed by this from its final state returns
// bit for bit the value, nearest and magnitude of a prefill of [0,T) (the certifying run
// continues from its own state); only certified_error may differ.
ExactResult compute_from_state(const Problem& problem, const ExactValues& initial_state,
                               const Options& options = {});

// Streaming: what compute_streaming() hands over, certified, as soon as it is computed.
struct TokenOutputs {
  int64_t sequence = 0, token = 0, head = 0;  // token: packed position t
  double delta = 0, decay = 0;                // nearest doubles of δ and exp(δ·A)
  // [P] each, valid during the call only; y: the values (handed_value.h).
  std::span<const HandedValue> y;
  std::span<const double> y_nearest, y_magnitude, y_certified_error;
  std::span<const double> sum_abs_CS, sum_abs_C_Sabs, abs_Dx, y_ungated;
};
struct StateOutputs {
  int64_t sequence = 0, head = 0;
  int64_t position = 0;  // packed position q: the state after tokens [cu[s], q)
  bool final = false;    // true: the sequence's final state (q = cu[s+1]); false: a requested position
  // [P, N] each, valid during the call only; value: the values (handed_value.h).
  std::span<const HandedValue> value;
  std::span<const double> nearest, magnitude, certified_error;
};
// Receives outputs from worker threads: calls for different (sequence, head) pairs may
// run concurrently; for one pair they come in token order, each requested position's
// state right after its last token, the final state last.
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void token(const TokenOutputs& out) = 0;
  virtual void state(const StateOutputs& out) = 0;
  // Called from a worker when its pair fails (or a worker cannot start), before it stops: the
  // run ends with the error of its smallest failing pair once the pairs still running finish.
  // A Sink whose token() waits for work on another thread that in turn waits for the pairs
  // (verify/bound/row_handover.h) lets that work go on without them. Must not throw.
  virtual void pair_failed() {}
};
// Memory: O(threads·P·N) — one (sequence, head) pair's state per worker, independent of T.
void compute_streaming(const Problem& problem, Sink& sink, const Options& options = {});

// δ and the decay exp(δ·A) of every (token, head) [T, H] (dt_index), computed once at the
// check precision, without the recurrence: their nearest doubles — bit for bit
// ExactResult::delta and ::decay of compute() with the same options, what the bounds read
// before the outputs are streamed (verify/judge/external_check.cpp) — and the fast tier's view
// of the same values — double-double lo parts (hi = the nearest double: reference/gate_memo.h
// dd_of) and |·| rounded away from zero — so that a streamed check hands them to
// compute_streaming (Options::scalars) instead of the fast tier computing each again.
// A pair's values are a function of its head and its dt alone, so they are kept once per (head,
// distinct dt), entry[k] naming pair k's (spec/token_head_column.h says what that saves).
// A value that is not a number (or a decay of 0) has NaN in its _up field.
struct ExactScalars {
  std::vector<uint32_t> entry;  // [T, H]: pair k's values are those of entry[k] below
  // [entries] one value per (head, distinct dt)
  std::vector<double> delta, decay;
  std::vector<double> delta_lo, decay_lo, delta_up, decay_up;
  int check_bits = 0;  // the precision they were computed at

  size_t pairs() const { return entry.size(); }
  TokenHeadColumn delta_column() const { return {&entry, &delta}; }
  TokenHeadColumn decay_column() const { return {&entry, &decay}; }
  // Throws std::invalid_argument, naming the field, unless these values are for a run at
  // check_bits over `pairs` (token, head) pairs, every table has one value per entry and
  // every pair names an entry (a table built elsewhere, or edited, is refused rather than
  // read out of bounds). compute_streaming checks Options::scalars so once, before its
  // workers start.
  void check_fits(int check_bits, size_t pairs) const;
};
ExactScalars compute_scalars(const Problem& problem, const Options& options = {});

struct ExactDecodeResult {
  ExactResult result;       // y of every request (pad requests from a zero state)
  ExactValues state_pool;   // [slots, H, P, N]: written slots exact, the others as given
};
// Request s reads pool[slot_in[s]] (a zero state for the pad id) and writes its final
// state to pool[out_slot(s)] unless it pads. Slots nobody writes keep their given values
// with magnitude |value| and certified_error 0.
ExactDecodeResult compute_decode(const DecodeProblem& decode, const Options& options = {});

}  // namespace ssmv::ref
