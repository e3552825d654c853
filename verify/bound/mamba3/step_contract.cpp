// The two contracts of the Mamba-3 SISO step kernel; every figure's origin is in its
// how_measured and in docs/mamba3-bounds.md §6.
#include "verify/bound/mamba3/step_contract.h"

#include <cmath>
#include <limits>

namespace ssmv::bound::mamba3 {

// The constants as the kernel has them: fp32(π) = 3.14159274..., and 1.44269504089 rounds to the
// same fp32 as log2 e (0x3FB8AA3B, the constant of tl.exp's lowering).
static_assert(kPiF32 == 3.14159274f && kTwoPiF32 == 2 * kPiF32);
static_assert(kLog2eF32 == float(1.4426950408889634) && kLog2eF32 == 0x1.715476p+0f);

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = 3.141592653589793;

TranscendentalBudget make(const char* f, double c0, double c1, double abs, double lo, double hi, const char* how) {
  TranscendentalBudget b;
  b.function = f;
  b.ulp_const = c0;
  b.ulp_per_abs_arg = c1;
  b.abs_error = abs;
  b.arg_lo = lo;
  b.arg_hi = hi;
  b.how_measured = how;
  return b;
}

}  // namespace

StepContract production_h200() {
  StepContract c;
  c.name = "mamba3_siso_step.production";
  c.dot_operands = Format::bf16;
  c.dot_tensor_cores = true;
  // A relative error r is below r/u ULPs of fp32 (ulp(v) > 2^-24·|v| for normal v): 2^-10.987
  // relative = 2^13.013 ULPs. Subnormal arguments: 2^-126 absolute in case they are flushed.
  c.tanh = make("tanh", std::exp2(13.013), 0, 0x1p-126, -kInf, kInf,
                "PTX ISA manual, tanh.approx.f32: maximum relative error 2^-10.987 (not measured by ssmv)");
  c.cos = make("cos", 0, 0, std::exp2(-20.5), -100 * kPi, 100 * kPi,
               "PTX ISA manual, cos.approx.f32: maximum absolute error 2^-20.5 in [-100pi, 100pi] "
               "(not measured by ssmv)");
  c.sin = make("sin", 0, 0, std::exp2(-20.5), -100 * kPi, 100 * kPi,
               "PTX ISA manual, sin.approx.f32: maximum absolute error 2^-20.5 in [-100pi, 100pi] "
               "(not measured by ssmv)");
  c.exp = make("exp", 2.006, 1.162, 0.0, -kInf, 0.0,
               "docs/measurements/triton-budgets.md, tl.exp(x) on an H200 (every fp32 argument <= 0): "
               "the step kernel's tl.math.exp2(adt * 1.44269504089) is the same mul.f32 by 0f3FB8AA3B "
               "and ex2.approx.f32 (assumed: its PTX not yet inspected)");
  c.sigmoid = make("sigmoid", 2.979, 1.154, 2.938735160604488e-39, -kInf, kInf,
                   "docs/measurements/triton-budgets.md, tl.sigmoid(x) on an H200, every fp32 argument");
  c.silu = make("silu", 3.434, 1.145, 2.6073292756257964e-37, -kInf, kInf,
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
  c.tanh = make("tanh", 3, 0, 0x1p-149, -kInf, kInf,
                "std::tanh(float): 3 ULP (glibc's tanhf reaches 2.03 ULP at -0x1.e11592p-3)");
  c.cos = make("cos", 1, 0, 0x1p-149, -100 * kPi, 100 * kPi, "std::cos(float): glibc's documented 1 ULP for cosf");
  c.sin = make("sin", 1, 0, 0x1p-149, -100 * kPi, 100 * kPi, "std::sin(float): glibc's documented 1 ULP for sinf");
  // exp2f within 1 ULP of 2^w, w = fl(adt·L) off adt·log2 e by |adt|·(|L − log2 e| + u·L):
  // relative (e^{ln2·Δw} − 1) ≤ 1.224·u·|adt| (ULPs: r/u), and 1 ULP at 2^w ≤ 2 ULP at α.
  c.exp = make("exp", 2, 1.23, 0x1p-149, -126, 88,
               "derived: exp2f (1 ULP) of fl(adt * fp32(log2 e)): 2 + 1.23|adt| ULP");
  // 1/(1 + e), e = exp2f(−x·L) = e^{-x}(1 + r1), |r1| ≤ (2 + 1.224|x|)u: relative error of σ
  // ≤ |r1|(1 − σ) + 2u (the add and the division); σ = 0 once e overflows (x < −88.7, σ < 3e-39).
  c.sigmoid = make("sigmoid", 4.1, 1.23, 3e-39, -kInf, kInf,
                   "derived: 1/(1 + exp2f(-x * fp32(log2 e))) in fp32: 4.1 + 1.23|x| ULP + 3e-39");
  c.silu = make("silu", 5.1, 1.23, 3e-37, -kInf, kInf,
                "derived: x * sigmoid(x) in fp32: the sigmoid's budget plus one product rounding");
  for (TranscendentalBudget* b : {&c.tanh, &c.cos, &c.sin, &c.exp, &c.sigmoid, &c.silu}) b->how_measured += checked;
  c.division_rel = 0x1p-24;  // IEEE division: ½ ULP ≤ 2^-24 relative
  return c;
}

}  // namespace ssmv::bound::mamba3
