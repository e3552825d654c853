#include "verify/sharp/sharp_verdict.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

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

// The tensors the sharp verdict judges, with what it reads of them: the kernel's values (the
// weights come from the judging's feed); `report` (null in the first pass beside the check,
// which runs before the report exists) gets the verdict.
struct Target {
  TensorReport* report = nullptr;
  const FormatValues* computed = nullptr;
  bool is_y = true;
};

// A check that kept no weights cannot feed the verdict: a caller's mistake, not the dump's.
// Asked after a unit's emulation (a row's callback skips such a row instead: no exception may
// pass through the emulation, UnitOutputs::stop).
const uint16_t* expect_weights(const uint16_t* weights) {
  if (weights == nullptr) {
    throw std::logic_error("sharp verdict: the check kept no sharp weights (ElementDetail::summary)");
  }
  return weights;
}

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
// the declared emulation's (its row or final state) from base0 on, and w_i the element's
// weight (its bound in bf16: `weights` [n], the tensor's from flat0 on);
// elements whose computed value is not finite or whose weight is 0 are left out. Summed in
// four interleaved partial sums joined as (s0 + s1) + (s2 + s3). `count` (optional) gets the
// terms counted.
double residual(const Target& t, const uint16_t* weights, int64_t flat0, int64_t n, const double* emu,
                const FormatValues* base, size_t base0, int64_t* count) {
  constexpr int64_t kBlock = 256;  // a multiple of 4: the lanes follow the element index
  double reference[kBlock];
  float computed[kBlock], based[kBlock];  // buffers for values held as bits (FormatValues::read)
  double sums[4] = {0, 0, 0, 0};
  int64_t counted = 0;
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
  std::vector<int64_t> y_elements, state_elements;  // [head] (item 0's)
};

// The same per item and unit, as the tasks leave them; per_head() sums them per head in unit
// order, so the figures are the same for any thread count and grouping.
struct UnitEnergies {
  UnitEnergies(int64_t items, int64_t units)
      : units(units), y(size_t(items * units), 0.0), state(y), y_elements(size_t(units), 0), state_elements(y_elements) {}
  int64_t units;
  std::vector<double> y, state;                     // [item · units + unit]
  std::vector<int64_t> y_elements, state_elements;  // [unit] (item 0's)

  HeadEnergies per_head(int64_t H) const {
    const int64_t items = int64_t(y.size()) / units;
    HeadEnergies he;
    he.y.assign(items, std::vector<double>(H, 0.0));
    he.state = he.y;
    he.y_elements.assign(H, 0);
    he.state_elements.assign(H, 0);
    for (int64_t item = 0; item < items; ++item) {
      for (int64_t u = 0; u < units; ++u) {
        he.y[item][u % H] += y[item * units + u];
        he.state[item][u % H] += state[item * units + u];
      }
    }
    for (int64_t u = 0; u < units; ++u) {
      he.y_elements[u % H] += y_elements[u];
      he.state_elements[u % H] += state_elements[u];
    }
    return he;
  }
};

// What every pass shares: the problem, the contract, the targets, the judging's feed of
// weights (each row read once the judging has written its weights), the workers and the
// progress track (beside the check's phases, or after them).
struct Pass {
  const Problem& p;
  const Contract& c;
  const Target* ty;  // null: y not judged
  const Target* ts;  // null: the final state not judged
  verify::JudgingFeed& feed;
  int workers;
  progress::Track track = progress::Track::main;
};

void expect_weights(const Pass& ps) {
  if (ps.ty) expect_weights(ps.feed.y_weights());
}

