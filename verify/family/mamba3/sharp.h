// The sharp verdict of a Mamba-3 dump (docs/sharp-verdicts.md, the calibrated test of
// verify/sharp/calibrated_test.h): per tensor, is the kernel's difference from the kernel's
// rounding model larger than the model itself produces?
//
// The model is the host emulation of the kernel (verify/bound/mamba3/step_emulation.h for the step
// kernel, prefill_emulation.h for the chunked prefill) with FMA contraction as Triton compiles by
// default. The deterministic emulation D uses the C++ library's
// fp32 transcendentals; each Monte Carlo run moves every fp32 operation's result by a uniform error
// in ±2^-24|v| and every transcendental by its contract budget's full width with a random sign
// (the contract's worst case per call). Per element i of a tensor, w_i its bound rounded to bf16
// (verify/judge/sharp_weight.h), per (sequence, head) pair:
//   kernel energy  Σ_i ((computed_i − D_i)/w_i)²      run m's energy  Σ_i ((run_m,i − D_i)/w_i)²
// summed over the sequences per head; the angle's differences taken on the circle. For a tensor
// that is SUSPICIOUS or has a VIOLATION, the candidate defects (each the declared emulation with
// one slip of the planted catalogue: a wrong term, a coarse function, an extra bf16 store) are
// ranked by their residual energy (docs/sharp-verdicts.md §4, §7).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "spec/mamba3/contract.h"
#include "spec/mamba3/problem.h"
#include "verify/bound/mamba3/step_bound.h"
#include "verify/bound/mamba3/step_emulation.h"
#include "verify/family/mamba3/dump_reading.h"  // Outputs
#include "verify/sharp/sharp_verdict.h"  // SharpOptions

namespace ssmv::family::mamba3 {

// The tensors of a Mamba-3 step dump, in report order.
enum Part : size_t { kY, kAngle, kState, kBPrev, kXPrev, kParts };

// A (sequence, head) pair's contribution: per part, the energies of the kernel against each allowed
// configuration's deterministic emulation (items 0 .. configurations − 1) and of Monte Carlo runs
// 1..runs against the declared one (the items after), and the elements counted.
struct PairEnergies {
  std::array<std::vector<double>, kParts> energy;  // [configurations + runs]
  std::array<int64_t, kParts> elements{};
};

// A pair's per-element weights (its bounds rounded to bf16, verify/judge/sharp_weight.h), per part:
// what the attribution's second pass reads instead of running the certified reference again.
using PairWeights = std::array<std::vector<uint16_t>, kParts>;
PairWeights pair_weights(const bound::mamba3::StepBounds& bounds);

// A candidate defect of a kernel: the declared emulation with one slip (docs/sharp-verdicts.md §4).
struct Defect {
  std::string name;         // "beta term on b instead of b_prev", ...
  std::string description;  // what a kernel would do to produce it
};

// The rounding model of one kernel: its host emulation with FMA contraction, in each allowed
// configuration (0: as declared; others: fewer or finer roundings than declared, which a kernel may
// do — the kernel's residual is its distance to the closest, docs/sharp-verdicts.md §2), run plain
// (noise seed 0, the library's functions) or, as declared, as one Monte Carlo run; and the budgets
// each run moves the transcendentals by. `exp2_arg_scale` turns exp2's argument into the budget's
// (1/log2 e for the step's exp, budgeted in adt; 1 for the prefill's exp2, in its own argument).
struct SharpModel {
  std::vector<std::string> configurations = {"as declared"};
  std::function<bound::mamba3::EmulatedSteps(const ssmv::mamba3::Problem&, size_t configuration, uint64_t noise_seed,
                                             const bound::mamba3::Transcendentals&)>
      emulate;
  TranscendentalBudget tanh, cos, sin, exp2, sigmoid;
  double exp2_arg_scale = 1;
  // The candidate defects, and the declared emulation with defect d (plain, the library's functions).
  std::vector<Defect> defects;
  std::function<bound::mamba3::EmulatedSteps(const ssmv::mamba3::Problem&, size_t defect)> emulate_defect;
};
SharpModel step_model(const ssmv::mamba3::StepContract& c);
// The prefill's allowed configurations: as declared; θ kept in fp32; every store and dot operand
// in fp32 and the diagonal in fp32 (a kernel that rounds less than declared is not suspicious).
SharpModel prefill_model(const ssmv::mamba3::PrefillContract& c, int64_t chunk_size);

// `pair`: one sequence, one head (certified_trace.h pair_problem); `kernel` its outputs in the
// pair's layouts (an empty part: not dumped); `weights` its bounds' (pair_weights); `seed`: the
// pair's own (a function of the options' seed and the pair's place).
PairEnergies pair_energies(const ssmv::mamba3::Problem& pair, const SharpModel& model, const Outputs& kernel,
                           const PairWeights& weights, const sharp::SharpOptions& options, uint64_t seed);

// The energies of the kernel against each candidate defect's emulation, [part][defect], for the
// parts `wanted` (the others left empty): the attribution of a flagged tensor, run only then.
std::array<std::vector<double>, kParts> defect_energies(const ssmv::mamba3::Problem& pair, const SharpModel& model,
                                                        const Outputs& kernel, const PairWeights& weights,
                                                        const std::array<bool, kParts>& wanted);

}  // namespace ssmv::family::mamba3
