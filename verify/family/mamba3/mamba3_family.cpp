#include "verify/family/mamba3/mamba3_family.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>

#include "spec/parallel.h"
#include "spec/progress.h"
#include "verify/bound/mamba3/bound_terms.h"  // kPi
#include "verify/bound/mamba3/prefill_bound.h"
#include "verify/bound/mamba3/step_bound.h"
#include "verify/cli/usage_error.h"
#include "verify/family/hints.h"
#include "verify/family/problem_difference.h"
#include "verify/family/mamba3/bounds_rows.h"
#include "verify/family/mamba3/certified_trace.h"
#include "verify/family/mamba3/contracts.h"
#include "verify/family/mamba3/dump_reading.h"
#include "verify/family/mamba3/handoff.h"
#include "verify/family/mamba3/sharp.h"
#include "verify/sharp/calibrated_test.h"
#include "verify/judge/tensor_judge.h"

namespace ssmv::family::mamba3 {
namespace {

using ssmv::mamba3::Problem;
using ref::mamba3::CertifiedValues;

// The judged tensors' names, in sharp.h's Part order.
constexpr std::array<const char*, kParts> kPartNames = {"y", "final_angle_state", "final_state", "final_B_prev",
                                                        "final_x_prev"};

// The sequence of packed token t.
int64_t sequence_of(const Problem& p, int64_t t) {
  const std::vector<int64_t>& cu = p.shape.cu_seqlens;
  return int64_t(std::upper_bound(cu.begin(), cu.end(), t) - cu.begin()) - 1;
}

// y [T, H, P] as (sequence, token in its sequence, head, dim).
verify::TensorLayout y_layout(const Problem& p) {
  const int64_t T = p.shape.num_tokens(), H = p.shape.H, P = p.shape.P;
  return {{"sequence", "token", "head", "dim"}, {T, H, P}, [&p, H, P](int64_t i) {
            const int64_t t = i / (H * P), s = sequence_of(p, t);
            return std::vector<int64_t>{s, t - p.shape.cu_seqlens[size_t(s)], (i / P) % H, i % P};
          }};
}

// A final-state part [S, H, rest...] as (sequence, head, rest...); `inner` the trailing dims.
verify::TensorLayout state_layout(const Problem& p, std::vector<std::string> names, std::vector<int64_t> inner) {
  std::vector<int64_t> dims = {p.shape.num_sequences(), p.shape.H};
  dims.insert(dims.end(), inner.begin(), inner.end());
  return {std::move(names), dims, [dims](int64_t i) {
            std::vector<int64_t> c(dims.size());
            for (size_t k = dims.size(); k-- > 0;) {
              c[k] = i % dims[k];
              i /= dims[k];
            }
            return c;
          }};
}

// Element i of a tensor judged: the kernel's `computed` (a value of `f`) against the certified
// value k of `exact` with its bound. `circular`: an angle, judged against the representative
// θ + 2πk of the exact θ nearest the kernel's value (certified_trace.h exact_near).
void judge_element(verify::TensorJudge& judge, int64_t i, Format f, float computed, const CertifiedValues& exact,
                   size_t k, double bound, int check_bits, bool circular) {
  const JudgedExact e = exact_near(f, computed, exact, k, circular);
  const ref::HandedValue value{nullptr, e.hi, e.lo, check_bits};
  judge.add(i, round_nearest_even(f, double(computed)), e.rounded, e.hi, e.error, exact.magnitude[k], bound, value);
}

std::string summary(const Problem& p) {
  const ssmv::mamba3::Shape& s = p.shape;
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "Mamba-3 SISO: %lld sequences, %lld tokens, H=%lld P=%lld N=%lld G=%lld R=%lld; input %s, angles %s, "
                "state %s, output %s%s%s%s",
                (long long)s.num_sequences(), (long long)s.num_tokens(), (long long)s.H, (long long)s.P,
                (long long)s.N, (long long)s.G, (long long)s.R, std::string(format_name(p.formats.input)).c_str(),
                std::string(format_name(p.formats.angles)).c_str(), std::string(format_name(p.formats.state)).c_str(),
                std::string(format_name(p.formats.output)).c_str(), p.has_D() ? ", D" : "", p.has_z() ? ", z" : "",
                p.has_initial_state() ? ", initial state" : "");
  return buf;
}

// Pair (s, h)'s share of the kernel's outputs, in the pair problem's layouts (pair_problem).
Outputs pair_outputs(const Problem& p, const Outputs& out, int64_t s, int64_t h) {
  const ssmv::mamba3::Shape& sh = p.shape;
  const int64_t P = sh.P, t0 = sh.cu_seqlens[size_t(s)];
  Outputs o;
  for (int64_t t = t0; t < t0 + sh.seq_len(s); ++t) {
    o.y.insert(o.y.end(), out.y.begin() + p.x_index(t, h, 0), out.y.begin() + p.x_index(t, h, 0) + P);
  }
  o.final_state = pair_state(p, out.final_state, s, h);
  return o;
}

// The sharp verdict of one part from the pairs' energies (in pair order: sequence, then head),
// summed per head.
void sharp_decide(verify::SharpResult& r, const std::vector<PairEnergies>& pairs, Part part, int64_t H,
                  const std::vector<std::string>& configurations, const sharp::SharpOptions& o) {
  const size_t C = configurations.size();
  std::vector<std::vector<double>> kernel(C, std::vector<double>(size_t(H), 0.0));
  std::vector<std::vector<double>> null(size_t(o.runs), std::vector<double>(size_t(H), 0.0));
  std::vector<int64_t> elements(size_t(H), 0);
  for (size_t task = 0; task < pairs.size(); ++task) {
    const size_t h = task % size_t(H);
    const PairEnergies& e = pairs[task];
    for (size_t c = 0; c < C; ++c) kernel[c][h] += e.energy[part][c];
    for (int m = 0; m < o.runs; ++m) null[size_t(m)][h] += e.energy[part][C + size_t(m)];
    elements[h] += e.elements[part];
  }
  sharp::decide(r, configurations, kernel, null, elements, o);
}

// The kernel's contract, bounds and sharp model: the step kernel's or the chunked prefill's.
struct KernelModel {
  std::string contract_name;
  bound::mamba3::TraceGrid grid;  // the tokens the certified trace keeps |S| after (default: every token)
  std::function<bound::mamba3::StepBounds(const Problem&, const bound::mamba3::ExactTrace&)> bounds;
  SharpModel sharp;
};

KernelModel kernel_model(const ResolvedDump& d) {
  KernelModel m;
  if (d.kernel == kHandoffKernel) {
    const Handoff h{d.prefill_tokens, d.chunk_size, prefill_contract(d.contract), step_contract(d.decode_contract)};
    m.contract_name = h.prefill.name + " then " + h.decode.name;
    m.grid = h.grid();
    m.bounds = [h](const Problem& p, const bound::mamba3::ExactTrace& t) { return handoff_bounds(p, h, t); };
    m.sharp = handoff_model(h);
  } else if (d.kernel == kPrefillKernel) {
    const ssmv::mamba3::PrefillContract c = prefill_contract(d.contract);
    const int64_t L = d.chunk_size;
    m.contract_name = c.name;
    m.grid = {L, 0};
    m.bounds = [c, L](const Problem& p, const bound::mamba3::ExactTrace& t) {
      return bound::mamba3::prefill_bounds(p, L, c, t);
    };
    m.sharp = prefill_model(c, L);
  } else {
    const ssmv::mamba3::StepContract c = step_contract(d.contract);
    m.contract_name = c.name;
    m.bounds = [c](const Problem& p, const bound::mamba3::ExactTrace& t) { return bound::mamba3::step_bounds(p, c, t); };
    m.sharp = step_model(c);
  }
  return m;
}

// The first difference between two problems' inputs, "" when they are the same problem.
std::string first_difference(const Problem& a, const Problem& b) {
  const ssmv::mamba3::Shape &sa = a.shape, &sb = b.shape;
  if (sa.cu_seqlens != sb.cu_seqlens) return "cu_seqlens (the sequences) differ";
  std::string diff = shape_difference(
      {{"H", {sa.H, sb.H}}, {"P", {sa.P, sb.P}}, {"N", {sa.N, sb.N}}, {"G", {sa.G, sb.G}}, {"R", {sa.R, sb.R}}});
  if (diff.empty()) {
    diff = format_difference({{"input", {a.formats.input, b.formats.input}},
                              {"angles", {a.formats.angles, b.formats.angles}},
                              {"state", {a.formats.state, b.formats.state}},
                              {"output", {a.formats.output, b.formats.output}}});
  }
  const std::pair<const char*, const std::vector<float> Problem::*> tensors[] = {
      {"x", &Problem::x},           {"B", &Problem::B},          {"C", &Problem::C},      {"dt", &Problem::dt},
      {"adt", &Problem::adt},       {"trap", &Problem::trap},    {"angles", &Problem::angles},
      {"B_bias", &Problem::B_bias}, {"C_bias", &Problem::C_bias}, {"D", &Problem::D},   {"z", &Problem::z}};
  for (const auto& [name, member] : tensors) {
    if (diff.empty()) diff = tensor_difference(name, a.*member, b.*member);
  }
  const std::pair<const char*, const std::vector<float> ssmv::mamba3::FourPartState::*> initial[] = {
      {"initial_angle_state", &ssmv::mamba3::FourPartState::angle},
      {"initial_states", &ssmv::mamba3::FourPartState::S},
      {"initial_B_prev", &ssmv::mamba3::FourPartState::B_prev},
      {"initial_x_prev", &ssmv::mamba3::FourPartState::x_prev}};
  for (const auto& [name, member] : initial) {
    if (diff.empty()) diff = tensor_difference(name, a.initial.*member, b.initial.*member);
  }
  return diff;
}

class Mamba3Dump : public Dump {
 public:
  explicit Mamba3Dump(ResolvedDump d) : d_(std::move(d)), model_(kernel_model(d_)) {}