// The declared emulation's rows of y that its Monte Carlo runs are still to read, in the
// output format (every emulated output is a value of its format, so nothing is lost, and the
// runs read them as they read a unit's kept y before): row j at slot j mod lockstep_rows. The
// runs go in lockstep with the declared emulation (emulate_runs), so a task holds a chunk's rows
// (256 × 64 at chunk 256, P 64: 32 KB in bf16) or a sequential slab's (64 rows), where keeping
// every unit's y had taken 2 B per y element: 67 MB for a 1 × 65,536-token H 8 P 64 dump.
class DeclaredRows {
 public:
  DeclaredRows(Format f, int64_t rows, int64_t P)
      : values_(FormatValues::zeros(f, size_t(rows * P))), held_(size_t(rows), -1), P_(P) {}
  // A new unit: no row held (a row of the unit before must not pass for one of this one).
  void clear() { std::fill(held_.begin(), held_.end(), int64_t{-1}); }
  void keep(int64_t j, const double* row) {
    const size_t slot = size_t(j) % held_.size();
    values_.store_nearest(slot * size_t(P_), row, size_t(P_));
    held_[slot] = j;
  }
  // Where row j lies in values(); a row not held (not yet made, or overwritten) means the runs
  // left the lockstep that emulate_runs promises.
  size_t at(int64_t j) const {
    const size_t slot = size_t(j) % held_.size();
    if (held_[slot] != j) {
      throw std::logic_error("sharp verdict: the declared emulation's row " + std::to_string(j) +
                             " is not held for its Monte Carlo runs (they left the lockstep)");
    }
    return slot * size_t(P_);
  }
  const FormatValues& values() const { return values_; }

 private:
  FormatValues values_;
  std::vector<int64_t> held_;  // [slot] the row held there, or -1
  int64_t P_;
};

// Hands unit (s, h)'s rows of y from `out` to the judging as the emulation makes them (no y of
// the sequence is held): each row's residual against the kernel's values (`declared` null) or
// the declared emulation's row is added into *energy, `count` (optional) gets the terms counted,
// and `keep` (optional) keeps the row for the runs that follow in lockstep.
void judge_rows(const Pass& ps, int64_t s, int64_t h, UnitOutputs& out, double* energy, int64_t* count,
                const DeclaredRows* declared, DeclaredRows* keep) {
  const Shape& sh = ps.p.shape;
  out.y_row = [&ps, &sh, s, h, energy, count, declared, keep](int64_t j, const double* row) {
    if (!ps.ty) return;
    // A check that stopped: nothing more is read, and the task ends at the emulation's next slab
    // or piece (UnitOutputs::stop; no exception may pass through the emulation).
    if (!ps.feed.wait_rows(s * sh.H + h, j + 1) || ps.feed.y_weights() == nullptr) return;
    const int64_t flat0 = ((sh.cu_seqlens[s] + j) * sh.H + h) * sh.P;
    const uint16_t* w = ps.feed.y_weights() + flat0;
    *energy += declared ? residual(*ps.ty, w, flat0, sh.P, row, &declared->values(), declared->at(j), count)
                        : residual(*ps.ty, w, flat0, sh.P, row, nullptr, 0, count);
    if (keep) keep->keep(j, row);
  };
}

// Unit u's final state's residual against the kernel's (`declared` null) or the declared
// emulation's; `count` (optional) gets the terms counted.
double state_residual(const Pass& ps, int64_t u, const UnitOutputs& out, const FormatValues* declared,
                      int64_t* count) {
  const int64_t PN = ps.p.shape.P * ps.p.shape.N;
  if (!ps.feed.wait_state(u)) throw verify::JudgingStopped();
  const uint16_t* w = expect_weights(ps.feed.state_weights()) + u * PN;
  return residual(*ps.ts, w, u * PN, PN, out.state.data(), declared, 0, count);
}

// Each configuration emulated on every unit (one task per configuration and unit) and judged
// against the kernel.
HeadEnergies run_configurations(const Pass& ps, const std::string& what, const std::vector<Configuration>& configs) {
  const Shape& sh = ps.p.shape;
  const int64_t H = sh.H, units = sh.num_sequences() * H, items = int64_t(configs.size());
  const progress::Phase phase("sharp verdict: " + what, items * sh.num_tokens() * H * sh.P * sh.N,
                              "emulated updates");
  UnitEnergies ue(items, units);
  std::vector<UnitOutputs> bufs(size_t(ps.workers));
  SharedSums shared;
  for_each_task(items * units, ps.workers, [&](int64_t task, int64_t worker) {
    const int64_t item = task / units, u = task % units, s = u / H, h = u % H;
    UnitOutputs& out = bufs[size_t(worker)];
    double y_energy = 0;
    judge_rows(ps, s, h, out, &y_energy, item == 0 ? &ue.y_elements[size_t(u)] : nullptr, nullptr, nullptr);
    out.stop = &ps.feed.stopped();
    emulate_unit(ps.p, ps.c, configs[size_t(item)].emulation, Noise{}, s, h, out, &shared);
    if (ps.feed.stopped()) throw verify::JudgingStopped();
    expect_weights(ps);
    ue.y[size_t(item * units + u)] = y_energy;
    if (ps.ts) {
      ue.state[size_t(item * units + u)] =
          state_residual(ps, u, out, nullptr, item == 0 ? &ue.state_elements[size_t(u)] : nullptr);
    }
    progress::advance(sh.seq_len(s) * sh.P * sh.N);
  });
  return ue.per_head(H);
}

