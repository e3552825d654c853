#include "verify/contracts/flashinfer_presets.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace ssmv::verify {
namespace {

// Source positions are of FlashInfer at commit fb28d7242b35 (include/flashinfer/mamba/).
//
// The budgets of the three fp32 expressions, compiled with nvcc -use_fast_math for sm_90 as
// FlashInfer's JIT compiles them (flashinfer/jit/core.py gen_jit_spec), measured on the H200
// over every fp32 argument (docs/measurements/flashinfer-budgets.md):
//   exp      __expf(x) = ex2.approx.ftz(x·log2e): 2.006 + 1.162·|x| ULP + 2^-126 (results below
//            2^-126 flushed to zero)
//   softplus x <= 20.f ? __logf(1.f + __expf(x)) : x: 2.455 ULP + 1.770e-7 absolute (Triton's
//            log(exp(x) + 1): 1.255 ULP + 1.243e-7)
//   sigmoid  __fdividef(1.f, 1.f + __expf(0.f - x)): 2.979 + 1.154·|x| ULP + 2^-126 (0 for
//            x < -87.34, where __fdividef's denominator exceeds 2^126, and where __expf overflows)
std::vector<TranscendentalBudget> measured_budgets() {
  return {
      {"exp", 2.006, 1.162, 1.1754817373607687e-38, -HUGE_VAL, 0.0,
       "NVIDIA H200, 2026-12-02 03:42 UTC, scripts/flashinfer/measure_budgets.py: every fp32 argument in [-104, 0] (1120927746) through __expf(x) (nvcc -use_fast_math: ex2.approx.ftz(x*log2e)), compiled by nvcc -use_fast_math -arch=sm_90 (fast_math_eval.cu): max 8.389e+06 ULP (at x = -87.33655548095703), max abs error 1.233e-07, 88.16% correctly rounded; fit (2.006 + 1.162*|x|)*ulp_fp32(exact) + 1.1754817373607687e-38 holds for all (max error/budget 0.999988; ulp_const is the exact max residual 2.005164 rounded up to 0.001); it also holds for every finite fp32 argument beyond the range (1018167295 in [-3.40282e+38, -104], max error/budget 0.000000), hence the infinite bound(s); exact values in float64 on the GPU (relative error < 2^-50, negligible)"},
      {"softplus", 2.455, 0.0, 1.769952960861687e-07, -HUGE_VAL, HUGE_VAL,
       "NVIDIA H200, 2026-12-02 03:42 UTC, scripts/flashinfer/measure_budgets.py: every fp32 argument in [-104, 20] (2221932546) through x <= 20.f ? __logf(1.f + __expf(x)) : x (thresholded_softplus, common.cuh), compiled by nvcc -use_fast_math -arch=sm_90 (fast_math_eval.cu): max 1.886e+07 ULP (at x = -16.635530471801758), max abs error 2.518e-06, 86.16% correctly rounded; fit (2.455 + 0.0*|x|)*ulp_fp32(exact) + 1.769952960861687e-07 holds for all (max error/budget 0.999858; ulp_const is the exact max residual 2.454624 rounded up to 0.001); it also holds for every finite fp32 argument beyond the range (1018167295 in [-3.40282e+38, -104], 1038090239 in [20, 3.40282e+38], max error/budget 0.000424), hence the infinite bound(s); exact values in float64 on the GPU (relative error < 2^-50, negligible)"},
      {"sigmoid", 2.979, 1.154, 1.1754817373607686e-38, -HUGE_VAL, HUGE_VAL,
       "NVIDIA H200, 2026-12-02 03:42 UTC, scripts/flashinfer/measure_budgets.py: every fp32 argument in [-104, 104] (2241855490) through __fdividef(1.f, 1.f + __expf(0.f - x)) (sig_z), compiled by nvcc -use_fast_math -arch=sm_90 (fast_math_eval.cu): max 8.389e+06 ULP (at x = -87.33655548095703), max abs error 1.184e-07, 90.20% correctly rounded; fit (2.979 + 1.154*|x|)*ulp_fp32(exact) + 1.1754817373607686e-38 holds for all (max error/budget 0.999988; ulp_const is the exact max residual 2.978092 rounded up to 0.001); it also holds for every finite fp32 argument beyond the range (1018167295 in [-3.40282e+38, -104], 1018167295 in [104, 3.40282e+38], max error/budget 0.000000), hence the infinite bound(s); exact values in float64 on the GPU (relative error < 2^-50, negligible)"},
  };
}

Contract flashinfer_ssu(bool stochastic) {
  Contract c;
  c.name = stochastic ? "flashinfer.ssu.sr" : "flashinfer.ssu";
  c.kernel = stochastic ? "FlashInfer CUDA selective_state_update, fp16 state with Philox stochastic rounding"
                        : "FlashInfer CUDA selective_state_update (single-token and MTP launches)";
  c.family = Family::sequential;
  c.accumulation = Format::fp32;
  // kernel_selective_state_update_stp.cuh:232-240 (simple), mtp_simple.cuh:443-470: the state is
  // updated in fp32 registers and written in the cache dtype (convertAndStore, or cvt_rs_f16_f32
  // with PHILOX_ROUNDS > 0) once per launch; y is computed from the unrounded fp32 state.
  c.roundings = {{Point::stored_state, FormatRef::state,
                  stochastic ? RoundingMode::stochastic : RoundingMode::nearest},
                 {Point::output, FormatRef::output}};
  c.transcendentals = measured_budgets();
  // The deepest of the variants' sums: horizontal (stp.cuh:1145-1173) gives each row 2 lanes
  // of N/2 sequential FMAs, one shuffle add (offset 16), then out += D·x; simple and vertical
  // (stp.cuh:202-248, 481-594) 32 lanes of N/32 FMAs (lane 0 seeded with D·x) and the
  // 16-8-4-2-1 shuffle tree (common.cuh warpReduceSum); MTP simple (mtp_simple.cuh:404-429)
  // 2 interleaved chains per lane over lanesPerRow lanes, then + D·x. ⌈N/k⌉ + ⌈log2 k⌉ is
  // largest at k = 2 among them (N ≥ 8), so partials 2 bounds every variant.
  c.reductions = {{Sum::y, "y = Σ_n C·S + D·x", ReductionOrder::sequential_fma, 2,
                   "horizontal STP (the deepest variant): 2 lanes per row, N/2 sequential fmaf each, one "
                   "__shfl_down add, then out += D·x; simple/vertical: 32 lanes of N/32 fmaf from D·x in lane 0, "
                   "warpReduceSum 16-8-4-2-1; MTP simple: 2 chains per lane, lanesPerRow lanes, then + D·x"}};
  // -use_fast_math (flashinfer/jit/core.py gen_jit_spec) implies -ftz=true: subnormal operands
  // and results of every fp32 operation are flushed (docs/bounds.md [2.4], [2.5], [2.7]); the
  // software stochastic rounding (conversion.cuh cvt_rs_f16_sw, sm_90) writes 0 for |v| < 2^-14.
  c.flush_to_zero = true;
  c.softplus_shortcut = true;  // common.cuh thresholded_softplus: v <= 20.f ? softplus(v) : v
  c.gpu_twin_max_ulps = 0;
  c.gpu_twin_how_measured = "no host twin: an external kernel, judged from its dumps";
  return c;
}

}  // namespace

const std::vector<std::string_view>& flashinfer_preset_names() {
  static const std::vector<std::string_view> names{"flashinfer.ssu", "flashinfer.ssu.sr"};
  return names;
}

bool is_flashinfer_preset(std::string_view name) {
  for (std::string_view n : flashinfer_preset_names()) {
    if (n == name) return true;
  }
  return false;
}

Contract flashinfer_preset(std::string_view name) {
  if (name == "flashinfer.ssu") return flashinfer_ssu(false);
  if (name == "flashinfer.ssu.sr") return flashinfer_ssu(true);
  throw std::invalid_argument("'" + std::string(name) + "' is not a FlashInfer preset");
}

}  // namespace ssmv::verify
