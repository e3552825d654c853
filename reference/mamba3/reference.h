// The certified arbitrary-precision reference of the Mamba-3 SISO recurrence
// (docs/mamba3-semantics.md; the problem: spec/mamba3/problem.h): y of every token and the
// four-part state each sequence ends in, every value certified by precision-doubling
// agreement (certified_values.h) and returned as a double-double with its correct rounding
// to fp32, bf16 and fp16.
//
// Each (sequence, head) pair runs at the working and at the check precision side by side,
// token by token (pair_run.h); memory is the returned tensors and the carried state. One
// thread. decode() continues from a previous call's carried state with the same MPFR
// variables, so compute() over T tokens and compute() over T − k tokens followed by k
// decode() steps give the same bits in every returned value.
#pragma once

#include <mpfr.h>

#include "reference/mamba3/certified_values.h"
#include "reference/mamba3/pair_state.h"
#include "reference/reference.h"  // CertificationError, kDefaultPrecisionBits, kCertifiedBits
#include "spec/mamba3/problem.h"

namespace ssmv::ref::mamba3 {

using ssmv::mamba3::Problem;

struct Options {
  int precision_bits = kDefaultPrecisionBits;     // the working run; >= 24, so every input is exact
  int check_extra_bits = kDefaultCheckExtraBits;  // the check run has precision_bits + this, >= 1
  int certified_bits = kCertifiedBits;            // agreement required: 2^-certified_bits of the magnitude
  // Certify S, B_prev and x_prev of the returned state (P·N + N + P agreement checks and format
  // roundings per pair). false: they are left empty — for a caller stepping token by token that
  // needs the state only at some tokens. y and the angle state are always certified.
  bool certify_state = true;
};

struct Result {
  CertifiedValues y;            // [T, H, P]
  CertifiedValues angle_state;  // [S, H, R]     θ reduced to [0, 2π)
  CertifiedValues state;        // [S, H, P, N]  S
  CertifiedValues B_prev;       // [S, H, N]     the last token's b (bias added, rotated)
  CertifiedValues x_prev;       // [S, H, P]     the last token's x (exact)
  CarriedState carried;         // the four parts unrounded, both runs: what decode() starts from
  int precision_bits = 0, check_precision_bits = 0;
};

// Throws ssmv::ProblemError (bad problem or options) or CertificationError (the runs disagree).
Result compute(const Problem& problem, const Options& options = {});

// Continues every sequence s of `problem` from sequence s of `carried` (a previous result's
// carried state, or any CarriedState of the same shape and precisions) over the problem's
// tokens: one token per sequence is a decode step. problem.initial must be empty.
Result decode(const Problem& problem, const CarriedState& carried, const Options& options = {});

// decode() that advances `carried` in place instead of copying it (the Result's `carried` is left
// empty): the same bits in every returned value. A caller stepping one token at a time saves the
// copy of every pair's state at both precisions per token.
Result advance(const Problem& problem, CarriedState& carried, const Options& options = {});

}  // namespace ssmv::ref::mamba3