// Whether one task per unit keeps every worker busy (two tasks per worker).
bool one_task_per_unit(const Pass& ps) {
  return ps.p.shape.num_sequences() * ps.p.shape.H >= 2 * int64_t(ps.workers);
}

// Otherwise the Monte Carlo runs of a chunked contract go in groups per unit, which share the
// C·Bᵀ sums and the noise-free run that models their sums' noise (emulate_runs); as few groups
// as keep every worker busy. A sequential contract's runs share nothing but the declared
// emulation beside them (declared_and_monte_carlo), which each task makes once more (about half
// a run): as few groups as give every worker one task. At 8 units on 16 workers that is 16 tasks
// of 4 runs and a declared emulation, 4.5 runs' time each, as the two passes before had taken (a
// declared pass of 8 tasks with half the workers idle, then 64 tasks of a run: 0.5 + 4); one run
// per task (64 tasks) would have taken 6.
// A pass that gives the weights back behind its readers needs every task under way at once (a
// task waiting for a worker holds the frontier at its first token): one task per worker there.
int64_t monte_carlo_group(const Pass& ps, int64_t runs, bool release_behind) {
  const int64_t units = ps.p.shape.num_sequences() * ps.p.shape.H;
  const int64_t tasks =
      ps.c.family == Family::sequential || release_behind ? int64_t(ps.workers) : 2 * int64_t(ps.workers);
  const int64_t groups = std::clamp<int64_t>((tasks + units - 1) / units, 1, runs);
  return (runs + groups - 1) / groups;
}

// The Monte Carlo runs' noises: run m's seed from the root seed.
std::vector<Noise> run_noises(const SharpOptions& o, int64_t first, int64_t n) {
  std::vector<Noise> noises;
  for (int64_t m = first; m < first + n; ++m) noises.push_back(Noise{true, o.seed + uint64_t(m) * 0x9e3779b97f4a7c15ull});
  return noises;
}

