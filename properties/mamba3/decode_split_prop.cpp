// Mamba-3 SISO, property (c): the certified reference's decode split. reference/mamba3/
// reference.h promises identical bits in every returned value (hi, lo, magnitude and the
// roundings to fp32, bf16 and fp16) whether a sequence runs in one compute() call or in
// compute() over its first k tokens followed by decode() over the rest from the carried
// four-part state (angle, S, B_prev, x_prev): the hand-off from one call to the next. Checked
// for drawn split points k_s in [1, len_s − 1] per sequence, and for the step check's chain of
// one-token calls (verify/family/mamba3/certified_trace.h: compute() on a sequence's first token,
// then decode() token by token), against compute() over the whole problem.
//
// Case counts (base; ×100 in campaign mode): 3000.
#include "properties/harness/feature_count.h"
#include "properties/harness/property.h"
#include "properties/mamba3/handoff.h"
#include "properties/mamba3/step_check.h"
#include "properties/mamba3/step_gen.h"
#include "reference/mamba3/reference.h"
#include "verify/family/mamba3/certified_trace.h"

namespace ssmv::prop::mamba3 {

using ref::mamba3::CertifiedValues;

SSMV_PROPERTY(Mamba3PropertyDecodeSplit, ComputeThenDecodeSameBits, 3000, ()) {
  StepOptions o;
  o.min_len = 2;
  const GeneratedStep g = *step_problem(o);
  label_case(g);
  const ssmv::mamba3::Problem& p = g.problem;
  const std::vector<int64_t> k = draw_split(p), len = sequence_lengths(p), zero(len.size(), 0);
  for (size_t s = 0; s < k.size(); ++s) count_label(k[s] == 1 ? "split_after_first" : k[s] + 1 == len[s] ? "split_before_last" : "split_inside");
  run_step_case(p, [&]() -> std::optional<StepFailure> {
    const ref::mamba3::Result whole = ref::mamba3::compute(p);
    const ssmv::mamba3::Problem first_tokens = tokens(p, zero, k), rest = tokens(p, k, len);
    const ref::mamba3::Result first = ref::mamba3::compute(first_tokens);
    const ref::mamba3::Result second = ref::mamba3::decode(rest, first.carried);
    const size_t row = size_t(p.shape.H * p.shape.P);
    for (int64_t s = 0; s < p.shape.num_sequences(); ++s) {
      const size_t at = size_t(p.shape.cu_seqlens[size_t(s)]), ks = size_t(k[size_t(s)]);
      const std::string seq = " (sequence " + std::to_string(s) + ", k " + std::to_string(ks) + ")";
      if (auto f = same_values("y: compute over [0, T) vs compute over [0, k)" + seq, whole.y, at * row, first.y,
                               size_t(first_tokens.shape.cu_seqlens[size_t(s)]) * row, ks * row)) {
        return f;
      }
      if (auto f = same_values("y: compute over [0, T) vs decode over [k, T)" + seq, whole.y, (at + ks) * row,
                               second.y, size_t(rest.shape.cu_seqlens[size_t(s)]) * row,
                               (size_t(len[size_t(s)]) - ks) * row)) {
        return f;
      }
    }
    const std::pair<const char*, std::pair<const CertifiedValues*, const CertifiedValues*>> parts[] = {
        {"final angle", {&whole.angle_state, &second.angle_state}},
        {"final S", {&whole.state, &second.state}},
        {"final B_prev", {&whole.B_prev, &second.B_prev}},
        {"final x_prev", {&whole.x_prev, &second.x_prev}}};
    for (const auto& [name, ab] : parts) {
      if (auto f = same_values_whole(std::string(name) + ": compute over [0, T) vs decode over [k, T)", *ab.first, *ab.second)) {
        return f;
      }
    }
    // The one-token chain of the step kernel's check.
    const family::mamba3::CertifiedRun chain = family::mamba3::certified_run(p);
    if (auto f = same_values_whole("y: compute vs one-token chain", whole.y, chain.y)) return f;
    if (auto f = same_values_whole("final angle: compute vs one-token chain", whole.angle_state, chain.angle)) return f;
    if (auto f = same_values_whole("final S: compute vs one-token chain", whole.state, chain.S)) return f;
    if (auto f = same_values_whole("final B_prev: compute vs one-token chain", whole.B_prev, chain.B_prev)) return f;
    return same_values_whole("final x_prev: compute vs one-token chain", whole.x_prev, chain.x_prev);
  });
}

}  // namespace ssmv::prop::mamba3
