// Mamba-3 SISO chunked prefill, chunk-size invariance: the exact recurrence does not depend on the
// chunk size, so two runs of the prefill's host emulation on one problem with two different chunk
// sizes L1, L2 (from {1, 2, 3, 4, 8, 16, 64}) are each within their own bound (prefill_bounds under
// matching_contract, chunk L1 and L2) and differ from each other, element by element, by at most
// the sum of the two bounds (each bounds the distance from the same exact value; the triangle
// inequality): y, the final S, B_prev, x_prev, and the angle on the circle. Both runs with the same
// drawn options (fused or not, tf32 diagonal or not). The relation is derived from the bounds, no
// tolerance of its own; it holds whatever the reference says, the per-run checks hold the bounds.
// One certified run per case (|S| after every token) gives both chunk sizes' traces
// (prefill_check.h trace_for_chunks; the determinism suite checks they are certified_run's).
//
// Case counts (base; ×100 in campaign mode): 400.
#include <cmath>
#include <cstdio>

#include "properties/harness/property.h"
#include "properties/mamba3/prefill_check.h"
#include "properties/relations/agreement.h"
#include "verify/bound/mamba3/prefill_bound.h"

namespace ssmv::prop::mamba3 {
namespace {

using bound::mamba3::PrefillEmulationOptions;
using bound::mamba3::StepBounds;

std::optional<StepFailure> from_relation(std::optional<CaseFailure> f) {
  if (!f) return std::nullopt;
  return StepFailure{f->verdict, f->worst, f->message, {}};
}

// The angles a and b on the circle: their distance (computed in double, nudged up by 2^-40
// relative and 2^-49 absolute for its roundings and RN(2π)'s) within bound_a + bound_b.
std::optional<StepFailure> angles_agree(const std::string& what, const std::vector<float>& a,
                                        const std::vector<double>& bound_a, const std::vector<float>& b,
                                        const std::vector<double>& bound_b) {
  const double two_pi = 6.283185307179586;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::fmod(std::fabs(double(a[i]) - double(b[i])), two_pi);
    const double distance = std::min(d, two_pi - d) * (1 + 0x1p-40) + 0x1p-49;
    if (distance <= bound_a[i] + bound_b[i]) continue;
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s[%zu]: %a vs %a, distance on the circle %a > allowed %a (bounds %a + %a)",
                  what.c_str(), i, double(a[i]), double(b[i]), distance, bound_a[i] + bound_b[i], bound_a[i],
                  bound_b[i]);
    return StepFailure{"VIOLATION", buf, what + ": the two runs differ by more than their bounds allow", {}};
  }
  return std::nullopt;
}

}  // namespace

SSMV_PROPERTY(Mamba3PrefillPropertyChunkSize, WithinSumOfBounds, 400, ()) {
  const GeneratedPrefill g = *prefill_problem();
  label_prefill_case(g);
  const int64_t L1 = g.chunk, L2 = *chunk_size(L1);
  count_label("second_chunk_" + std::to_string(L2));
  PrefillEmulationOptions o1;
  o1.chunk_size = L1;
  draw_options(o1, {.fused = true, .qk_dot_tf32 = true});
  PrefillEmulationOptions o2 = o1;
  o2.chunk_size = L2;
  const ssmv::mamba3::Problem& p = g.problem;
  const ssmv::mamba3::PrefillContract c = matching_contract(o1);
  run_prefill_case(p, o1, c, [&]() -> std::optional<StepFailure> {
    const Outputs e1 = outputs_of(bound::mamba3::emulate_prefill(p, o1));
    const Outputs e2 = outputs_of(bound::mamba3::emulate_prefill(p, o2));
    const family::mamba3::CertifiedRun run = family::mamba3::certified_run(p, 1, 1);
    const StepBounds b1 = bound::mamba3::prefill_bounds(p, L1, c, trace_for_chunks(run.trace, p.shape, L1));
    const StepBounds b2 = bound::mamba3::prefill_bounds(p, L2, c, trace_for_chunks(run.trace, p.shape, L2));
    const std::string what = " under " + c.name + ", chunk ";
    double usage = 0;
    std::optional<StepFailure> f = within_bounds(p, e1, run, b1, "the prefill's emulation" + what + std::to_string(L1), usage);
    if (!f) f = within_bounds(p, e2, run, b2, "the prefill's emulation" + what + std::to_string(L2), usage);
    count_bound_usage(usage, !f);
    if (f) return f;
    const std::string runs = "chunk " + std::to_string(L1) + " vs chunk " + std::to_string(L2) + ": ";
    const ssmv::mamba3::FourPartState &s1 = e1.final_state, &s2 = e2.final_state;
    if (auto r = from_relation(agree_within(runs + "y", e1.y, b1.y, e2.y, b2.y))) return r;
    if (auto r = angles_agree(runs + "final angle", s1.angle, b1.angle, s2.angle, b2.angle)) return r;
    if (auto r = from_relation(agree_within(runs + "final S", s1.S, b1.S, s2.S, b2.S))) return r;
    if (auto r = from_relation(agree_within(runs + "final B_prev", s1.B_prev, b1.B_prev, s2.B_prev, b2.B_prev))) {
      return r;
    }
    return from_relation(agree_within(runs + "final x_prev", s1.x_prev, b1.x_prev, s2.x_prev, b2.x_prev));
  });
}

}  // namespace ssmv::prop::mamba3