  // Pair by pair ((sequence, head) on the worker threads): the certified run of the pair, its
  // bounds, its elements judged; nothing is kept per element beyond the dump and the judges.
  CheckedDump check(const std::string& name, const CheckOptions& o) const override {
    const Problem& p = d_.problem;
    const Outputs& out = d_.outputs;
    const ssmv::mamba3::FourPartState& fs = out.final_state;
    const ssmv::mamba3::Shape& sh = p.shape;
    const int64_t S = sh.num_sequences(), H = sh.H, P = sh.P, N = sh.N, R = sh.R;
    // Per part (sharp.h's Part order): the tensor, its format, its judge (none when not dumped).
    const std::array<Format, kParts> formats = {p.formats.output, Format::fp32, p.formats.state, p.formats.state,
                                                p.formats.state};
    const std::array<const std::vector<float>*, kParts> dumped = {&out.y, &fs.angle, &fs.S, &fs.B_prev, &fs.x_prev};
    std::array<verify::TensorLayout, kParts> layouts = {
        y_layout(p), state_layout(p, {"sequence", "head", "angle"}, {R}),
        state_layout(p, {"sequence", "head", "dim", "state"}, {P, N}), state_layout(p, {"sequence", "head", "state"}, {N}),
        state_layout(p, {"sequence", "head", "dim"}, {P})};
    std::array<std::unique_ptr<verify::TensorJudge>, kParts> judges;
    CheckedDump r;
    for (size_t part = 0; part < kParts; ++part) {
      if (dumped[part]->empty()) continue;
      // The angle state is a point on the circle (judged against the exact θ's nearest
      // representative θ + 2πk): compared modulo 2π.
      if (o.keep_elements) r.element_maps.push_back({layouts[part], part == kAngle ? 2 * bound::mamba3::terms::kPi : 0.0});
      judges[part] = std::make_unique<verify::TensorJudge>(
          kPartNames[part], formats[part], int64_t(dumped[part]->size()), std::move(layouts[part]),
          o.keep_elements ? verify::ElementDetail::elements : verify::ElementDetail::summary);
    }
    if (o.sharp) sharp::validate(o.sharp_options);
    std::vector<PairEnergies> energies(o.sharp ? size_t(S * H) : 0);
    // The pairs' sharp weights (2 bytes per element), kept for an attribution pass.
    const bool attribute = o.sharp && o.sharp_options.attribute && !model_.sharp.defects.empty();
    std::vector<PairWeights> weights(attribute ? size_t(S * H) : 0);
    {
      const progress::Phase phase(o.sharp ? "reference, bounds, judging and the sharp runs"
                                          : "reference, bounds and judging", S * H, "pairs");
      for_each_task(S * H, ref::default_threads(), [&](int64_t task, int64_t) {
        const int64_t s = task / H, h = task % H, t0 = sh.cu_seqlens[size_t(s)];
        const Problem pair = pair_problem(p, s, h);
        const CertifiedRun run = certified_run(pair, 1, model_.grid);
        const bound::mamba3::StepBounds b = model_.bounds(pair, run.trace);
        const Outputs mine = pair_outputs(p, out, s, h);
        const std::array<const std::vector<float>*, kParts> computed = {
            &mine.y, &mine.final_state.angle, &mine.final_state.S, &mine.final_state.B_prev, &mine.final_state.x_prev};
        const std::array<const CertifiedValues*, kParts> exact = {&run.y, &run.angle, &run.S, &run.B_prev, &run.x_prev};
        const std::array<const std::vector<double>*, kParts> bounds = {&b.y, &b.angle, &b.S, &b.B_prev, &b.x_prev};
        // Where the pair's element k sits in the dumped tensor: y row by row at the pair's tokens,
        // a state part from the pair's first element.
        const std::array<int64_t, kParts> base = {0, p.angle_state_index(s, h, 0), p.state_index(s, h, 0, 0),
                                                  p.b_prev_index(s, h, 0), p.x_prev_index(s, h, 0)};
        for (size_t part = 0; part < kParts; ++part) {
          if (!judges[part]) continue;
          for (size_t k = 0; k < computed[part]->size(); ++k) {
            const int64_t i = part == kY ? p.x_index(t0 + int64_t(k) / P, h, int64_t(k) % P) : base[part] + int64_t(k);
            judge_element(*judges[part], i, formats[part], (*computed[part])[k], *exact[part], k, (*bounds[part])[k],
                          run.check_precision_bits, part == kAngle);
          }
        }
        if (o.sharp) {
          PairWeights w = pair_weights(b);
          energies[size_t(task)] = pair_energies(pair, model_.sharp, mine, w, o.sharp_options,
                                                 o.sharp_options.seed * 0x9e3779b97f4a7c15ull + uint64_t(task));
          if (attribute) weights[size_t(task)] = std::move(w);
        }
        progress::advance(1);
      });
    }
    verify::KernelCheck kc;
    kc.kernel = d_.kernel;
    kc.contract = model_.contract_name;
    kc.device = "external";
    for (size_t part = 0; part < kParts; ++part) {
      if (!judges[part]) continue;
      kc.tensors.push_back(judges[part]->finish());
      if (o.sharp) {
        sharp_decide(kc.tensors.back().sharp, energies, Part(part), H, model_.sharp.configurations, o.sharp_options);
      }
    }
    if (attribute) attribute_flagged(kc, weights, o.sharp_options);
    r.entry = verify::report_entry(name, summary(p), std::move(kc));
    return r;
  }

