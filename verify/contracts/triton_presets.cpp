#include "verify/contracts/triton_presets.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace ssmv::verify {
namespace {

// Source positions below are of mamba_ssm at commit e9594ce1 (mamba_ssm/ops/triton/);
// vLLM's copies (model_executor/layers/mamba/ops) do the same arithmetic (docs/contracts.md).

// The budgets of the three fp32 expressions the kernels evaluate, measured on the H200 over
// every fp32 argument of each range (docs/measurements/triton-budgets.md).
std::vector<TranscendentalBudget> measured_budgets() {
  // |computed − exact| ≤ (ulp_const + ulp_per_abs_arg·|x|)·ulp_fp32(exact) + abs_error:
  //   exp      tl.exp(x) = ex2.approx(x·log2e): 2.006 + 1.162·|x| ULP (62.7 ULP at x ≈ −86.6)
  //   softplus log(exp(v) + 1): 1.255 ULP + 1.243e-7 absolute (all relative accuracy lost for v ≪ 0)
  //   sigmoid  1 / (1 + ex2.approx(−z·log2e)) with div.full: 2.979 + 1.154·|z| ULP + 2.94e-39
  // Each holds for every fp32 argument (max error ÷ budget 0.99995 at worst).
  return {
      {"exp", 2.006, 1.162, 0.0, -HUGE_VAL, 0.0,
       "NVIDIA H200, 2026-12-01 22:08 UTC, scripts/triton/measure_budgets.py: every fp32 argument in [-104, 0] (1120927746) through tl.exp(x), Triton 3.6.0, torch 2.11.0+cu130, mamba_ssm e9594ce1c732: max 62.74 ULP (at x = -86.6440200805664), max abs error 1.233e-07, 88.31% correctly rounded; fit (2.006 + 1.162*|x|)*ulp_fp32(exact) + 0.0 holds for all (max error/budget 0.999596; ulp_const is the exact max residual 2.005164 rounded up to 0.001); it also holds for every finite fp32 argument beyond the range (1018167295 in [-3.40282e+38, -104], max error/budget 0.003958), hence the infinite bound(s); exact values in float64 (relative error < 2^-50, negligible)"},
      {"softplus", 1.255, 0.0, 1.2431332907514303e-07, -HUGE_VAL, HUGE_VAL,
       "NVIDIA H200, 2026-12-01 22:08 UTC, scripts/triton/measure_budgets.py: every fp32 argument in [-104, 20] (2221932546) through tl.where(x <= 20.0, softplus(x), x), softplus = mamba_ssm.ops.triton.softplus.softplus = tl.math.log(tl.math.exp(x) + 1), Triton 3.6.0, torch 2.11.0+cu130, mamba_ssm e9594ce1c732: max 1.678e+07 ULP (at x = -19.40812110900879), max abs error 1.32e-06, 88.88% correctly rounded; fit (1.255 + 0.0*|x|)*ulp_fp32(exact) + 1.2431332907514303e-07 holds for all (max error/budget 0.999487; ulp_const is the exact max residual 1.254290 rounded up to 0.001); it also holds for every finite fp32 argument beyond the range (1018167295 in [-3.40282e+38, -104], 1038090239 in [20, 3.40282e+38], max error/budget 0.000819), hence the infinite bound(s); exact values in float64 (relative error < 2^-50, negligible)"},
      {"sigmoid", 2.979, 1.154, 2.938735160604488e-39, -HUGE_VAL, HUGE_VAL,
       "NVIDIA H200, 2026-12-01 22:08 UTC, scripts/triton/measure_budgets.py: every fp32 argument in [-104, 104] (2241855490) through tl.sigmoid(x), Triton 3.6.0, torch 2.11.0+cu130, mamba_ssm e9594ce1c732: max 2.097e+06 ULP (at x = -88.72283935546875), max abs error 1.184e-07, 90.20% correctly rounded; fit (2.979 + 1.154*|x|)*ulp_fp32(exact) + 2.938735160604488e-39 holds for all (max error/budget 0.999950; ulp_const is the exact max residual 2.978092 rounded up to 0.001); it also holds for every finite fp32 argument beyond the range (1018167295 in [-3.40282e+38, -104], 1018167295 in [104, 3.40282e+38], max error/budget 0.000000), hence the infinite bound(s); exact values in float64 (relative error < 2^-50, negligible)"},
  };
}

// tl.dot of bf16 or fp16 operands with an fp32 accumulator on sm_90 (wgmma), chained over
// the K blocks by `acc += tl.dot(a, b)`.
constexpr const char* kDotOrder =
    "tl.dot on sm_90 (wgmma, bf16/fp16 operands, fp32 accumulator), K blocks chained in increasing k by "
    "acc += tl.dot(a, b); measured to follow the 16-wide truncating-step model of mma_m16n8k16 "
    "(docs/measurements/triton-dot.md)";

Contract triton_ssu() {
  Contract c;
  c.name = "triton.ssu";
  c.kernel = "selective_state_update (mamba_ssm / vLLM Triton)";
  c.family = Family::sequential;
  c.accumulation = Format::fp32;
  // selective_state_update.py:125-132: the state is updated in fp32 and stored in the cache
  // dtype (tl.store(state_ptrs, state)), y is computed from the unrounded fp32 state.
  c.roundings = {{Point::stored_state, FormatRef::state}, {Point::output, FormatRef::output}};
  c.transcendentals = measured_budgets();
  c.reductions = {{Sum::y, "y = Σ_n C·S + D·x", ReductionOrder::any_order, 1,
                   "selective_state_update.py:127-129: out = tl.sum(state * C[None, :], axis=1), products "
                   "rounded, summed in the compiler's order; then out += x * D"}};
  c.flush_to_zero = false;
  c.softplus_shortcut = true;  // selective_state_update.py:102: tl.where(dt <= 20.0, softplus(dt), dt)
  c.gpu_twin_max_ulps = 0;
  c.gpu_twin_how_measured = "no host twin: an external kernel, judged from its dumps";
  return c;
}

Contract triton_chunk_scan(bool varlen, int64_t chunk_size) {
  Contract c;
  c.name = varlen ? "triton.chunk_scan.varlen" : "triton.chunk_scan";
  c.kernel = varlen ? "mamba_chunk_scan_combined with cu_seqlens (varlen), mamba_ssm / vLLM Triton"
                    : "mamba_chunk_scan_combined (mamba_ssm / vLLM Triton)";
  c.family = Family::chunked;
  c.chunk_size = chunk_size;
  // Varlen calls pass seq_idx: chunks are cut at multiples of chunk_size on the packed axis.
  c.chunk_layout = varlen ? ChunkLayout::global : ChunkLayout::sequence;
  c.accumulation = Format::fp32;
  // tl.dot rounds fp32 operands to tf32 (Triton's default input precision), which no
  // rounding point below names: the preset describes 16-bit inputs only.
  c.input_formats = {Format::bf16, Format::fp16};
  c.roundings = {
      // ssd_chunk_state.py:248-253: b *= exp(min(cs_last - cs_k, 0)) * dt_k; b.to(x dtype)
      {Point::dt_scaled_B, FormatRef::input},
      // ssd_state_passing.py:69 stores the state entering each chunk in C's dtype;
      // ssd_chunk_scan.py:117-118 multiplies it with C.
      {Point::incoming_state, FormatRef::input},
      // ssd_chunk_scan.py:142-148: cb *= exp(min(cs_m - cs_k, 0)); cb *= dt_k; cb.to(x dtype)
      {Point::decayed_CB, FormatRef::input},
      {Point::stored_state, FormatRef::state},
      {Point::output, FormatRef::output},
  };
  if (varlen) {
    // ssd_chunk_state.py chunk_state_varlen: acc += chunk_states * exp(dA_cs_last), the
    // chunk_states being the inter-chunk states stored in C's dtype.
    c.roundings.push_back({Point::final_incoming_state, FormatRef::input});
  }
  c.transcendentals = measured_budgets();
  c.reductions = {
      {Sum::cumsum, "cumsum: cs_m = Σ_{k≤m} fl(δ_k·A)", ReductionOrder::any_order, 1,
       "ssd_chunk_state.py:84-85: dA = dt * A; dA_cs = tl.cumsum(dA, axis=1) (the scan's order is Triton's)"},
      {Sum::chunk_state, "chunk state: Σ_k x_k[p]·R(B_k[n]·scale_k)", ReductionOrder::mma_m16n8k16, 1,
       std::string("ssd_chunk_state.py:254: acc += tl.dot(x, b); ") + kDotOrder},
      {Sum::state_passing, "state passing: h = exp(cs_last)·h + chunk_state", ReductionOrder::any_order, 1,
       "ssd_state_passing.py:80: states = scale * states + new_states in fp32 (fused or not)"},
      {Sum::cb, "C·Bᵀ: Σ_n C_m[n]·B_k[n]", ReductionOrder::mma_m16n8k16, 1,
       std::string("ssd_bmm.py:78: acc += tl.dot(a, b), stored in fp32; ") + kDotOrder},
      {Sum::y, "y: (C·R(h_in))·exp(cs_m), then + Σ_k R(w_mk)·x_k on the same accumulator, then + x·D",
       ReductionOrder::mma_m16n8k16, 1,
       std::string("ssd_chunk_scan.py:118 (or 125-128) acc = tl.dot(C, prev_states) * scale_m; 150 acc += "
                   "tl.dot(cb, x); 166 acc += x_residual * D (one fma: Triton fuses by default); 176 acc *= "
                   "z * tl.sigmoid(z); ") +
           kDotOrder},
  };
  c.flush_to_zero = false;
  c.softplus_shortcut = true;  // ssd_chunk_state.py:77
  c.gpu_twin_max_ulps = 0;
  c.gpu_twin_how_measured = "no host twin: an external kernel, judged from its dumps";
  return c;
}

}  // namespace

const std::vector<std::string_view>& triton_preset_names() {
  static const std::vector<std::string_view> names{"triton.ssu", "triton.chunk_scan", "triton.chunk_scan.varlen"};
  return names;
}

bool is_triton_preset(std::string_view name) {
  for (std::string_view n : triton_preset_names()) {
    if (n == name) return true;
  }
  return false;
}

Contract triton_preset(std::string_view name, int64_t chunk_size) {
  if (name == "triton.ssu") return triton_ssu();
  if (name == "triton.chunk_scan" || name == "triton.chunk_scan.varlen") {
    if (chunk_size < 1) {
      throw std::invalid_argument("contract '" + std::string(name) + "' needs a chunk size >= 1, got " +
                                  std::to_string(chunk_size));
    }
    return triton_chunk_scan(name == "triton.chunk_scan.varlen", chunk_size);
  }
  throw std::invalid_argument("'" + std::string(name) + "' is not a Triton preset");
}

}  // namespace ssmv::verify
