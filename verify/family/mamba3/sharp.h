// The sharp verdict of a Mamba-3 step-kernel dump (docs/sharp-verdicts.md, the calibrated test of
// verify/sharp/calibrated_test.h): per tensor, is the kernel's difference from the step kernel's
// rounding model larger than the model itself produces?
//
// The model is the host emulation of the kernel (verify/bound/mamba3/step_emulation.h) with FMA
// contraction as Triton compiles by default. The deterministic emulation D uses the C++ library's
// fp32 transcendentals; each Monte Carlo run moves every fp32 operation's result by a uniform error
// in ±2^-24|v| and every transcendental by its contract budget's full width with a random sign
// (the contract's worst case per call). Per element i of a tensor, w_i its bound rounded to bf16
// (verify/judge/sharp_weight.h), per (sequence, head) pair:
//   kernel energy  Σ_i ((computed_i − D_i)/w_i)²      run m's energy  Σ_i ((run_m,i − D_i)/w_i)²
// summed over the sequences per head; the angle's differences taken on the circle. One allowed
// configuration ("as declared") and no attribution of candidate defects yet.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "spec/mamba3/problem.h"
#include "verify/bound/mamba3/step_bound.h"
#include "verify/bound/mamba3/step_contract.h"
#include "verify/family/mamba3/dump_reading.h"  // Outputs
#include "verify/sharp/sharp_verdict.h"  // SharpOptions

namespace ssmv::family::mamba3 {

// The tensors of a Mamba-3 step dump, in report order.
enum Part : size_t { kY, kAngle, kState, kBPrev, kXPrev, kParts };

// A (sequence, head) pair's contribution: per part, the energies of item 0 (the kernel against
// D) and items 1..runs (run m against D), and the elements counted.
struct PairEnergies {
  std::array<std::vector<double>, kParts> energy;  // [1 + runs]
  std::array<int64_t, kParts> elements{};
};

// `pair`: one sequence, one head (certified_trace.h pair_problem); `kernel` its outputs in the
// pair's layouts (an empty part: not dumped); `bounds` its step bounds; `seed`: the pair's own (a
// function of the options' seed and the pair's place).
PairEnergies pair_energies(const ssmv::mamba3::Problem& pair, const bound::mamba3::StepContract& contract,
                           const Outputs& kernel, const bound::mamba3::StepBounds& bounds,
                           const sharp::SharpOptions& options, uint64_t seed);

}  // namespace ssmv::family::mamba3
