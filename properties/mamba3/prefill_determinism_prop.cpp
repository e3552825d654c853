// Mamba-3 SISO chunked prefill, determinism:
//   EmulationAndBound     emulate_prefill run twice on one problem gives the same bits in y and
//                         the returned four-part state (options drawn: fused, tf32 diagonal, fp32
//                         angles), and prefill_bounds twice from one certified trace the same bits
//                         in every bound (angle_abs too);
//   CertifiedRunThreads   certified_run with 1 and with 2 worker threads gives the same bits in
//                         every field of y and of the final four-part state (hi, lo, magnitude, the
//                         fp32/bf16/fp16 roundings) and of the trace (angle, its error, |y|, |S| at
//                         the chunk ends), and the trace with |S| after every token restricted to the
//                         chunk ends (prefill_check.h trace_for_chunks, what the chunk-size and
//                         planted suites use) equals the trace kept at those ends. (The step suites
//                         run the reference with one thread only; decode_split_prop.cpp holds
//                         compute() = decode() chains.)
//
// Case counts (base; ×100 in campaign mode): 500, 250.
#include "properties/harness/property.h"
#include "properties/mamba3/prefill_check.h"
#include "verify/bound/mamba3/prefill_bound.h"

namespace ssmv::prop::mamba3 {
namespace {

using bound::mamba3::ExactTrace;
using family::mamba3::CertifiedRun;

std::optional<StepFailure> same_trace(const std::string& what, const ExactTrace& a, const ExactTrace& b) {
  if (auto f = same_bits(what + " angle", a.angle, b.angle)) return f;
  if (auto f = same_bits(what + " angle_error", a.angle_error, b.angle_error)) return f;
  if (auto f = same_bits(what + " S_abs", a.S_abs, b.S_abs)) return f;
  return same_bits(what + " y_abs", a.y_abs, b.y_abs);
}

}  // namespace

SSMV_PROPERTY(Mamba3PrefillPropertyDeterminism, EmulationAndBound, 500, ()) {
  const GeneratedPrefill g = *prefill_problem();
  label_prefill_case(g);
  bound::mamba3::PrefillEmulationOptions o;
  o.chunk_size = g.chunk;
  draw_options(o, {.fused = true, .qk_dot_tf32 = true, .fp32_angles = true});
  const ssmv::mamba3::Problem& p = g.problem;
  const ssmv::mamba3::PrefillContract c = matching_contract(o);
  run_prefill_case(p, o, c, [&]() -> std::optional<StepFailure> {
    if (auto f = same_parts("emulation, run 1 vs run 2:", bound::mamba3::emulate_prefill(p, o),
                            bound::mamba3::emulate_prefill(p, o))) {
      return f;
    }
    const CertifiedRun run = family::mamba3::certified_run(p, 1, g.chunk);
    const bound::mamba3::StepBounds b1 = bound::mamba3::prefill_bounds(p, g.chunk, c, run.trace),
                                    b2 = bound::mamba3::prefill_bounds(p, g.chunk, c, run.trace);
    if (auto f = same_parts(c.name + " bound, run 1 vs run 2:", b1, b2)) return f;
    return same_bits(c.name + " bound, run 1 vs run 2: angle_abs", b1.angle_abs, b2.angle_abs);
  });
}

SSMV_PROPERTY(Mamba3PrefillPropertyDeterminism, CertifiedRunThreads, 250, ()) {
  const GeneratedPrefill g = *prefill_problem();
  label_prefill_case(g);
  const ssmv::mamba3::Problem& p = g.problem;
  bound::mamba3::PrefillEmulationOptions o;
  o.chunk_size = g.chunk;
  run_prefill_case(p, o, matching_contract(o), [&]() -> std::optional<StepFailure> {
    const CertifiedRun one = family::mamba3::certified_run(p, 1, g.chunk), two = family::mamba3::certified_run(p, 2, g.chunk);
    const std::string what = "certified_run, 1 vs 2 threads:";
    if (auto f = same_values_whole(what + " y", one.y, two.y)) return f;
    if (auto f = same_values_whole(what + " final angle", one.angle, two.angle)) return f;
    if (auto f = same_values_whole(what + " final S", one.S, two.S)) return f;
    if (auto f = same_values_whole(what + " final B_prev", one.B_prev, two.B_prev)) return f;
    if (auto f = same_values_whole(what + " final x_prev", one.x_prev, two.x_prev)) return f;
    if (one.check_precision_bits != two.check_precision_bits) {
      return StepFailure{"VIOLATION", "check_precision_bits", what + " check precisions differ", {}};
    }
    if (auto f = same_trace(what + " trace", one.trace, two.trace)) return f;
    const CertifiedRun every = family::mamba3::certified_run(p, 1, 1);
    return same_trace("the trace at chunk ends vs the every-token trace restricted to them:", one.trace,
                      trace_for_chunks(every.trace, p.shape, g.chunk));
  });
}

}  // namespace ssmv::prop::mamba3
