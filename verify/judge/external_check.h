// Judging a kernel written elsewhere from its dumped outputs: a decode (sequential family),
// a chunked prefill, or a prefill/decode hand-off of the two. No kernel runs here; the
// outputs are judged against the certified reference and the contract's bound.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "spec/contract.h"
#include "spec/format_values.h"
#include "spec/problem.h"
#include "verify/bound/source.h"
#include "verify/judge/check_result.h"
#include "verify/judge/judging_feed.h"
#include "verify/judge/tensor_judge.h"

namespace ssmv::verify {

// The worst elements' bound attribution of a check (each tensor's worst_bound_sources,
// worst_sources.h), handed back by a check asked to defer it instead of run at its end: it
// reads only the problem, the contract and what the check kept for it (δ per token and head,
// the worst y element), so it can run beside the sharp verdict, whose fields of the report it
// does not touch (ssmv check: a tenth of a second on chunk_scan 1 × 8192 H 32, half a second on
// 1 × 65,536 H 8, on one core while the others idled). Call it once, with the KernelCheck the
// check returned; the problem, the contract and the source weights, if any, must still be
// alive. It declares no progress phase and counts no progress (one phase runs at a time: its
// time counts in the phase it runs beside).
using DeferredAttribution = std::function<void(KernelCheck&)>;

// An external kernel's outputs (values of the problem's output and state formats; NaN and
// Inf allowed, judged INVALID), judged under `contract`: the sequential family as a decode
// kernel launched on `tokens_per_launch` tokens of every sequence at a time (the state
// carried in fp32 within a launch and stored in the state format at its end; 1: after every
// token),
// the chunked family with the contract's chunk size. `final_states` may be empty. The
// sequential family is judged as the reference streams its outputs, without keeping an
// exact value per element; `detail` says whether the reports keep their per-element vectors
// (side-by-side comparisons need them; a summary does not). `deferred` (optional) receives the
// attribution instead of the check running it (left empty for a hand-off, whose attribution
// runs in the check). `feed` (optional; detail other than summary) is opened with the judges'
// sharp weights and told each pair's progress as it is judged, for a reader beside the check
// (judging_feed.h); the caller closes it.
KernelCheck check_outputs(const Problem& p, const Contract& contract, const std::string& kernel,
                          const FormatValues& y, const FormatValues& final_states,
                          ElementDetail detail = ElementDetail::elements, int64_t tokens_per_launch = 1,
                          const bound::SourceWeights* weights = nullptr, DeferredAttribution* deferred = nullptr,
                          JudgingFeed* feed = nullptr);

// An external prefill/decode hand-off's outputs: the first prefill[s] tokens of sequence s
// through a chunked kernel under `chunked`, the rest through a decode kernel launched once
// per token under `decode`, starting from the state the chunked kernel stored in the
// state format. y [T, H, P] of both parts; final_states (may be empty) after the last token.
// Streamed (HandoffStream, verify/judge/handoff.h): no exact value and no bound is kept per
// element beyond what `detail` asks for; the verdicts and attribution are those of bounding
// and judging compute()'s whole result (check_outputs_test).
KernelCheck check_handoff_outputs(const Problem& p, const std::vector<int64_t>& prefill, const Contract& chunked,
                                  const Contract& decode, const std::string& kernel, const FormatValues& y,
                                  const FormatValues& final_states,
                                  ElementDetail detail = ElementDetail::elements);

// What produced a dump. family "ssu": a decode kernel launched once per token (the state
// stored in the state format after every token) under `contract` (sequential family);
// "chunk_scan": a chunked prefill under `contract` (chunked family); "handoff": the first
// prefill_tokens[s] tokens of sequence s through the chunked kernel under `contract`, its
// final state stored in the state format and continued by the decode kernel under
// `decode_contract`, one launch per token.
struct ExternalKernel {
  std::string family;                   // "ssu", "chunk_scan", "handoff"
  std::string name;                     // printed as the report's kernel (default: family)
  Contract contract;
  Contract decode_contract;             // handoff only
  std::vector<int64_t> prefill_tokens;  // handoff only: [S]
  // ssu only: tokens of every sequence per launch (the state stored at each launch's end,
  // docs/bounds.md [2.6]); every sequence's length must be a multiple of it. 1: one token a
  // launch (the decode kernels of mamba_ssm and vLLM, FlashInfer's single-token path).
  int64_t tokens_per_launch = 1;
};

// Throws ProblemError naming the field and value: an unknown family, a contract of the
// wrong family for its part, prefill tokens missing / outside a sequence / given to a
// family other than handoff, outputs whose sizes disagree with the problem, tokens_per_launch
// below 1, above 1 for a family other than ssu, or not dividing a sequence's length.
void validate_external(const Problem& p, const ExternalKernel& k);

// y [T, H, P] (output format) and final_states [S, H, P, N] (state format, may be empty);
// NaN and Inf are judged INVALID.
// `weights` (sequential family only; null: the rigorous bound) scales the bound's sources
// (verify/bound/source.h): a what-if whose verdicts are no longer rigorous, e.g. the bound
// without its stochastic stores for the bias test (stochastic_bias.h).
// `feed` (optional; not for a hand-off): as check_outputs', and closed here when the check ends,
// completed or stopped by an error.
KernelCheck check_external(const Problem& p, const ExternalKernel& k, const FormatValues& y,
                           const FormatValues& final_states, ElementDetail detail = ElementDetail::elements,
                           const bound::SourceWeights* weights = nullptr, DeferredAttribution* deferred = nullptr,
                           JudgingFeed* feed = nullptr);

}  // namespace ssmv::verify
