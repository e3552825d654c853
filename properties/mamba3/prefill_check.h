// What the Mamba-3 prefill's property suites draw and judge with: mamba_ssm's chunked prefill
// (mamba3_siso_combined) as its host emulation runs it (verify/bound/mamba3/prefill_emulation.h),
// alone or handing its returned four-part state to the step kernel's emulation.
//
// Problems: the step suites' realistic generator (step_gen.h: upstream's magnitudes, adt = −a·dt
// <= 0, shrinking toward one token) with longer sequences (prefill_step_options) and a chunk size
// drawn from kChunkSizes, uniformly, shrinking toward 1. The chunk is drawn first (a dimension:
// shrinking the problem keeps it).
//
// Judging: every element of y and of the returned four-part state against the certified reference
// run one token at a time (verify/family/mamba3/certified_trace.h) and the bound
// (prefill_bounds; handoff_bounds for a hand-off), verify::judge's verdict per element (EXACT or
// WITHIN_CONTRACT pass; the certificate's error and the double rounding of the exact value are
// charged), the angle on the circle — as the Mamba-3 family's check judges a dump, but under any
// PrefillContract, not only the named presets, and without the family's per-tensor report (whose
// histograms cost more than a small case's reference). A failing case is written as a dump
// (step_check.h run_case_dumping): kernel mamba3_prefill with its chunk_size (or mamba3_handoff
// with prefill_tokens) under the named preset nearest the contract (preset_for), so `ssmv check
// FILE` re-judges it; under host_emulation's own settings that is the same judgement.
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "properties/mamba3/handoff.h"
#include "properties/mamba3/step_check.h"
#include "properties/mamba3/step_gen.h"
#include "spec/mamba3/contract.h"
#include "spec/mamba3/problem.h"
#include "verify/bound/mamba3/exact_trace.h"
#include "verify/bound/mamba3/prefill_emulation.h"
#include "verify/bound/mamba3/step_bound.h"
#include "verify/family/mamba3/certified_trace.h"

namespace ssmv::prop::mamba3 {

// The chunk sizes drawn (mamba3_siso_combined's default is 64), the simplest first.
inline const std::vector<int64_t> kChunkSizes = {1, 2, 3, 4, 8, 16, 64};

// The step generator's options for the prefill: 1–3 sequences of 1–20 tokens within 2048 state
// updates, or (one case in 6) one sequence of 16–128 tokens within 8192: several chunks of the
// small chunk sizes, partial last chunks, and sequences longer than 16 and 64.
StepOptions prefill_step_options();

struct GeneratedPrefill {
  ssmv::mamba3::Problem problem;
  int64_t chunk = 1;
};

// A chunk size from kChunkSizes (any but `except`, when given), uniformly, shrinking toward the first.
rc::Gen<int64_t> chunk_size(std::optional<int64_t> except = std::nullopt);
rc::Gen<GeneratedPrefill> prefill_problem(const StepOptions& options = prefill_step_options());

// label_problem (step_gen.h) and the chunk: its size, sequences longer than a chunk, partial last chunks.
void label_prefill_case(const GeneratedPrefill& g);
void showValue(const GeneratedPrefill& g, std::ostream& os);

// prefill_host_emulation() with the angle store and the diagonal's tf32 truncation the emulation's
// options declare (the contract a host emulation run with `o` is held to).
ssmv::mamba3::PrefillContract matching_contract(const bound::mamba3::PrefillEmulationOptions& o);
// The named preset a failing case's dump names: host_emulation when `c` has its angle store and
// diagonal, else production (tf32 diagonal) or fp32_angles (fp32 θ) — the same rounding points with
// the H200's larger budgets, so a dump within `c` is within the preset too.
std::string preset_for(const ssmv::mamba3::PrefillContract& c);

// The trace of a certified run with |S| after every token (chunk 1) as the trace with |S| at the
// ends of chunks of `chunk` tokens (what certified_run(pr, threads, chunk) keeps: the same values).
bound::mamba3::ExactTrace trace_for_chunks(const bound::mamba3::ExactTrace& every_token,
                                           const ssmv::mamba3::Shape& shape, int64_t chunk);

// Every element of `out` (y, the final angle, S, B_prev, x_prev) against the certified values of
// `exact` and the bounds `b`, all in `p`'s layouts (see the top). `usage` is raised to the largest
// bound usage of the elements (the caller counts the case's: count_bound_usage). A failure names
// the worst violating element with its coordinates and carries `out` to dump.
std::optional<StepFailure> within_bounds(const ssmv::mamba3::Problem& p, const Outputs& out,
                                         const family::mamba3::CertifiedRun& exact,
                                         const bound::mamba3::StepBounds& b, const std::string& what, double& usage);

// The emulation options each case draws on top of a base (each shrinking toward off).
struct DrawnOptions {
  bool fused = false, qk_dot_tf32 = false, fp32_angles = false;
};
// Draws what `drawn` names into `o` and labels the case with the options in effect.
void draw_options(bound::mamba3::PrefillEmulationOptions& o, const DrawnOptions& drawn);

// Runs `body` on the prefill case `p` under chunk `o.chunk_size`; a failure is dumped as kernel
// mamba3_prefill under preset_for(contract), with the emulation's outputs (`o` without its bug) when
// the failure carries none.
void run_prefill_case(const ssmv::mamba3::Problem& p, const bound::mamba3::PrefillEmulationOptions& o,
                      const ssmv::mamba3::PrefillContract& contract,
                      const std::function<std::optional<StepFailure>()>& body);

// One case of "the prefill emulation under `base` (plus what `drawn` draws) is within
// prefill_bounds under matching_contract": a problem drawn by prefill_problem(), its chunk size,
// emulated, the certified run, the bound, every element judged.
void prefill_within_contract(const bound::mamba3::PrefillEmulationOptions& base, const std::string& what,
                             const DrawnOptions& drawn = {});

// The prefill→decode hand-off emulated: for every (sequence, head) pair its first min(K, len)
// tokens through emulate_prefill(`prefill`), the rest through emulate_steps(`decode`) from the state
// the prefill returned with `dropped` zeroed (a planted bug; none: handed over whole). `pairs`: each
// pair's outputs in its own layouts (certified_trace.h pair_problem), sequence-major; `whole`: the
// same placed in the problem's layouts.
struct HandedOff {
  Outputs whole;
  std::vector<Outputs> pairs;
};
HandedOff emulate_prefill_then_steps(const ssmv::mamba3::Problem& p, int64_t K,
                                     const bound::mamba3::PrefillEmulationOptions& prefill,
                                     const bound::mamba3::EmulationOptions& decode, StatePart dropped = StatePart::none);

// One case of "the hand-off is within handoff_bounds" (prefill_host_emulation(), then the step's
// host_emulation()): a problem of sequences of at least 2 tokens, its chunk size, K in [1, longest
// − 1] (a shorter sequence goes through the prefill alone), fused drawn, each pair judged against
// its own certified run; a failure is dumped as kernel mamba3_handoff (prefill_tokens K).
void handoff_within_contract(StatePart dropped, const std::string& what);

}  // namespace ssmv::prop::mamba3
