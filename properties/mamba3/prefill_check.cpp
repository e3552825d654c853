#include "properties/mamba3/prefill_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <utility>

#include "properties/gen/choice.h"
#include "properties/harness/feature_count.h"
#include "properties/harness/settings.h"
#include "verify/bound/mamba3/prefill_bound.h"
#include "verify/bound/mamba3/prefill_contract.h"
#include "verify/bound/mamba3/step_contract.h"
#include "verify/family/mamba3/handoff.h"
#include "verify/judge/verdict.h"

namespace ssmv::prop::mamba3 {
namespace {

using ssmv::mamba3::PrefillContract;
using bound::mamba3::PrefillEmulationOptions;
using family::mamba3::CertifiedRun;
using ssmv::mamba3::Problem;

constexpr double kTwoPi = 6.283185307179586;  // RN(2π), 2.4e-16 below it

// "(token t, head h, dim d)" of element i of y, "(sequence s, head h, j)" of a state part with
// `inner` elements per head.
std::string coordinates(const Problem& p, size_t i, int64_t inner, bool is_y) {
  const int64_t H = p.shape.H, P = p.shape.P, k = int64_t(i);
  char buf[96];
  if (is_y) {
    std::snprintf(buf, sizeof buf, "(token %lld, head %lld, dim %lld)", (long long)(k / (H * P)),
                  (long long)(k / P % H), (long long)(k % P));
  } else {
    std::snprintf(buf, sizeof buf, "(sequence %lld, head %lld, %lld)", (long long)(k / (H * inner)),
                  (long long)(k / inner % H), (long long)(k % inner));
  }
  return buf;
}

}  // namespace

StepOptions prefill_step_options() {
  StepOptions o;
  o.max_len = 20;
  o.long_share = 6;
  return o;
}

rc::Gen<int64_t> chunk_size(std::optional<int64_t> except) {
  std::vector<int64_t> sizes;
  for (int64_t L : kChunkSizes) {
    if (L != except) sizes.push_back(L);
  }
  // At full size: rapidcheck scales inRange's draws by the case's size, which starts small.
  return rc::gen::resize(kMaxSize, choice_of(sizes));
}

rc::Gen<GeneratedPrefill> prefill_problem(const StepOptions& o) {
  return rc::gen::exec([o] {
    const int64_t chunk = *chunk_size();  // first: shrinking the problem keeps it
    GeneratedStep g = *step_problem(o);
    return GeneratedPrefill{std::move(g.problem), chunk};
  });
}

void label_prefill_case(const GeneratedPrefill& g) {
  label_problem(g.problem);
  count_label("chunk_" + std::to_string(g.chunk));
  bool longer = false, partial = false;
  for (int64_t s = 0; s < g.problem.shape.num_sequences(); ++s) {
    const int64_t len = g.problem.shape.seq_len(s);
    longer |= len > g.chunk;
    partial |= len > g.chunk && len % g.chunk != 0;
  }
  if (longer) count_label("sequence_longer_than_chunk");
  if (partial) count_label("partial_last_chunk");
}

void showValue(const GeneratedPrefill& g, std::ostream& os) {
  os << "{chunk_size=" << g.chunk << " " << describe(g.problem) << "}";
}

PrefillContract matching_contract(const PrefillEmulationOptions& o) {
  PrefillContract c = bound::mamba3::prefill_host_emulation();
  if (o.angle_store != c.angle_store) c.name += " with angle_store " + std::string(format_name(o.angle_store));
  if (o.qk_dot_tf32 != c.qk_dot_tf32) c.name += o.qk_dot_tf32 ? " with qk_dot_tf32" : " without qk_dot_tf32";
  c.angle_store = o.angle_store;
  c.qk_dot_tf32 = o.qk_dot_tf32;
  return c;
}

std::string preset_for(const PrefillContract& c) {
  if (c.angle_store == Format::fp32) return bound::mamba3::prefill_fp32_angles().name;
  if (c.qk_dot_tf32) return bound::mamba3::prefill_production_h200().name;
  return bound::mamba3::prefill_host_emulation().name;
}

bound::mamba3::ExactTrace trace_for_chunks(const bound::mamba3::ExactTrace& t, const ssmv::mamba3::Shape& sh,
                                           int64_t chunk) {
  bound::mamba3::ExactTrace o;
  o.angle = t.angle;
  o.angle_error = t.angle_error;
  o.y_abs = t.y_abs;
  const size_t row = size_t(sh.H * sh.P * sh.N);
  for (int64_t s = 0; s < sh.num_sequences(); ++s) {
    for (int64_t local = 0; local < sh.seq_len(s); ++local) {
      if ((local + 1) % chunk != 0 && local + 1 != sh.seq_len(s)) continue;
      const auto at = t.S_abs.begin() + std::ptrdiff_t(size_t(sh.cu_seqlens[size_t(s)] + local) * row);
      o.S_abs.insert(o.S_abs.end(), at, at + std::ptrdiff_t(row));
    }
  }
  return o;
}

std::optional<StepFailure> within_bounds(const Problem& p, const Outputs& out, const CertifiedRun& exact,
                                         const bound::mamba3::StepBounds& b, const std::string& what, double& usage) {
  const ssmv::mamba3::Shape& sh = p.shape;
  struct Part {
    const char* name;
    Format format;
    const std::vector<float>& computed;
    const ref::mamba3::CertifiedValues& exact;
    const std::vector<double>& bound;
    int64_t inner;  // elements per head of a state part (0: y)
    bool circular;  // the angle: judged on the circle
  };
  const Part parts[] = {{"y", p.formats.output, out.y, exact.y, b.y, 0, false},
                        {"final_angle_state", Format::fp32, out.final_state.angle, exact.angle, b.angle, sh.R, true},
                        {"final_state", p.formats.state, out.final_state.S, exact.S, b.S, sh.P * sh.N, false},
                        {"final_B_prev", p.formats.state, out.final_state.B_prev, exact.B_prev, b.B_prev, sh.N, false},
                        {"final_x_prev", p.formats.state, out.final_state.x_prev, exact.x_prev, b.x_prev, sh.P, false}};
  int64_t judged = 0, failed = 0;
  double worst_usage = 0;
  std::string worst, verdict;
  for (const Part& part : parts) {
    if (part.computed.size() != part.exact.size() || part.bound.size() != part.exact.size()) {
      return StepFailure{"INVALID", std::string(part.name) + ": sizes differ",
                         what + ": " + part.name + "'s output, exact values and bounds differ in length", out};
    }
    for (size_t k = 0; k < part.exact.size(); ++k) {
      const float c = part.computed[k];
      double exact_value = part.exact.hi[k] + part.exact.lo[k];
      double error = family::mamba3::certified_error(part.exact, k);
      Bits exact_rounded = part.exact.rounded(part.format, k);
      if (part.circular && std::isfinite(c)) {
        // The representative θ + 2π·turns nearest the kernel's value; the double sum's rounding
        // (|value| < 16: 2^-49) and RN(2π)'s error (below 2^-51 a turn) are charged.
        const double turns = std::nearbyint((double(c) - exact_value) / kTwoPi);
        if (turns != 0) {
          exact_value += turns * kTwoPi;
          error += std::fabs(turns) * 0x1p-51 + 0x1p-49;
          exact_rounded = round_nearest_even(part.format, exact_value);
        }
      }
      const verify::ElementJudgement j = verify::judge(part.format, round_nearest_even(part.format, double(c)),
                                                       exact_rounded, exact_value, error, part.bound[k]);
      ++judged;
      usage = std::max(usage, j.bound_usage);
      if (j.verdict != verify::Verdict::violation && j.verdict != verify::Verdict::invalid) continue;
      if (failed++ == 0 || j.bound_usage > worst_usage) {
        worst_usage = j.bound_usage;
        verdict = std::string(verify::verdict_name(j.verdict));
        char buf[256];
        std::snprintf(buf, sizeof buf, "%s[%zu] %s: computed %a, exact %.17g, error %.6g > bound %.6g (%.4g times)",
                      part.name, k, coordinates(p, k, part.inner, part.inner == 0).c_str(), double(c),
                      exact_value, j.error, part.bound[k], j.bound_usage);
        worst = buf;
      }
    }
  }
  if (judged == 0) return StepFailure{"INVALID", "no elements", what + ": no element judged (a vacuous case)", out};
  if (failed == 0) return std::nullopt;
  return StepFailure{verdict, worst,
                     what + ": " + std::to_string(failed) + " of " + std::to_string(judged) + " elements beyond their bounds",
                     out};
}

void draw_options(PrefillEmulationOptions& o, const DrawnOptions& drawn) {
  if (drawn.fused) o.fused = *rc::gen::arbitrary<bool>();
  if (drawn.qk_dot_tf32) o.qk_dot_tf32 = *rc::gen::arbitrary<bool>();
  if (drawn.fp32_angles && *rc::gen::arbitrary<bool>()) o.angle_store = Format::fp32;
  count_label(o.fused ? "fused" : "unfused");
  if (o.qk_dot_tf32) count_label("qk_dot_tf32");
  count_label("angle_store_" + std::string(format_name(o.angle_store)));
}

void run_prefill_case(const Problem& p, const PrefillEmulationOptions& o, const PrefillContract& contract,
                      const std::function<std::optional<StepFailure>()>& body) {
  DumpSpec spec;
  spec.options = dump_options(p, family::mamba3::kPrefillKernel, preset_for(contract));
  spec.options.chunk_size = o.chunk_size;
  PrefillEmulationOptions honest = o;
  honest.bug = bound::mamba3::PrefillBug::none;
  spec.honest = [&p, honest] { return outputs_of(bound::mamba3::emulate_prefill(p, honest)); };
  run_case_dumping(p, spec, body);
}

void prefill_within_contract(const PrefillEmulationOptions& base, const std::string& what, const DrawnOptions& drawn) {
  const GeneratedPrefill g = *prefill_problem();
  label_prefill_case(g);
  PrefillEmulationOptions o = base;
  o.chunk_size = g.chunk;
  draw_options(o, drawn);
  const PrefillContract c = matching_contract(o);
  run_prefill_case(g.problem, o, c, [&] {
    const Outputs out = outputs_of(bound::mamba3::emulate_prefill(g.problem, o));
    const CertifiedRun run = family::mamba3::certified_run(g.problem, 1, g.chunk);
    double usage = 0;
    auto failure = within_bounds(g.problem, out, run, bound::mamba3::prefill_bounds(g.problem, g.chunk, c, run.trace),
                                 what + " under " + c.name + ", chunk " + std::to_string(g.chunk), usage);
    count_bound_usage(usage, !failure);
    return failure;
  });
}

HandedOff emulate_prefill_then_steps(const Problem& p, int64_t K, const PrefillEmulationOptions& prefill,
                                     const bound::mamba3::EmulationOptions& decode, StatePart dropped) {
  const ssmv::mamba3::Shape& sh = p.shape;
  const int64_t H = sh.H, P = sh.P, N = sh.N, R = sh.R, S = sh.num_sequences();
  HandedOff r;
  r.whole.y.assign(p.x.size(), 0.0f);
  r.whole.final_state = {std::vector<float>(size_t(S * H * R)), std::vector<float>(size_t(S * H * P * N)),
                         std::vector<float>(size_t(S * H * N)), std::vector<float>(size_t(S * H * P))};
  for (int64_t s = 0; s < S; ++s) {
    for (int64_t h = 0; h < H; ++h) {
      const Problem pair = family::mamba3::pair_problem(p, s, h);
      const int64_t T = sh.seq_len(s), k = std::min(K, T);
      bound::mamba3::EmulatedSteps e =
          bound::mamba3::emulate_prefill(family::mamba3::pair_tokens(pair, 0, 0, 0, k, true), prefill);
      if (k < T) {
        Problem dec = family::mamba3::pair_tokens(pair, 0, 0, k, T - k, false);
        dec.initial = {e.angle, e.S, e.B_prev, e.x_prev};  // what the step kernel is given
        drop_part(dec.initial, dropped);
        bound::mamba3::EmulatedSteps d = bound::mamba3::emulate_steps(dec, decode);
        d.y.insert(d.y.begin(), e.y.begin(), e.y.end());
        e = std::move(d);
      }
      Outputs o = outputs_of(e);
      for (int64_t t = 0; t < T; ++t) {
        std::copy_n(o.y.begin() + t * P, P, r.whole.y.begin() + p.x_index(sh.cu_seqlens[size_t(s)] + t, h, 0));
      }
      ssmv::mamba3::FourPartState& f = r.whole.final_state;
      std::copy(o.final_state.angle.begin(), o.final_state.angle.end(), f.angle.begin() + p.angle_state_index(s, h, 0));
      std::copy(o.final_state.S.begin(), o.final_state.S.end(), f.S.begin() + p.state_index(s, h, 0, 0));
      std::copy(o.final_state.B_prev.begin(), o.final_state.B_prev.end(), f.B_prev.begin() + p.b_prev_index(s, h, 0));
      std::copy(o.final_state.x_prev.begin(), o.final_state.x_prev.end(), f.x_prev.begin() + p.x_prev_index(s, h, 0));
      r.pairs.push_back(std::move(o));
    }
  }
  return r;
}

void handoff_within_contract(StatePart dropped, const std::string& what) {
  StepOptions so = prefill_step_options();
  so.min_len = 2;
  const GeneratedPrefill g = *prefill_problem(so);
  label_prefill_case(g);
  const Problem& p = g.problem;
  int64_t longest = 0;
  for (int64_t s = 0; s < p.shape.num_sequences(); ++s) longest = std::max(longest, p.shape.seq_len(s));
  const int64_t K = *rc::gen::inRange<int64_t>(1, longest);  // shrinks toward 1
  PrefillEmulationOptions po;
  po.chunk_size = g.chunk;
  draw_options(po, {.fused = true});
  bound::mamba3::EmulationOptions decode;
  decode.fused = po.fused;
  count_label(K % g.chunk == 0 ? "K_at_a_chunk_end" : "K_inside_a_chunk");
  if (K > g.chunk) count_label("K_over_several_chunks");
  for (int64_t s = 0; s < p.shape.num_sequences(); ++s) {
    if (p.shape.seq_len(s) <= K) count_label("a_sequence_prefill_only");
  }

  const family::mamba3::Handoff h{K, g.chunk, bound::mamba3::prefill_host_emulation(), bound::mamba3::host_emulation()};
  DumpSpec spec;
  spec.options = dump_options(p, family::mamba3::kHandoffKernel, h.prefill.name);
  spec.options.chunk_size = g.chunk;
  spec.options.prefill_tokens = K;
  spec.options.decode_contract = h.decode.name;
  spec.honest = [&] { return emulate_prefill_then_steps(p, K, po, decode).whole; };
  run_case_dumping(p, spec, [&]() -> std::optional<StepFailure> {
    const HandedOff e = emulate_prefill_then_steps(p, K, po, decode, dropped);
    double usage = 0;
    std::optional<StepFailure> failure;
    for (int64_t s = 0, i = 0; s < p.shape.num_sequences() && !failure; ++s) {
      for (int64_t hh = 0; hh < p.shape.H && !failure; ++hh, ++i) {
        const Problem pair = family::mamba3::pair_problem(p, s, hh);
        const CertifiedRun run = family::mamba3::certified_run(pair, 1, h.grid());
        failure = within_bounds(pair, e.pairs[size_t(i)], run, family::mamba3::handoff_bounds(pair, h, run.trace),
                                what + " under " + h.prefill.name + " then " + h.decode.name + ", chunk " +
                                    std::to_string(g.chunk) + ", K " + std::to_string(K) + "; sequence " +
                                    std::to_string(s) + ", head " + std::to_string(hh) + " (the pair's layouts)",
                                usage);
      }
    }
    count_bound_usage(usage, !failure);
    if (failure) failure->dumped = e.whole;
    return failure;
  });
}

}  // namespace ssmv::prop::mamba3
