// The certified arbitrary-precision reference of the Mamba2 recurrence
// (../shared/DESIGN.md section 2): ground truth for every verdict ssmv gives.
//
// Every value is computed twice, at `precision_bits` and at `check_precision_bits`, and
// returned only when the two agree to `certified_bits` relative to the value's magnitude
// (the same computation on absolute values); otherwise CertificationError is thrown.
#pragma once

#include <boost/multiprecision/mpfr.hpp>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "spec/format.h"
#include "spec/problem.h"

namespace ssmv::ref {

using Real = boost::multiprecision::mpfr_float;

// Default working precision of the primary run (bits). The certifying run uses 64 more.
inline constexpr int kDefaultPrecisionBits = 128;
// Required agreement, in bits relative to the magnitudes involved.
inline constexpr int kCertifiedBits = 64;

class CertificationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Options {
  int precision_bits = kDefaultPrecisionBits;
  int check_precision_bits = 0;  // 0: precision_bits + 64
  int certified_bits = kCertifiedBits;
  // Packed token positions q (cu[s] < q <= cu[s+1]) at which to return the state of the
  // sequence s containing token q-1, after tokens [cu[s], q). Chunk boundaries, typically.
  std::vector<int64_t> state_positions;
  int threads = 1;  // worker threads over (sequence, head) pairs; 0: hardware concurrency
};

// Exact values with what error bounds need beside them.
struct ExactValues {
  std::vector<Real> value;               // full precision (the certifying run's)
  std::vector<double> nearest;           // value rounded to the nearest double
  std::vector<double> magnitude;         // upper bound of the value's scale (see each field)
  std::vector<double> certified_error;   // |primary − check|: ≤ 2^-certified_bits·magnitude
  size_t size() const { return nearest.size(); }
  Bits rounded(Format f, size_t i) const;  // value correctly rounded (RNE) to f
};

struct StateAt {
  int64_t position = 0;   // packed token position q
  int64_t sequence = 0;   // sequence s
  ExactValues state;      // [H, P, N]; magnitude = |state| recurrence (see final_state)
};

struct ExactResult {
  // y [T, H, P]; magnitude = |zσ(z)|·(Σ_n |C_n|·Sabs_n + |D·x|) with Sabs below.
  ExactValues y;
  std::vector<double> sum_abs_CS;       // [T, H, P] Σ_n |C_n·S_n| (exact S, before the gate)
  std::vector<double> sum_abs_C_Sabs;   // [T, H, P] Σ_n |C_n|·Sabs_n
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
};

// Throws ProblemError (bad problem) or CertificationError (precision too low).
ExactResult compute(const Problem& problem, const Options& options = {});

struct ExactDecodeResult {
  ExactResult result;       // y of every request (pad requests from a zero state)
  ExactValues state_pool;   // [slots, H, P, N]: written slots exact, the others as given
};
ExactDecodeResult compute_decode(const DecodeProblem& decode, const Options& options = {});

}  // namespace ssmv::ref
