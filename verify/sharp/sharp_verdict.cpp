#include "verify/sharp/sharp_verdict.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
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

// The tensors the sharp verdict judges, with what it reads of them: the kernel's values and
// each element's weight (the report's, or while the check still runs its judge's).
struct Target {
  TensorReport* report = nullptr;
  const FormatValues* computed = nullptr;
  bool is_y = true;
  const uint16_t* weights = nullptr;
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
  const uint16_t* weights = t.weights + flat0;
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

// One pass: `items` emulations of every unit, in tasks (group of up to `group` items, unit):
// items [i, i + n) of a unit come from run(i, n, s, h, outs, shared) into *outs[0..n) (shared:
// the pass's C·Bᵀ sums, which the units running at once form once); each item's residuals are
// as `against` says; `keep` (optional) gets item 0's outputs of every unit. An item's outputs do
// not depend on its group, and the sums per head go in unit order (energies()), so the figures
// are the same for any thread count, grouping and order of the tasks.
template <class Run>
class PassTasks {
 public:
  PassTasks(const Pass& ps, int64_t items, int64_t group, const Against& against, std::vector<UnitBase>* keep,
            Run run)
      : ps_(ps), items_(items), group_(group), units_(ps.p.shape.num_sequences() * ps.p.shape.H),
        against_(against), keep_(keep), run_(std::move(run)), ey_(items * units_, 0.0), es_(items * units_, 0.0),
        ny_(units_, 0), ns_(units_, 0) {
    if (against.first_is_base && group < items) {
      throw std::logic_error("run_pass: the first item is the base only when a task holds every item");
    }
  }

  int64_t tasks() const { return (items_ + group_ - 1) / group_ * units_; }
  // What the pass does in all, in emulated state updates (progress).
  int64_t work() const { return items_ * ps_.p.shape.num_tokens() * ps_.p.shape.H * ps_.p.shape.P * ps_.p.shape.N; }

  // Task `task` (items from task / units × group, of unit task mod units) with the caller's
  // buffers: `group` outputs, and the unit's kept outputs where the first item is the base.
  void task(int64_t task, std::vector<UnitOutputs>& bufs, UnitBase& task_base) {
    const Shape& sh = ps_.p.shape;
    const int64_t H = sh.H, first = task / units_ * group_, u = task % units_, s = u / H, h = u % H;
    const int64_t n = std::min(group_, items_ - first);
    bufs.resize(size_t(group_));
    UnitBase* kept = keep_ && first == 0 ? &(*keep_)[size_t(u)] : against_.first_is_base ? &task_base : nullptr;
    // Item first + r's residuals are against base_of(r) (null: the kernel's values).
    const auto base_of = [&](int64_t r) -> const UnitBase* {
      if (against_.base) return &(*against_.base)[size_t(u)];
      return against_.first_is_base && first + r > 0 ? kept : nullptr;
    };
    if (kept) kept->y = FormatValues::zeros(ps_.p.formats.output, size_t(sh.seq_len(s) * sh.P));
    // y's rows are judged as the emulation makes them: no y of the sequence is held.
    std::vector<double> y_energy(size_t(n), 0.0);
    int64_t y_terms = 0;
    std::vector<UnitOutputs*> outs;
    for (int64_t r = 0; r < n; ++r) {
      UnitOutputs& out = bufs[size_t(r)];
      outs.push_back(&out);
      const bool first_item = first + r == 0;
      const UnitBase* b = base_of(r);
      out.y_row = [&, r, b, first_item](int64_t j, const double* row) {
        if (ps_.ty) {
          y_energy[size_t(r)] += residual(*ps_.ty, ((sh.cu_seqlens[s] + j) * H + h) * sh.P, sh.P, row,
                                          b ? &b->y : nullptr, size_t(j * sh.P), first_item ? &y_terms : nullptr);
        }
        if (kept && first_item) {
          kept->y.store_nearest(size_t(j * sh.P), row, size_t(sh.P));
        }
      };
    }
    run_(first, n, s, h, outs, &shared_);
    for (int64_t r = 0; r < n; ++r) {
      const int64_t item = first + r;
      const UnitOutputs& out = *outs[size_t(r)];
      ey_[item * units_ + u] = y_energy[size_t(r)];
      const UnitBase* b = base_of(r);
      if (ps_.ts) {
        es_[item * units_ + u] = residual(*ps_.ts, u * sh.P * sh.N, sh.P * sh.N, out.state.data(),
                                          b ? &b->state : nullptr, 0, item == 0 ? &ns_[u] : nullptr);
      }
      if (kept && item == 0) {
        kept->state = FormatValues::zeros(ps_.p.formats.state, out.state.size());
        kept->state.store_nearest(0, out.state.data(), out.state.size());
      }
    }
    if (first == 0) ny_[u] = y_terms;
    progress::advance(n * sh.seq_len(s) * sh.P * sh.N);
  }

