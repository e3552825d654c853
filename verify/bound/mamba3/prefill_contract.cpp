// The three contracts of the Mamba-3 SISO prefill; every figure's origin is in its how_measured
// and in docs/mamba3-bounds.md part II.
#include "verify/bound/mamba3/prefill_contract.h"

#include <limits>

#include "verify/bound/mamba3/step_contract.h"

namespace ssmv::bound::mamba3 {
namespace {

using ssmv::mamba3::make_budget;
using ssmv::mamba3::PrefillContract;
using ssmv::mamba3::StepContract;

constexpr double kInf = std::numeric_limits<double>::infinity();

// The step kernel's budgets for what both kernels evaluate alike (tanh of the angle rate, cos and
// sin of θ in [0, fp32(2π)], tl.sigmoid, the silu gate): the same instructions on the same GPU.
PrefillContract from_step(const StepContract& s, const char* name) {
  PrefillContract c;
  c.name = name;
  c.tanh = s.tanh;
  c.cos = s.cos;
  c.sin = s.sin;
  c.sigmoid = s.sigmoid;
  c.silu = s.silu;
  c.division_rel = s.division_rel;
  return c;
}

}  // namespace

PrefillContract prefill_production_h200() {
  PrefillContract c = from_step(production_h200(), "mamba3_siso_combined.production");
  c.angle_store = Format::bf16;
  c.qk_store = Format::bf16;
  c.dot_operands = Format::bf16;
  c.dot_tensor_cores = true;
  c.qk_dot_tf32 = true;
  // tl.math.exp2 compiles to ex2.approx.ftz.f32 (checked in the PTX). Measured on an H200
  // (2026-12-05, scripts/triton/measure_mamba3_transcendentals.py --only exp2, every fp32 argument
  // of [-127, 1), bit-identical to inline-asm ex2.approx.ftz.f32): 2.055 ULP of the exact result at
  // most on [-126, 1) (the PTX ISA's "2 ulp from the correctly rounded result"); below -126 the
  // subnormal result is flushed to 0, an error below 2^-126. The kernel's arguments are <= 0 up to
  // the rounding of fl(last − cs_j), well inside 1.
  c.exp2 = make_budget("exp2", 2.056, 0, 0x1p-126, -kInf, 1.0,
                       "measured on an H200, every fp32 argument of [-127, 1): 2.055 ULP at most on [-126, 1), "
                       "flushed to 0 below -126 (docs/measurements/mamba3-transcendentals.md)");
  return c;
}

PrefillContract prefill_fp32_angles() {
  PrefillContract c = prefill_production_h200();
  c.name = "mamba3_siso_combined.fp32_angles";
  c.angle_store = Format::fp32;
  return c;
}

PrefillContract prefill_host_emulation() {
  PrefillContract c = from_step(host_emulation(), "mamba3_siso_combined.host_emulation");
  c.angle_store = Format::bf16;
  c.qk_store = Format::bf16;
  c.dot_operands = Format::bf16;
  c.dot_tensor_cores = false;  // the emulation sums sequentially in fp32; the bound allows any order
  c.qk_dot_tf32 = false;
  // glibc's exp2f: correctly rounded but in rare cases (0.502 ULP in its own documentation, within
  // 1 ULP); below 2^-126 the result is subnormal, within half the subnormal spacing more.
  c.exp2 = make_budget("exp2", 1, 0, 0x1p-149, -kInf, 128,
                       "std::exp2(float): glibc's exp2f, within 1 ULP (checked by "
                       "verify/bound/mamba3/tests/emulation_budget_test.cpp)");
  return c;
}

}  // namespace ssmv::bound::mamba3