// The declared emulation's energies against the kernel (he) and the Monte Carlo runs' around
// it (null), in one pass of tasks (group of runs, unit): each task runs the declared emulation,
// noise-free, and its runs [first, first + n) beside it in lockstep (emulate_runs), and judges
// each run's rows against the declared rows of the piece or slab in hand (DeclaredRows) and its
// final state against the declared one, so no unit's emulated outputs outlive its task.
// Where the units are at least two per worker, one task per unit holds every run; otherwise the
// runs go in groups per unit (monte_carlo_group); a task holds a group and the declared emulation.
// The declared emulation is then made once per group: in the chunked family it is the noise-free
// run that models the runs' sums' noise ([N3]), which a group made anyway and dropped, so it costs
// nothing more (and the declared pass that had kept every unit's y is gone); in the sequential
// family it is one noise-free emulation more per group, about half a run (monte_carlo_group
// says how the groups are sized for that).
// Its energies and element counts come from the task of the group that holds run 0 only: its rows
// reach the judging in token order, one residual per row added into one sum per unit, as the
// declared pass's did, its final state is one residual, and per_head adds the units in unit order,
// so the sums are the same bits in the same order as before; and since its rows and state are the
// same bits in every group (the first noise-free run of emulate_runs gives emulate_unit's outputs:
// SharpEmulation.RunsSideBySideEqualRunsAlone, SequentialRunsInLockstepEqualRunsAlone), so are the
// runs' residuals against them.
void declared_and_monte_carlo(const Pass& ps, const Emulation& declared, const SharpOptions& o, bool release_behind,
                              HeadEnergies& he, HeadEnergies& null) {
  const Shape& sh = ps.p.shape;
  const int64_t H = sh.H, units = sh.num_sequences() * H, runs = o.runs;
  const int64_t group = one_task_per_unit(ps) ? runs : monte_carlo_group(ps, runs, release_behind);
  const int64_t groups = (runs + group - 1) / group;
  // Each group's task reads its unit's weights in token order; its last run reads a row last.
  if (release_behind) ps.feed.release_behind_readers(sh, groups);
  const progress::Phase phase("sharp verdict: the contract's emulation and " + std::to_string(runs) +
                                  " Monte Carlo runs",
                              (runs + groups) * sh.num_tokens() * H * sh.P * sh.N, "emulated updates", ps.track);
  UnitEnergies ue(1 + runs, units);  // item 0: the declared emulation; 1 + m: run m
  std::vector<std::vector<UnitOutputs>> bufs(size_t(ps.workers), std::vector<UnitOutputs>(size_t(group + 1)));
  std::vector<DeclaredRows> rows(size_t(ps.workers),
                                 DeclaredRows(ps.p.formats.output, lockstep_rows(ps.c), sh.P));
  // The declared final state of each worker's unit, in the state format.
  std::vector<FormatValues> states(size_t(ps.workers), FormatValues::zeros(ps.p.formats.state, size_t(sh.P * sh.N)));
  SharedSums shared;
  for_each_task(groups * units, ps.workers, [&](int64_t task, int64_t worker) {
    const int64_t first = task / units * group, u = task % units, s = u / H, h = u % H;
    const int64_t n = std::min(group, runs - first);
    DeclaredRows& kept = rows[size_t(worker)];
    kept.clear();
    std::vector<double> y_energy(size_t(n + 1), 0.0);  // [0]: the declared emulation's, [1 + r]: run first + r's
    int64_t y_terms = 0;
    std::vector<UnitOutputs*> outs;
    for (int64_t r = 0; r <= n; ++r) {
      UnitOutputs& out = bufs[size_t(worker)][size_t(r)];
      if (r == 0) {
        judge_rows(ps, s, h, out, &y_energy[0], &y_terms, nullptr, &kept);
        // The task's updates counted row by row as the declared emulation hands its rows over
        // (the n runs are in lockstep with it), so that a pass beside the check shows progress
        // before its first task ends.
        out.y_row = [judge = std::move(out.y_row), updates = (n + 1) * sh.P * sh.N, track = ps.track](
                        int64_t j, const double* row) {
          judge(j, row);
          progress::advance(updates, track);
        };
      } else {
        judge_rows(ps, s, h, out, &y_energy[size_t(r)], nullptr, &kept, nullptr);
      }
      if (release_behind && r == n) {
        // The group's last run has read the row's weights: behind every group of every pair of
        // the sequence, the weights go back (JudgingFeed::rows_read).
        out.y_row = [judge = std::move(out.y_row), &feed = ps.feed, u, reader = first / group, len = sh.seq_len(s)](
                        int64_t j, const double* row) {
          judge(j, row);
          feed.rows_read(u, reader, j + 1, j + 1 == len);
        };
      }
      out.stop = &ps.feed.stopped();
      outs.push_back(&out);
    }
    std::vector<Noise> noises{Noise{}};
    for (const Noise& noise : run_noises(o, first, n)) noises.push_back(noise);
    if (ps.feed.stopped()) throw verify::JudgingStopped();
    emulate_runs(ps.p, ps.c, declared, noises, s, h, outs, &shared);
    if (ps.feed.stopped()) throw verify::JudgingStopped();
    expect_weights(ps);
    FormatValues& state = states[size_t(worker)];
    if (ps.ts) state.store_nearest(0, outs[0]->state.data(), outs[0]->state.size());
    if (first == 0) {
      ue.y[size_t(u)] = y_energy[0];
      ue.y_elements[size_t(u)] = y_terms;
      if (ps.ts) ue.state[size_t(u)] = state_residual(ps, u, *outs[0], nullptr, &ue.state_elements[size_t(u)]);
    }
    for (int64_t r = 1; r <= n; ++r) {
      const size_t at = size_t((first + r) * units + u);
      ue.y[at] = y_energy[size_t(r)];
      if (ps.ts) ue.state[at] = state_residual(ps, u, *outs[size_t(r)], &state, nullptr);
    }
  });
  HeadEnergies all = ue.per_head(H);
  he.y = {all.y[0]};
  he.state = {all.state[0]};
  he.y_elements = all.y_elements;
  he.state_elements = all.state_elements;
  null.y.assign(all.y.begin() + 1, all.y.end());
  null.state.assign(all.state.begin() + 1, all.state.end());
}