  // For every tensor that is SUSPICIOUS or has a VIOLATION, the candidate defects ranked by their
  // residual (docs/sharp-verdicts.md §4): a second pass over the pairs, each defect's emulation
  // against the kernel under the pair's kept weights; nothing runs when no tensor is flagged.
  void attribute_flagged(verify::KernelCheck& kc, const std::vector<PairWeights>& weights,
                         const sharp::SharpOptions& o) const {
    const Problem& p = d_.problem;
    const int64_t H = p.shape.H, pairs = int64_t(weights.size());
    std::array<bool, kParts> wanted{};
    std::array<verify::TensorReport*, kParts> reports{};
    for (verify::TensorReport& t : kc.tensors) {
      for (size_t part = 0; part < kParts; ++part) {
        if (t.name != kPartNames[part]) continue;
        reports[part] = &t;
        wanted[part] = t.sharp.suspicious || t.count(verify::Verdict::violation) > 0;
      }
    }
    if (std::none_of(wanted.begin(), wanted.end(), [](bool w) { return w; })) return;
    std::vector<std::array<std::vector<double>, kParts>> energies(weights.size());
    {
      const progress::Phase phase("the sharp verdict's attribution", pairs, "pairs");
      for_each_task(pairs, ref::default_threads(), [&](int64_t task, int64_t) {
        const int64_t s = task / H, h = task % H;
        energies[size_t(task)] = defect_energies(pair_problem(p, s, h), model_.sharp, pair_outputs(p, d_.outputs, s, h),
                                                 weights[size_t(task)], wanted);
        progress::advance(1);
      });
    }
    std::vector<std::string> names, descriptions;
    for (const Defect& d : model_.sharp.defects) {
      names.push_back(d.name);
      descriptions.push_back(d.description);
    }
    for (size_t part = 0; part < kParts; ++part) {
      if (!wanted[part]) continue;
      std::vector<double> residuals(names.size(), 0.0);
      for (const auto& e : energies) {  // in pair order: the same sums for any thread count
        for (size_t d = 0; d < residuals.size(); ++d) residuals[d] += e[part][d];
      }
      sharp::attribute(reports[part]->sharp, names, descriptions, residuals, o);
    }
  }

