// The per-element error bound of mamba_ssm's Mamba-3 SISO decode step kernel (Triton
// mamba3_siso_step_kernel), one launch per token with the four-part state stored after every
// token: |kernel − exact| for every y element and every element of the final four-part state,
// for any evaluation that honours a StepContract. Derivation: docs/mamba3-bounds.md (the
// bracketed numbers in step_bound.cpp refer to its sections).
#pragma once

#include <cstdint>
#include <vector>

#include "spec/mamba3/problem.h"
#include "verify/bound/mamba3/exact_trace.h"
#include "spec/mamba3/contract.h"

namespace ssmv::bound::mamba3 {

// The bounds of one kernel's outputs (the step's here; the prefill's too, prefill_bound.h).
struct StepBounds {
  std::vector<double> y;       // [T, H, P] |ŷ − y|, ŷ stored in the output format
  // [S, H, R] the distance on the circle of circumference 2π between the kernel's stored angle
  // and the exact θ: min_k |θ̂ − θ − 2πk|. It equals |θ̂ − (θ mod 2π)| except where θ mod 2π lies
  // within the bound of 0 or 2π, where the kernel may have reduced to the other end.
  std::vector<double> angle;
  std::vector<double> angle_abs;  // [S, H, R] >= |θ̂| of the kernel's stored angle (a hand-off's start)
  std::vector<double> S;       // [S, H, P, N] |Ŝ − S| of the stored final state (state format)
  std::vector<double> B_prev;  // [S, H, N]
  std::vector<double> x_prev;  // [S, H, P]
};

// Where the step kernel starts when its start is not read exactly from problem.initial: the state a
// previous kernel returned (the prefill's, in a hand-off), with that kernel's errors and the exact
// state's magnitudes, per sequence in problem.initial's layouts.
struct StartState {
  std::vector<double> angle_error, angle_abs;  // [S, H, R] StepBounds::angle and ::angle_abs of a previous bound
  std::vector<double> S_error, S_abs;              // [S, H, P, N] the error; >= |exact S|
  std::vector<double> B_prev_error, B_prev_abs;    // [S, H, N]
  std::vector<double> x_prev_error, x_prev_abs;    // [S, H, P]
};

// `exact`: ExactTrace (exact_trace.h) with chunks of one token, |S| after every token. `start`:
// null — each sequence starts from problem.initial read exactly (or zero); otherwise problem.initial
// must be empty and the kernel starts from a state with start's errors (the angle's reduction is
// then bounded in general for the first token, [4.3]).
// Throws std::invalid_argument when the trace does not fit the problem, or when the contract
// cannot bound it (an argument outside a budget's range: e.g. adt > 0 under production_h200,
// whose exp budget was measured on adt <= 0 only), and ssmv::ProblemError for an invalid problem.
StepBounds step_bounds(const ssmv::mamba3::Problem& pr, const ssmv::mamba3::StepContract& c, const ExactTrace& exact,
                       const StartState* start = nullptr);

}  // namespace ssmv::bound::mamba3