// Why the verdict is not evaluated at all for this kernel and state format ("" when it is).
std::string why_not_evaluated(const Problem& p, const verify::ExternalKernel& k) {
  if (k.family == "handoff") return "a hand-off: the sharp tier judges one kernel per dump (ssu or chunk_scan)";
  if (block_scaled(p.formats.state)) return "a block-scaled state format: its rounding model is not emulated";
  return "";
}

// Opens `feed` as the feed of a check that is over: y's and the final state's weights where the
// check kept them whole (a weight per element of the tensor and of the dump's values), null
// where not; closed as completed, so that no read waits.
void open_finished(verify::JudgingFeed& feed, const KernelCheck& kc, const FormatValues& y,
                   const FormatValues& final_states) {
  const uint16_t* weights[2] = {nullptr, nullptr};  // y, final_state
  for (const TensorReport& t : kc.tensors) {
    const bool is_y = t.name == "y";
    if (!is_y && t.name != "final_state") continue;
    const FormatValues& values = is_y ? y : final_states;
    if (t.sharp_weights.size() == size_t(t.elements) && values.size() == size_t(t.elements)) {
      weights[is_y ? 0 : 1] = t.sharp_weights.data();
    }
  }
  feed.open(weights[0], weights[1]);
  feed.close(true);
}

int pass_workers(const Problem& p, const SharpOptions& o) {
  const Shape& sh = p.shape;
  const int64_t work = sh.num_tokens() * sh.H * sh.P * sh.N;
  return int(std::min<int64_t>(resolve_threads(o.threads), std::max<int64_t>(1, work >> 14)));
}

}  // namespace

// The first pass (the declared emulation and the Monte Carlo runs around it) and, once the
// check's report exists, the decisions and the passes that only a flagged tensor asks for.
struct SharpPasses {
  const Problem& p;
  const verify::ExternalKernel& k;
  const FormatValues& y;
  const FormatValues& final_states;
  SharpOptions o;
  verify::JudgingFeed& feed;
  // With it, the first pass gives the y weights back behind its readers, and a later pass (a
  // flagged tensor's) reads them from the check made again (JudgingFeed::released).
  std::function<KernelCheck()> rejudge;
  std::optional<KernelCheck> rejudged;
  std::unique_ptr<verify::JudgingFeed> refed;
  std::string why_not;
  Target ty, ts;  // computed set: judged (report set by finish)
  HeadEnergies he, null;
  std::exception_ptr failure;
  std::thread thread;

  SharpPasses(const Problem& p, const verify::ExternalKernel& k, const FormatValues& y,
              const FormatValues& final_states, const SharpOptions& o, verify::JudgingFeed& feed,
              std::function<KernelCheck()> rejudge = {})
      : p(p), k(k), y(y), final_states(final_states), o(o), feed(feed), rejudge(std::move(rejudge)),
        why_not(why_not_evaluated(p, k)) {
    validate(o);
    if (!why_not.empty()) return;
    ty = Target{nullptr, &y, true};
    if (!final_states.empty()) ts = Target{nullptr, &final_states, false};
  }

  void first_pass(progress::Track track) {
    if (!why_not.empty() || (!ty.computed && !ts.computed)) return;
    const Pass ps{p, k.contract, ty.computed ? &ty : nullptr, ts.computed ? &ts : nullptr, feed, pass_workers(p, o),
                  track};
    const std::vector<Configuration> allowed = allowed_configurations(k.contract, p, k.tokens_per_launch);
    declared_and_monte_carlo(ps, allowed[0].emulation, o, bool(rejudge), he, null);
  }

