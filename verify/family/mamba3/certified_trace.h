// The certified Mamba-3 reference as the kernels' checks need it: run one token at a
// time — compute() on a sequence's first token, then decode() — so that the state after every
// token is known (the bounds' ExactTrace, verify/bound/mamba3/exact_trace.h), with y of
// every token and the final four-part state as certified values for the judge. The pairs
// (sequence, head) are independent and run on worker threads.
#pragma once

#include <cstdint>

#include "reference/mamba3/reference.h"
#include "spec/mamba3/problem.h"
#include "verify/bound/mamba3/exact_trace.h"

namespace ssmv::family::mamba3 {

struct CertifiedRun {
  bound::mamba3::ExactTrace trace;
  ref::mamba3::CertifiedValues y;                         // [T, H, P]
  ref::mamba3::CertifiedValues angle, S, B_prev, x_prev;  // the final four-part state, [S, ...]
  int check_precision_bits = 0;                           // the precision hi + lo stand for
};

// |v| at most, from a certified value: |hi| + |lo| + the certificate's 2^-certified_bits of the
// magnitude (reference/mamba3/certified_values.h), rounded up.
double abs_upper(const ref::mamba3::CertifiedValues& v, size_t i);
// The certificate's allowance for element i: 2^-certified_bits of its magnitude, rounded up.
double certified_error(const ref::mamba3::CertifiedValues& v, size_t i);

// The certified value k of `exact` as a kernel's value `computed` in format f is judged against
// it: hi + lo, the certificate's error, and hi rounded to f. `circular` (an angle): the
// representative θ + 2πm of the exact θ nearest `computed` (its bound is a distance on the circle,
// step_bound.h), with the error of that sum charged.
struct JudgedExact {
  double hi = 0, lo = 0, error = 0;
  Bits rounded = 0;
};
JudgedExact exact_near(Format f, float computed, const ref::mamba3::CertifiedValues& exact, size_t k, bool circular);

// Tokens [first, first + count) of head h of `pr` (all in sequence s) as a problem of one
// sequence and one head (G = 1: the head's group of B and C), starting from sequence s's initial
// state of head h when `with_initial` (and `pr` has one; else from zero).
ssmv::mamba3::Problem pair_tokens(const ssmv::mamba3::Problem& pr, int64_t s, int64_t h, int64_t first, int64_t count,
                                  bool with_initial);

// Sequence s of head h of `pr` alone (pair_tokens over the whole sequence, from its initial
// state). The bound and the reference of a pair depend on nothing else, so a check may run pair
// by pair.
ssmv::mamba3::Problem pair_problem(const ssmv::mamba3::Problem& pr, int64_t s, int64_t h);

// Pair (s, h)'s share of a four-part state laid out as pr's (an empty part stays empty).
ssmv::mamba3::FourPartState pair_state(const ssmv::mamba3::Problem& pr, const ssmv::mamba3::FourPartState& state,
                                       int64_t s, int64_t h);

// Each (sequence, head) pair on its own, token by token, `threads` workers (0: every core); the
// same values for any count. The trace keeps |S| after the tokens of `grid`
// (bound::mamba3::TraceGrid): the ends of chunks of `chunk` tokens of each sequence — 1 for the
// step kernel, the prefill's chunk size for it — and for a hand-off every token after the
// prefill's (Handoff::grid). Throws ssmv::ProblemError or ref::CertificationError as the
// reference does, and std::invalid_argument for chunk < 1 or chunked < 0.
CertifiedRun certified_run(const ssmv::mamba3::Problem& pr, int threads, const bound::mamba3::TraceGrid& grid);
CertifiedRun certified_run(const ssmv::mamba3::Problem& pr, int threads = 0, int64_t chunk = 1);

}  // namespace ssmv::family::mamba3
