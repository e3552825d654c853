#include "fast/mamba3/contract.h"

#include <string>

#include "fast/common/fast_math_budgets.h"
#include "fast/mamba3/arithmetic.h"

namespace ssmv::mamba3_step {
namespace {

// The kernel's constants are the bound's (the bound charges |π_f − π| and |2π_f − 2π|).
static_assert(kPi == ssmv::mamba3::kPiF32 && kTwoPi == ssmv::mamba3::kTwoPiF32);

TranscendentalBudget budget(const std::vector<TranscendentalBudget>& all, const std::string& f) {
  for (const TranscendentalBudget& b : all) {
    if (b.function == f) return b;
  }
  return {};
}

}  // namespace

ssmv::mamba3::StepContract contract() {
  ssmv::mamba3::StepContract c;
  c.name = kContractName;
  // y = Σ_n fma(S[n], q[n], acc) on the fp32 state and the fp32 turned c, n = 0..N−1 (arithmetic.h
  // rows 13–16): no rounding of the operands, no tensor cores.
  c.dot_operands = Format::fp32;
  c.dot_tensor_cores = false;
  // fast/common/fast_math.h through fast_math_budgets.h: α = fm::exp(adt) itself (exp 1.0 ULP on
  // (−inf, 88.72]: the bound refuses adt above), λ = fm::sigmoid(trap) (2.5 ULP + 2^-128),
  // fm::silu(z) = fl(z·fm::sigmoid(z)) (3.3 ULP + 2.61e-37), fm::tanh (1.7 ULP, every argument),
  // fm::cos and fm::sin of the reduced angle (1.5 ULP on [−8, 8]).
  const auto base = fm::fast_math_budgets();
  const auto rotary = fm::fast_math_rotary_budgets();
  c.exp = budget(base, "exp");
  c.sigmoid = budget(base, "sigmoid");
  c.silu = budget(rotary, "silu");
  c.tanh = budget(rotary, "tanh");
  c.cos = budget(rotary, "cos");
  c.sin = budget(rotary, "sin");
  c.division_rel = 0x1p-24;  // θ'/2π_f: IEEE division (nvcc -prec-div=true), ½ ULP
  return c;
}

}  // namespace ssmv::mamba3_step