  // The feed of the passes after the first: the check's, or, where the first pass gave weights
  // back, the same check made again (the same weights: it is deterministic).
  verify::JudgingFeed& later_feed() {
    if (!feed.released()) return feed;
    if (!refed) {
      rejudged = rejudge();
      refed = std::make_unique<verify::JudgingFeed>(p.shape.num_sequences() * p.shape.H);
      open_finished(*refed, *rejudged, y, final_states);
    }
    return *refed;
  }

  void finish(KernelCheck& kc) {
    if (thread.joinable()) {
      const progress::Phase phase("sharp verdict: its emulations beside the check, finishing", 0, "");
      thread.join();
    }
    if (failure) std::rethrow_exception(failure);
    for (TensorReport& t : kc.tensors) {
      const bool is_y = t.name == "y";
      if (!is_y && t.name != "final_state") continue;
      if (!why_not.empty()) {
        t.sharp.why_not = why_not;
        continue;
      }
      Target& target = is_y ? ty : ts;
      if (target.computed == nullptr) continue;  // not judged (sharp_verdicts said why)
      if (target.computed->size() != size_t(t.elements)) {
        throw std::logic_error("sharp verdict: the check's " + t.name + " is not the tensor its first pass judged");
      }
      target.report = &t;
    }
    if (!why_not.empty() || (!ty.report && !ts.report)) return;
    decide_and_explain();
  }

  void decide_and_explain() {
    const Contract& c = k.contract;
    const Pass ps{p, c, ty.report ? &ty : nullptr, ts.report ? &ts : nullptr, feed, pass_workers(p, o)};
    const std::vector<Configuration> allowed = allowed_configurations(c, p, k.tokens_per_launch);
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
      const Pass po{p, c, ps.ty, ps.ts, later_feed(), ps.workers};
      const HeadEnergies more = run_configurations(po, "the other allowed configurations", others);
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
    const Pass pd{p, c, wants(ty) ? &ty : nullptr, wants(ts) ? &ts : nullptr, later_feed(), ps.workers};
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
};

SharpBeside::SharpBeside(const Problem& p, const verify::ExternalKernel& k, const FormatValues& y,
                         const FormatValues& final_states, const SharpOptions& o, verify::JudgingFeed& feed,
                         std::function<KernelCheck()> rejudge)
    : passes_(std::make_unique<SharpPasses>(p, k, y, final_states, o, feed, std::move(rejudge))) {
  SharpPasses& i = *passes_;
  i.thread = std::thread([&i] {
    try {
      i.first_pass(progress::Track::beside);
    } catch (...) {
      i.failure = std::current_exception();
    }
  });
}

SharpBeside::~SharpBeside() {
  if (passes_->thread.joinable()) passes_->thread.join();
}

void SharpBeside::finish(KernelCheck& kc) { passes_->finish(kc); }

void sharp_verdicts(const Problem& p, const verify::ExternalKernel& k, KernelCheck& kc, const FormatValues& y,
                    const FormatValues& final_states, const SharpOptions& o) {
  // The check is over: a feed that says so, with its weights. A tensor without them is not
  // evaluated (its reason given); the others are judged as beside a check.
  const std::string not_kept = "no per-element weights kept by the check (ElementDetail::summary)";
  verify::JudgingFeed feed(p.shape.num_sequences() * p.shape.H);
  open_finished(feed, kc, y, final_states);
  SharpPasses i(p, k, y, final_states, o, feed);
  if (i.why_not.empty()) {
    for (TensorReport& t : kc.tensors) {
      const bool is_y = t.name == "y";
      if ((is_y || t.name == "final_state") && (is_y ? feed.y_weights() : feed.state_weights()) == nullptr) {
        t.sharp.why_not = not_kept;
        (is_y ? i.ty : i.ts).computed = nullptr;
      }
    }
    if (!i.ty.computed && !i.ts.computed) return;
  }
  i.first_pass(progress::Track::main);
  i.finish(kc);
}

bool first_pass_beside_pays(const Problem& p, int reference_workers) {
  return p.shape.num_sequences() * p.shape.H < int64_t(reference_workers);
}

}  // namespace ssmv::sharp
