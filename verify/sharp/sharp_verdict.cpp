#include "verify/sharp/sharp_verdict.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

#include "spec/format.h"
#include "spec/format_values.h"
#include "spec/parallel.h"
#include "spec/progress.h"
#include "spec/vector_clones.h"
#include "verify/judge/sharp_weight.h"
#include "verify/sharp/calibrated_test.h"
#include "verify/sharp/candidates.h"
#include "verify/sharp/emulation.h"

namespace ssmv::sharp {

using verify::KernelCheck;
using verify::SharpCandidate;
using verify::SharpResult;
using verify::SharpSlice;
using verify::TensorReport;

void validate(const SharpOptions& o) {
  if (o.runs < 3) throw std::invalid_argument("sharp runs = " + std::to_string(o.runs) + ": must be >= 3");
  if (!(o.margin > 1)) throw std::invalid_argument("sharp margin = " + std::to_string(o.margin) + ": must be > 1");
  if (!(o.false_alarm > 0 && o.false_alarm < 1)) {
    throw std::invalid_argument("sharp false alarm = " + std::to_string(o.false_alarm) + ": must lie in (0, 1)");
  }
}

bool any_suspicious(const KernelCheck& kc) {
  for (const TensorReport& t : kc.tensors) {
    if (t.sharp.evaluated && t.sharp.suspicious) return true;
  }
  return false;
}

namespace {

// The tensors the sharp verdict judges, with what it reads of them.
struct Target {
  TensorReport* report = nullptr;
  const FormatValues* computed = nullptr;
  bool is_y = true;
};

// The declared emulation's outputs of one (sequence, head), kept for the Monte Carlo runs'
// residuals: y [len, P] in the output format, the final state [P, N] in the state format (every
// emulated output is a value of its format, so nothing is lost).
struct UnitBase {
  FormatValues y, state;
};

// The squares ((reference_i − emulated_i)/w_i)² of m elements (m a multiple of 4, or the
// last block) added into four partial sums, element i into sums[i mod 4]; an element whose
// computed value is not finite or whose weight is 0 adds +0. Returns the elements counted.
// The lanes are independent, so the loop vectorises; the order is fixed by the element
// index alone.
SSMV_VECTOR_CLONES int64_t add_squares(const float* __restrict computed, const uint16_t* __restrict weights,
                                       const double* __restrict reference, const double* __restrict emu, int64_t m,
                                       double* sums) {
  // Four elements at a time as the lanes of one vector (GCC did not vectorise the loop over
  // elements); an element left out divides by 2^-1074 and adds +0 (w > 0 means w >= 2^-126).
  using V4 = double __attribute__((vector_size(32)));
  using M4 = int64_t __attribute__((vector_size(32)));
  V4 s = {sums[0], sums[1], sums[2], sums[3]};
  M4 counted4 = {};
  const int64_t whole = m / 4 * 4;
  for (int64_t i0 = 0; i0 < whole; i0 += 4) {
    V4 w, c, d;
    for (int k = 0; k < 4; ++k) {
      w[k] = verify::sharp_weight(weights[i0 + k]);
      c[k] = std::fabs(double(computed[i0 + k]));
      d[k] = reference[i0 + k] - emu[i0 + k];
    }
    const M4 in = (c <= double(std::numeric_limits<float>::max())) & (w > 0);  // lanes of all ones or zeros
    const V4 r = d / (in ? w : V4{} + 0x1p-1074);
    s += in ? r * r : V4{};
    counted4 -= in;
  }
  int64_t counted = (counted4[0] + counted4[1]) + (counted4[2] + counted4[3]);
  for (int64_t i = whole; i < m; ++i) {
    const double w = verify::sharp_weight(weights[i]);
    const bool in = std::fabs(computed[i]) <= std::numeric_limits<float>::max() && w > 0;
    const double r = (reference[i] - emu[i]) / (in ? w : 1.0);
    s[i - whole] += in ? r * r : 0.0;
    counted += in ? 1 : 0;
  }
  for (int k = 0; k < 4; ++k) sums[k] = s[k];
  return counted;
}

// Σ_i ((reference_i − emulated_i)/w_i)² over the n elements flat0.. of target t (a row of
// y, or one unit's final state), where the reference is the kernel's value or, with `base`,
// the declared emulation's from base0 on, and w_i the element's weight (its bound in bf16);
// elements whose computed value is not finite or whose weight is 0 are left out. Summed in
// four interleaved partial sums joined as (s0 + s1) + (s2 + s3). `count` (optional) gets the
// terms counted.
double residual(const Target& t, int64_t flat0, int64_t n, const double* emu, const FormatValues* base, size_t base0,
                int64_t* count) {
  constexpr int64_t kBlock = 256;  // a multiple of 4: the lanes follow the element index
  double reference[kBlock];
  float computed[kBlock], based[kBlock];  // buffers for values held as bits (FormatValues::read)
  double sums[4] = {0, 0, 0, 0};
  int64_t counted = 0;
  const uint16_t* weights = t.report->sharp_weights.data() + flat0;
  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
    const int64_t m = std::min(kBlock, n - i0);
    const float* c = t.computed->read(size_t(flat0 + i0), size_t(m), computed);
    const float* r = base ? base->read(base0 + size_t(i0), size_t(m), based) : c;
    for (int64_t i = 0; i < m; ++i) reference[i] = double(r[i]);
    counted += add_squares(c, weights + i0, reference, emu + i0, m, sums);
  }
  if (count) *count += counted;
  return (sums[0] + sums[1]) + (sums[2] + sums[3]);
}

// Per item (a configuration or a Monte Carlo run) and head, for y and the final state: the
// residual energies summed over the sequences; and the elements counted per head.
struct HeadEnergies {
  std::vector<std::vector<double>> y, state;    // [item][head]
  std::vector<int64_t> y_elements, state_elements;  // [head] (the declared pass only)
};

// What every pass shares: the problem, the contract, the targets and the workers.
struct Pass {
  const Problem& p;
  const Contract& c;
  const Target* ty;  // null: y not judged
  const Target* ts;  // null: the final state not judged
  int workers;
};

// What an item's residuals are taken against: the kernel's values; or, for every item, the
// declared emulation's outputs kept by an earlier pass (`base`); or, for the items after the
// first, the first item's outputs in the same task (`first_is_base`: item 0 is the declared
// emulation, judged against the kernel, and a task holds every item of its unit, so no
// unit's outputs are kept beyond its task — a 256-request decode's final states are 268 MB).
struct Against {
  const std::vector<UnitBase>* base = nullptr;
  bool first_is_base = false;
};

// Runs `items` emulations on every unit, tasks (group of up to `group` items, unit) over the
// workers: items [i, i + n) of a unit come from run(i, n, s, h, outs, shared) into *outs[0..n)
// (shared: the pass's C·Bᵀ sums, which the units running at once form once); each
// item's residuals are as `against` says; `keep` (optional) gets item 0's outputs of every
// unit. An item's outputs do not depend on its group, and the sums per head go in unit order,
// so the figures are the same for any thread count and grouping.
template <class Run>
HeadEnergies run_pass(const Pass& ps, const std::string& what, int64_t items, int64_t group, const Against& against,
                      std::vector<UnitBase>* keep, Run run) {
  const Shape& sh = ps.p.shape;
  const int64_t H = sh.H, units = sh.num_sequences() * H, groups = (items + group - 1) / group;
  const progress::Phase phase("sharp verdict: " + what, items * sh.num_tokens() * H * sh.P * sh.N,
                              "emulated updates");
  std::vector<double> ey(items * units, 0.0), es(items * units, 0.0);
  std::vector<int64_t> ny(units, 0), ns(units, 0);
  if (against.first_is_base && group < items) {
    throw std::logic_error("run_pass: the first item is the base only when a task holds every item");
  }
  std::vector<std::vector<UnitOutputs>> bufs(size_t(ps.workers), std::vector<UnitOutputs>(size_t(group)));
  std::vector<UnitBase> task_bases(against.first_is_base ? size_t(ps.workers) : 0);
  SharedSums shared;
  for_each_task(groups * units, ps.workers, [&](int64_t task, int64_t worker) {
    const int64_t first = task / units * group, u = task % units, s = u / H, h = u % H;
    const int64_t n = std::min(group, items - first);
    UnitBase* kept = keep && first == 0 ? &(*keep)[size_t(u)]
                     : against.first_is_base ? &task_bases[size_t(worker)]
                                             : nullptr;
    // Item first + r's residuals are against base_of(r) (null: the kernel's values).
    const auto base_of = [&](int64_t r) -> const UnitBase* {
      if (against.base) return &(*against.base)[size_t(u)];
      return against.first_is_base && first + r > 0 ? kept : nullptr;
    };
    if (kept) kept->y = FormatValues::zeros(ps.p.formats.output, size_t(sh.seq_len(s) * sh.P));
    // y's rows are judged as the emulation makes them: no y of the sequence is held.
    std::vector<double> y_energy(size_t(n), 0.0);
    int64_t y_terms = 0;
    std::vector<UnitOutputs*> outs;
    for (int64_t r = 0; r < n; ++r) {
      UnitOutputs& out = bufs[size_t(worker)][size_t(r)];
      outs.push_back(&out);
      const bool first_item = first + r == 0;
      const UnitBase* b = base_of(r);
      out.y_row = [&, r, b, first_item](int64_t j, const double* row) {
        if (ps.ty) {
          y_energy[size_t(r)] += residual(*ps.ty, ((sh.cu_seqlens[s] + j) * H + h) * sh.P, sh.P, row,
                                          b ? &b->y : nullptr, size_t(j * sh.P), first_item ? &y_terms : nullptr);
        }
        if (kept && first_item) {
          kept->y.store_nearest(size_t(j * sh.P), row, size_t(sh.P));
        }
      };
    }
    run(first, n, s, h, outs, &shared);
    for (int64_t r = 0; r < n; ++r) {
      const int64_t item = first + r;
      const UnitOutputs& out = *outs[size_t(r)];
      ey[item * units + u] = y_energy[size_t(r)];
      const UnitBase* b = base_of(r);
      if (ps.ts) {
        es[item * units + u] = residual(*ps.ts, u * sh.P * sh.N, sh.P * sh.N, out.state.data(), b ? &b->state : nullptr,
                                        0, item == 0 ? &ns[u] : nullptr);
      }
      if (kept && item == 0) {
        kept->state = FormatValues::zeros(ps.p.formats.state, out.state.size());
        kept->state.store_nearest(0, out.state.data(), out.state.size());
      }
    }
    if (first == 0) ny[u] = y_terms;
    progress::advance(n * sh.seq_len(s) * sh.P * sh.N);
  });
  HeadEnergies he;
  he.y.assign(items, std::vector<double>(H, 0.0));
  he.state = he.y;
  he.y_elements.assign(H, 0);
  he.state_elements.assign(H, 0);
  for (int64_t item = 0; item < items; ++item) {
    for (int64_t u = 0; u < units; ++u) {
      he.y[item][u % H] += ey[item * units + u];
      he.state[item][u % H] += es[item * units + u];
    }
  }
  for (int64_t u = 0; u < units; ++u) {
    he.y_elements[u % H] += ny[u];
    he.state_elements[u % H] += ns[u];
  }
  return he;
}

HeadEnergies run_configurations(const Pass& ps, const std::string& what, const std::vector<Configuration>& configs) {
  return run_pass(ps, what, int64_t(configs.size()), 1, Against{}, nullptr,
                  [&](int64_t i, int64_t, int64_t s, int64_t h, const std::vector<UnitOutputs*>& outs,
                      SharedSums* shared) {
                    emulate_unit(ps.p, ps.c, configs[size_t(i)].emulation, Noise{}, s, h, *outs[0], shared);
                  });
}

// Whether one task per unit keeps every worker busy (two tasks per worker).
bool one_task_per_unit(const Pass& ps) {
  return ps.p.shape.num_sequences() * ps.p.shape.H >= 2 * int64_t(ps.workers);
}

// Otherwise the Monte Carlo runs of a chunked contract go in groups per unit, which share the
// C·Bᵀ sums (emulate_runs); as few groups as keep every worker busy. A sequential contract's
// runs share nothing: one per task.
int64_t monte_carlo_group(const Pass& ps, int64_t runs) {
  if (ps.c.family == Family::sequential) return 1;
  const int64_t units = ps.p.shape.num_sequences() * ps.p.shape.H;
  const int64_t groups = std::clamp<int64_t>((2 * int64_t(ps.workers) + units - 1) / units, 1, runs);
  return (runs + groups - 1) / groups;
}

// The Monte Carlo runs' noises: run m's seed from the root seed.
std::vector<Noise> run_noises(const SharpOptions& o, int64_t first, int64_t n) {
  std::vector<Noise> noises;
  for (int64_t m = first; m < first + n; ++m) noises.push_back(Noise{true, o.seed + uint64_t(m) * 0x9e3779b97f4a7c15ull});
  return noises;
}

// The declared emulation's energies against the kernel (he) and the Monte Carlo runs' around
// it (null). Where one task per unit keeps every worker busy, a task runs the declared
// emulation and then the runs against it; otherwise the declared pass keeps every unit's
// outputs for a second pass of the runs in groups.
void declared_and_monte_carlo(const Pass& ps, const Emulation& declared, const SharpOptions& o, HeadEnergies& he,
                              HeadEnergies& null) {
  if (one_task_per_unit(ps)) {
    HeadEnergies all = run_pass(
        ps, "the contract's emulation and " + std::to_string(o.runs) + " Monte Carlo runs", 1 + o.runs, 1 + o.runs,
        Against{nullptr, true}, nullptr,
        [&](int64_t, int64_t, int64_t s, int64_t h, const std::vector<UnitOutputs*>& outs, SharedSums* shared) {
          // The declared emulation first, noise-free: a chunked contract's runs take their sums'
          // noise model from it (emulate_runs).
          std::vector<Noise> noises{Noise{}};
          for (const Noise& n : run_noises(o, 0, o.runs)) noises.push_back(n);
          emulate_runs(ps.p, ps.c, declared, noises, s, h, outs, shared);
        });
    he.y = {all.y[0]};
    he.state = {all.state[0]};
    he.y_elements = all.y_elements;
    he.state_elements = all.state_elements;
    null.y.assign(all.y.begin() + 1, all.y.end());
    null.state.assign(all.state.begin() + 1, all.state.end());
    return;
  }
  std::vector<UnitBase> base(size_t(ps.p.shape.num_sequences() * ps.p.shape.H));
  he = run_pass(ps, "the contract's emulation", 1, 1, Against{}, &base,
                [&](int64_t, int64_t, int64_t s, int64_t h, const std::vector<UnitOutputs*>& outs,
                    SharedSums* shared) { emulate_unit(ps.p, ps.c, declared, Noise{}, s, h, *outs[0], shared); });
  null = run_pass(ps, std::to_string(o.runs) + " Monte Carlo runs", o.runs, monte_carlo_group(ps, o.runs),
                  Against{&base, false}, nullptr,
                  [&](int64_t first, int64_t n, int64_t s, int64_t h, const std::vector<UnitOutputs*>& outs,
                      SharedSums* shared) {
                    emulate_runs(ps.p, ps.c, declared, run_noises(o, first, n), s, h, outs, shared);
                  });
}

}  // namespace

