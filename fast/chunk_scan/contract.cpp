#include "fast/chunk_scan/contract.h"

#include "fast/common/fast_math_budgets.h"

namespace ssmv::chunk_scan {
namespace {

std::vector<Reduction> reductions(ContractKind kind) {
  const bool mma = kind == ContractKind::production;
  const ReductionOrder order = mma ? ReductionOrder::mma_m16n8k16 : ReductionOrder::sequential_fma;
  const std::string steps =
      mma ? "mma.sync m16n8k16 with fp32 accumulator: 16-wide k-steps [16j,16j+16) in "
            "increasing j, one accumulator chained through them (docs/design.md §4 model); "
            "sequential fmaf instead when the input format is fp32"
          : "sequential fmaf in increasing k, one fp32 accumulator";
  auto r = [](Sum sum, std::string what, ReductionOrder o, std::string detail) {
    Reduction x;
    x.sum = sum;
    x.what = std::move(what);
    x.order = o;
    x.detail = std::move(detail);
    return x;
  };
  return {
      r(Sum::cumsum, "cumsum: cs_m = Σ_{k≤m} δ_k·A", ReductionOrder::sequential_fma,
       "sequential fp32 in increasing k: dA_k = fl(δ_k·A), cs_k = fl(cs_{k−1} + dA_k) (product "
       "rounded before the add, no fma)"),
      r(Sum::chunk_state, "chunk state: Σ_k x_k[p]·R(B_k[n]·scale_k), k < chunk length", order, steps),
      r(Sum::state_passing, "state passing: h = fma(exp(cs_last), h, chunk_state)", ReductionOrder::sequential_fma,
       "one fmaf per chunk, chunks in order, fp32 between chunks"),
      r(Sum::cb, "C·Bᵀ: Σ_n C_m[n]·B_k[n]", order, steps),
      r(Sum::y, "y: (Σ_n C_m[n]·R(h_in)[p,n])·exp(cs_m) then + Σ_{k≤m} R(w_mk)·x_k[p] on the same "
       "accumulator, then fma(D, x, ·)",
       order, steps + "; k-steps entirely above the causal diagonal are skipped (exact: a step "
                      "of zero products leaves the accumulator unchanged)"),
  };
}

}  // namespace

std::string_view contract_kind_name(ContractKind kind) {
  return kind == ContractKind::production ? "production" : "fp32";
}

bool parse_contract_kind(std::string_view text, ContractKind& out) {
  if (text == "production") {
    out = ContractKind::production;
    return true;
  }
  if (text == "fp32") {
    out = ContractKind::fp32;
    return true;
  }
  return false;
}

Contract contract(ContractKind kind, int64_t chunk_size) {
  Contract c;
  c.name = std::string("chunk_scan.") + std::string(contract_kind_name(kind));
  c.kernel = "chunk_scan";
  c.family = Family::chunked;
  c.chunk_size = chunk_size;
  c.chunk_layout = ChunkLayout::sequence;  // chunks restart at every sequence (plan_chunks)
  c.accumulation = Format::fp32;
  if (kind == ContractKind::production) {
    c.roundings.push_back({Point::dt_scaled_B, FormatRef::input});
    c.roundings.push_back({Point::incoming_state, FormatRef::input});
    c.roundings.push_back({Point::decayed_CB, FormatRef::input});
  }
  // Only the returned states (final, and boundary states on request) are rounded to the
  // state format; the running state between chunks stays fp32.
  c.roundings.push_back({Point::stored_state, FormatRef::state});
  c.roundings.push_back({Point::output, FormatRef::output});
  // exp (decays; A ≤ 0 keeps every argument ≤ 0), softplus, sigmoid: the measured budgets
  // of fast/common/fast_math.h, valid for every argument (fast_math_budgets.h).
  c.transcendentals = fm::fast_math_budgets();
  c.reductions = reductions(kind);
  c.flush_to_zero = false;
  c.softplus_shortcut = true;
  // Bit-identical: the twin implements the docs/design.md §4 model with the rules measured
  // since (mma_model.h: subnormal operands and accumulators read their exponent field,
  // E ≥ −132, zero results +0), measured in bench/NOTES.md "chunk_scan (issue 4)".
  c.gpu_twin_max_ulps = 0;
  c.gpu_twin_how_measured =
      "H200, 2026-11-30 09:31 UTC (main after the fourth speed round, bench/NOTES.md 'final "
      "device call of the third session'): chunk_scan_gpu_test MatchesTwinBitForBitOnRandomProblems, "
      "320 random varlen problems of both contracts (chunk 64/128/256, bf16/fp16/fp32 inputs): "
      "5531672 outputs and 10152138 stage intermediates compared, 0 differ; ssmv_prop_gpu "
      "GpuProperty.ChunkScanEqualsTwin 1000 cases, 0 differ (and 10000 in a tenth of a campaign "
      "at 06:33 UTC, on the kernels before the speed work)";
  return c;
}

}  // namespace ssmv::chunk_scan