  std::vector<std::string> failure_hints() const override {
    std::vector<std::string> hints;
    for (std::string hint : {narrower_format_hint("y", d_.problem.formats.output, d_.outputs.y),
                             narrower_format_hint("final_states", d_.problem.formats.state, d_.outputs.final_state.S)}) {
      if (!hint.empty()) hints.push_back(std::move(hint));
    }
    return hints;
  }

  // The production contract's exp budget was measured for adt <= 0 (step_contract.h); the
  // chunked prefill's decays are exp2(min(·, 0)) (prefill_bound.h).
  std::string error_hint() const override {
    const std::vector<float>& adt = d_.problem.adt;
    const int64_t positive = std::count_if(adt.begin(), adt.end(), [](float v) { return v > 0; });
    if (positive == 0) return "";
    return "hint: adt > 0 at " + std::to_string(positive) + " of " + std::to_string(adt.size()) +
           " (token, head) pairs: a decaying state has adt = A·dt <= 0 (A < 0); was adt stored with the wrong sign?";
  }

  std::string problem_difference(const Dump& other) const override {
    return first_difference(d_.problem, dynamic_cast<const Mamba3Dump&>(other).d_.problem);
  }

 private:
  ResolvedDump d_;
  KernelModel model_;
};

class Mamba3Family : public Family {
 public:
  std::string name() const override { return "mamba3"; }
  std::vector<std::string> kernels() const override { return {kStepKernel, kPrefillKernel, kHandoffKernel}; }
  std::string kernel_help() const override {
    return "mamba3_step: mamba_ssm's Mamba-3 SISO decode step kernel, one launch per token, the four-part state "
           "stored after every token; mamba3_prefill: its chunked prefill mamba3_siso_combined (option chunk_size, "
           "default 64); mamba3_handoff: the prefill over each sequence's first prefill_tokens, then the step kernel "
           "from the state it returned (docs/tensor-files.md, Mamba-3 dumps)";
  }
  std::unique_ptr<Dump> read(const DumpFiles& f) const override { return std::make_unique<Mamba3Dump>(resolve(f)); }
  std::vector<ContractPreset> contract_presets() const override { return mamba3::contract_presets(); }
  BoundsRows bounds_rows(const std::vector<std::string>& contracts, const BoundsProblem& q) const override {
    return mamba3::bounds_rows(contracts, q);
  }
};

}  // namespace

const Family& family() {
  static const Mamba3Family f;
  return f;
}

}  // namespace ssmv::family::mamba3