void sharp_verdicts(const Problem& p, const verify::ExternalKernel& k, KernelCheck& kc, const FormatValues& y,
                    const FormatValues& final_states, const SharpOptions& o) {
  validate(o);
  std::string why_not;
  if (k.family == "handoff") {
    why_not = "a hand-off: the sharp tier judges one kernel per dump (ssu or chunk_scan)";
  } else if (block_scaled(p.formats.state)) {
    why_not = "a block-scaled state format: its rounding model is not emulated";
  }
  Target ty, ts;
  for (TensorReport& t : kc.tensors) {
    const bool is_y = t.name == "y";
    if (!is_y && t.name != "final_state") continue;
    const FormatValues& values = is_y ? y : final_states;
    if (why_not.empty() && (t.sharp_weights.size() != size_t(t.elements) || values.size() != size_t(t.elements))) {
      t.sharp.why_not = "no per-element weights kept by the check (ElementDetail::summary)";
      continue;
    }
    if (!why_not.empty()) {
      t.sharp.why_not = why_not;
      continue;
    }
    (is_y ? ty : ts) = Target{&t, &values, is_y};
  }
  if (!ty.report && !ts.report) return;
  const Contract& c = k.contract;
  const Shape& sh = p.shape;
  const int64_t work = sh.num_tokens() * sh.H * sh.P * sh.N;
  const Pass ps{p, c, ty.report ? &ty : nullptr, ts.report ? &ts : nullptr,
                int(std::min<int64_t>(resolve_threads(o.threads), std::max<int64_t>(1, work >> 14)))};
  const std::vector<Configuration> allowed = allowed_configurations(c, p, k.tokens_per_launch);
  // The declared emulation and the Monte Carlo runs around it.
  HeadEnergies he, null;
  declared_and_monte_carlo(ps, allowed[0].emulation, o, he, null);
  auto decide_all = [&](const std::vector<Configuration>& configs) {
    std::vector<std::string> names;
    for (const Configuration& c : configs) names.push_back(c.name);
    if (ty.report) decide(ty.report->sharp, names, he.y, null.y, he.y_elements, o);
    if (ts.report) decide(ts.report->sharp, names, he.state, null.state, he.state_elements, o);
  };
  decide_all({allowed[0]});
  // A kernel may round less than its contract declares: only where the declared emulation
  // leaves the error unexplained are the other allowed configurations tried (the test is
  // monotone in the residual, so a tensor that passes as declared passes them all).
  auto flagged = [](const Target& t) { return t.report && t.report->sharp.suspicious; };
  if (allowed.size() > 1 && (flagged(ty) || flagged(ts))) {
    const std::vector<Configuration> others(allowed.begin() + 1, allowed.end());
    const HeadEnergies more = run_configurations(ps, "the other allowed configurations", others);
    he.y.insert(he.y.end(), more.y.begin(), more.y.end());
    he.state.insert(he.state.end(), more.state.begin(), more.state.end());
    decide_all(allowed);
  }

  // Attribution, only where there is something to explain.
  auto wants = [](const Target& t) {
    return t.report && (t.report->sharp.suspicious || t.report->count(verify::Verdict::violation) > 0);
  };
  if (!o.attribute || (!wants(ty) && !wants(ts))) return;
  const std::vector<Configuration> defects = candidate_defects(c, p, k.tokens_per_launch);
  if (defects.empty()) return;
  const Pass pd{p, c, wants(ty) ? &ty : nullptr, wants(ts) ? &ts : nullptr, ps.workers};
  const HeadEnergies de = run_configurations(pd, "attribution", defects);
  std::vector<std::string> names, descriptions;
  for (const Configuration& d : defects) {
    names.push_back(d.name);
    descriptions.push_back(d.description);
  }
  for (const Target* t : {&ty, &ts}) {
    if (!wants(*t)) continue;
    const auto& e = t->is_y ? de.y : de.state;
    std::vector<double> residuals;
    for (size_t d = 0; d < defects.size(); ++d) residuals.push_back(total(e[d]));
    attribute(t->report->sharp, names, descriptions, residuals, o);
  }
}

}  // namespace ssmv::sharp
