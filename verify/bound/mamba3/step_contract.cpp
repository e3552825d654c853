// The two contracts of the Mamba-3 SISO step kernel; every figure's origin is in its
// how_measured and in docs/mamba3-bounds.md §6.
#include "verify/bound/mamba3/step_contract.h"

#include <cmath>
#include <limits>

namespace ssmv::bound::mamba3 {

namespace {

using ssmv::mamba3::make_budget;
using ssmv::mamba3::StepContract;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = 3.141592653589793;

}  // namespace

StepContract production_h200() {
  StepContract c;
  c.name = "mamba3_siso_step.production";
  c.dot_operands = Format::bf16;
  c.dot_tensor_cores = true;
  // Measured on an H200 (2026-12-05, scripts/triton/measure_mamba3_transcendentals.py, every fp32
  // argument of the range against float64; docs/measurements/mamba3-transcendentals.md): the
  // largest error of each instruction over the range, which for a deterministic instruction
  // measured exhaustively is its error on that range.
  // tanh.approx.f32: 133.95 ULP at most over every finite fp32 argument (relative 1.11e-5 =
  // 2^-16.5; the PTX ISA's 2^-11 is 180 times looser); subnormal arguments pass through exactly.
  c.tanh = make_budget("tanh", 134, 0, 0, -kInf, kInf,
                "measured on an H200, every finite fp32 argument: 133.95 ULP at most "
                "(docs/measurements/mamba3-transcendentals.md)");
  // cos/sin.approx.f32 on [-8, 8], which holds the reduced θ the kernel feeds: [0, fp32(2π)] and
  // a few ULP either side (fp32(2π) = 6.2831855 > 2π). On [-2π, 2π] alone cos reaches 7.095e-7 =
  // 2^-20.43, above the PTX ISA's 2^-20.5 at 2349 arguments; (2π, 8] reaches 1.206e-6.
  c.cos = make_budget("cos", 0, 0, 1.2059150625159942e-06, -8, 8,
               "measured on an H200, every fp32 argument in [-8, 8]: 1.2059e-6 absolute at most (at +-7.9687); "
               "[-2pi, 2pi]: 7.095e-7 = 2^-20.43, above the PTX ISA's 2^-20.5 at 2349 arguments");
  c.sin = make_budget("sin", 0, 0, 1.1468916867596324e-06, -8, 8,
               "measured on an H200, every fp32 argument in [-8, 8]: 1.1469e-6 absolute at most (at +-6.4305); "
               "[-2pi, 2pi]: 6.505e-7 = 2^-20.55");
  // tl.math.exp2 compiles to ex2.approx.ftz.f32 (tl.exp to ex2.approx.f32): the same bits as
  // tl.exp wherever α is a normal number, 0 where it would be subnormal (adt < -87.34): at most
  // 2^-126 absolute there.
  c.exp = make_budget("exp", 2.006, 1.162, 0x1p-126, -kInf, 0.0,
               "docs/measurements/triton-budgets.md, tl.exp(x) on an H200 (every fp32 argument <= 0); the "
               "step's tl.math.exp2(adt * 1.44269504089) measured on an H200: mul.f32 by 0f3FB8AA3B and "
               "ex2.approx.ftz.f32, the same bits as tl.exp but where the result is subnormal (flushed to 0: "
               "2^-126 absolute)");
  c.sigmoid = make_budget("sigmoid", 2.979, 1.154, 2.938735160604488e-39, -kInf, kInf,
                   "docs/measurements/triton-budgets.md, tl.sigmoid(x) on an H200, every fp32 argument");
  c.silu = make_budget("silu", 3.434, 1.145, 2.6073292756257964e-37, -kInf, kInf,
                "docs/measurements/triton-budgets.md, silu_gate x * tl.sigmoid(x) on an H200, every fp32 "
                "argument (mamba_ssm utils.silu is that expression)");
  c.division_rel = 0x1p-22;  // div.full.f32: 2 ULP (PTX ISA)
  return c;
}

StepContract host_emulation() {
  StepContract c;
  c.name = "mamba3_siso_step.host_emulation";
  c.dot_operands = Format::bf16;
  c.dot_tensor_cores = false;  // the emulation sums sequentially in fp32; the bound allows any order
  const char* checked = " (checked by verify/bound/mamba3/tests/emulation_budget_test.cpp)";
  // glibc's libm-test-ulps list 2 ULP for tanhf; the budget test finds 2.03 (x = -0x1.e11592p-3).
  c.tanh = make_budget("tanh", 3, 0, 0x1p-149, -kInf, kInf,
                "std::tanh(float): 3 ULP (glibc's tanhf reaches 2.03 ULP at -0x1.e11592p-3)");
  c.cos = make_budget("cos", 1, 0, 0x1p-149, -100 * kPi, 100 * kPi, "std::cos(float): glibc's documented 1 ULP for cosf");
  c.sin = make_budget("sin", 1, 0, 0x1p-149, -100 * kPi, 100 * kPi, "std::sin(float): glibc's documented 1 ULP for sinf");
  // exp2f within 1 ULP of 2^w, w = fl(adt·L) off adt·log2 e by |adt|·(|L − log2 e| + u·L):
  // relative (e^{ln2·Δw} − 1) ≤ 1.224·u·|adt| (ULPs: r/u), and 1 ULP at 2^w ≤ 2 ULP at α.
  c.exp = make_budget("exp", 2, 1.23, 0x1p-149, -126, 88,
               "derived: exp2f (1 ULP) of fl(adt * fp32(log2 e)): 2 + 1.23|adt| ULP");
  // 1/(1 + e), e = exp2f(−x·L) = e^{-x}(1 + r1), |r1| ≤ (2 + 1.224|x|)u: relative error of σ
  // ≤ |r1|(1 − σ) + 2u (the add and the division); σ = 0 once e overflows (x < −88.7, σ < 3e-39).
  c.sigmoid = make_budget("sigmoid", 4.1, 1.23, 3e-39, -kInf, kInf,
                   "derived: 1/(1 + exp2f(-x * fp32(log2 e))) in fp32: 4.1 + 1.23|x| ULP + 3e-39");
  c.silu = make_budget("silu", 5.1, 1.23, 3e-37, -kInf, kInf,
                "derived: x * sigmoid(x) in fp32: the sigmoid's budget plus one product rounding");
  for (TranscendentalBudget* b : {&c.tanh, &c.cos, &c.sin, &c.exp, &c.sigmoid, &c.silu}) b->how_measured += checked;
  c.division_rel = 0x1p-24;  // IEEE division: ½ ULP ≤ 2^-24 relative
  return c;
}

}  // namespace ssmv::bound::mamba3