  // The energies per item and head, summed over the units in unit order.
  HeadEnergies energies() const {
    const int64_t H = ps_.p.shape.H;
    HeadEnergies he;
    he.y.assign(items_, std::vector<double>(H, 0.0));
    he.state = he.y;
    he.y_elements.assign(H, 0);
    he.state_elements.assign(H, 0);
    for (int64_t item = 0; item < items_; ++item) {
      for (int64_t u = 0; u < units_; ++u) {
        he.y[item][u % H] += ey_[item * units_ + u];
        he.state[item][u % H] += es_[item * units_ + u];
      }
    }
    for (int64_t u = 0; u < units_; ++u) {
      he.y_elements[u % H] += ny_[u];
      he.state_elements[u % H] += ns_[u];
    }
    return he;
  }

 private:
  const Pass& ps_;
  int64_t items_, group_, units_;
  Against against_;
  std::vector<UnitBase>* keep_;
  Run run_;
  std::vector<double> ey_, es_;  // [item, unit]
  std::vector<int64_t> ny_, ns_;  // [unit]
  SharedSums shared_;
};

// A pass as a phase of its own, its tasks over the workers.
template <class Run>
HeadEnergies run_pass(const Pass& ps, const std::string& what, int64_t items, int64_t group, const Against& against,
                      std::vector<UnitBase>* keep, Run run) {
  PassTasks<Run> pass(ps, items, group, against, keep, std::move(run));
  const progress::Phase phase("sharp verdict: " + what, pass.work(), "emulated updates");
  std::vector<std::vector<UnitOutputs>> bufs(size_t(ps.workers));
  std::vector<UnitBase> task_bases(size_t(ps.workers));
  for_each_task(pass.tasks(), ps.workers,
                [&](int64_t task, int64_t worker) { pass.task(task, bufs[size_t(worker)], task_bases[size_t(worker)]); });
  return pass.energies();
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

// The declared emulation first, noise-free (a chunked contract's runs take their sums' noise
// model from it, emulate_runs), then the Monte Carlo runs: every item of a unit in one task.
using UnitRun = std::function<void(int64_t, int64_t, int64_t, int64_t, const std::vector<UnitOutputs*>&, SharedSums*)>;
UnitRun declared_then_runs(const Pass& ps, const Emulation& declared, const SharpOptions& o) {
  return [&ps, &declared, o](int64_t, int64_t, int64_t s, int64_t h, const std::vector<UnitOutputs*>& outs,
                             SharedSums* shared) {
    std::vector<Noise> noises{Noise{}};
    for (const Noise& n : run_noises(o, 0, o.runs)) noises.push_back(n);
    emulate_runs(ps.p, ps.c, declared, noises, s, h, outs, shared);
  };
}

// The items of declared_then_runs' pass: the declared emulation's energies against the kernel
// (he) and the Monte Carlo runs' around it (null).
void split_declared(const HeadEnergies& all, HeadEnergies& he, HeadEnergies& null) {
  he.y = {all.y[0]};
  he.state = {all.state[0]};
  he.y_elements = all.y_elements;
  he.state_elements = all.state_elements;
  null.y.assign(all.y.begin() + 1, all.y.end());
  null.state.assign(all.state.begin() + 1, all.state.end());
}

std::string first_pass_name(const SharpOptions& o) {
  return "the contract's emulation and " + std::to_string(o.runs) + " Monte Carlo runs";
}

// The declared emulation's energies against the kernel (he) and the Monte Carlo runs' around
// it (null). Where one task per unit keeps every worker busy, a task runs the declared
// emulation and then the runs against it; otherwise the declared pass keeps every unit's
// outputs for a second pass of the runs in groups.
void declared_and_monte_carlo(const Pass& ps, const Emulation& declared, const SharpOptions& o, HeadEnergies& he,
                              HeadEnergies& null) {
  if (one_task_per_unit(ps)) {
    split_declared(run_pass(ps, first_pass_name(o), 1 + o.runs, 1 + o.runs, Against{nullptr, true}, nullptr,
                            declared_then_runs(ps, declared, o)),
                   he, null);
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

// Why the sharp verdict does not judge this kernel's dump at all (empty: it does).
std::string not_judged(const Problem& p, const verify::ExternalKernel& k) {
  if (k.family == "handoff") return "a hand-off: the sharp tier judges one kernel per dump (ssu or chunk_scan)";
  if (block_scaled(p.formats.state)) return "a block-scaled state format: its rounding model is not emulated";
  return "";
}

// The workers of the sharp verdict's passes: its threads, fewer for a small problem.
int pass_workers(const Problem& p, const SharpOptions& o) {
  const Shape& sh = p.shape;
  const int64_t work = sh.num_tokens() * sh.H * sh.P * sh.N;
  return int(std::min<int64_t>(resolve_threads(o.threads), std::max<int64_t>(1, work >> 14)));
}

}  // namespace

struct EarlyRuns::Impl {
  Impl(const Problem& p, const verify::ExternalKernel& k, const FormatValues& y, const FormatValues& final_states,
       const SharpOptions& o)
      : declared(allowed_configurations(k.contract, p, k.tokens_per_launch)[0].emulation), options(o),
        ps{p, k.contract, nullptr, nullptr, pass_workers(p, o)},
        pass(ps, 1 + o.runs, 1 + o.runs, Against{nullptr, true}, nullptr, declared_then_runs(ps, declared, options)) {
    ty.computed = &y;
    ty.is_y = true;
    ts.computed = &final_states;
    ts.is_y = false;
    hook.work = pass.work();
    hook.phase_name = "reference, with " + first_pass_name(o) + " of the sharp verdict";
    hook.done = [this](int64_t s, int64_t h, const uint16_t* y_weights, const uint16_t* state_weights) {
      // The weights' arrays are the whole tensors' and the same at every call.
      std::call_once(targets_set, [&] {
        ty.weights = y_weights;
        ts.weights = state_weights;
        ps.ty = y_weights ? &ty : nullptr;
        ps.ts = state_weights && !ts.computed->empty() ? &ts : nullptr;
      });
      std::vector<UnitOutputs> bufs;
      UnitBase base;
      pass.task(s * ps.p.shape.H + h, bufs, base);
      units_done.fetch_add(1);
    };
  }

  Emulation declared;
  SharpOptions options;
  Target ty, ts;
  Pass ps;
  PassTasks<UnitRun> pass;
  std::once_flag targets_set;
  std::atomic<int64_t> units_done{0};
  verify::UnitsJudged hook;
};

EarlyRuns::EarlyRuns(const Problem& p, const verify::ExternalKernel& k, const FormatValues& y,
                     const FormatValues& final_states, const SharpOptions& o) {
  validate(o);
  if (!not_judged(p, k).empty()) return;
  const Pass ps{p, k.contract, nullptr, nullptr, pass_workers(p, o)};
  if (!one_task_per_unit(ps)) return;
  impl_ = std::make_unique<Impl>(p, k, y, final_states, o);
}

EarlyRuns::~EarlyRuns() = default;

const verify::UnitsJudged* EarlyRuns::units_judged() const { return impl_ ? &impl_->hook : nullptr; }

int64_t EarlyRuns::units_run() const { return impl_ ? impl_->units_done.load() : 0; }

void sharp_verdicts(const Problem& p, const verify::ExternalKernel& k, KernelCheck& kc, const FormatValues& y,
                    const FormatValues& final_states, const SharpOptions& o, const EarlyRuns* early) {
  validate(o);
  const std::string why_not = not_judged(p, k);
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
    (is_y ? ty : ts) = Target{&t, &values, is_y, t.sharp_weights.data()};
  }
  if (!ty.report && !ts.report) return;
  const Contract& c = k.contract;
  const Pass ps{p, c, ty.report ? &ty : nullptr, ts.report ? &ts : nullptr, pass_workers(p, o)};
  const std::vector<Configuration> allowed = allowed_configurations(c, p, k.tokens_per_launch);
  // The declared emulation and the Monte Carlo runs around it: run during the check where
  // EarlyRuns took every unit with the same tensors, else here.
  HeadEnergies he, null;
  const EarlyRuns::Impl* e = early ? early->impl_.get() : nullptr;
  const int64_t units = p.shape.num_sequences() * p.shape.H;
  if (e && e->units_done.load() == units && (e->ps.ty != nullptr) == (ps.ty != nullptr) &&
      (e->ps.ts != nullptr) == (ps.ts != nullptr)) {
    split_declared(e->pass.energies(), he, null);
  } else {
    declared_and_monte_carlo(ps, allowed[0].emulation, o, he, null);
  }
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
