#include "verify/sharp/sharp_verdict.h"

#include <algorithm>
#include <boost/math/distributions/chi_squared.hpp>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

#include "spec/parallel.h"
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
  const std::vector<float>* computed = nullptr;
  bool is_y = true;
};

// The energies of one (sequence, head): per configuration and per run, for y and the state.
struct UnitEnergies {
  std::vector<double> y, state;  // [configurations]
  std::vector<double> null_y, null_state;  // [runs]
  int64_t y_elements = 0, state_elements = 0;
};

// Σ ((computed − emulated)/bound)² over one unit's elements of y and of its final state.
class UnitResiduals {
 public:
  UnitResiduals(const Problem& p, const Target* y, const Target* state, int64_t s, int64_t h)
      : p_(p), y_(y), state_(state), s_(s), h_(h) {}

  // Against the kernel's values.
  void observed(const UnitOutputs& e, double& ey, double& es, int64_t* ny = nullptr, int64_t* ns = nullptr) const {
    ey = y_ ? sum(e.y, nullptr, true, ny) : 0;
    es = state_ ? sum(e.state, nullptr, false, ns) : 0;
  }
  // A run against the declared emulation `base`.
  void against(const UnitOutputs& e, const UnitOutputs& base, double& ey, double& es) const {
    ey = y_ ? sum(e.y, &base.y, true, nullptr) : 0;
    es = state_ ? sum(e.state, &base.state, false, nullptr) : 0;
  }

 private:
  double sum(const std::vector<double>& emu, const std::vector<double>* base, bool is_y, int64_t* count) const {
    const Shape& sh = p_.shape;
    const Target& t = is_y ? *y_ : *state_;
    const std::vector<double>& bounds = t.report->bounds;
    double acc = 0;
    int64_t n = 0;
    const int64_t inner = is_y ? sh.P : sh.P * sh.N;
    const int64_t rows = is_y ? sh.seq_len(s_) : 1;
    for (int64_t j = 0; j < rows; ++j) {
      const int64_t flat0 = is_y ? ((sh.cu_seqlens[s_] + j) * sh.H + h_) * sh.P : (s_ * sh.H + h_) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t flat = flat0 + i;
        const double c = double((*t.computed)[flat]);
        const double b = bounds[flat];
        if (!std::isfinite(c) || !(b > 0) || !std::isfinite(b)) continue;
        const double ref = base ? (*base)[j * inner + i] : c;
        const double r = (ref - emu[j * inner + i]) / b;
        acc += r * r;
        ++n;
      }
    }
    if (count) *count = n;
    return acc;
  }
  const Problem& p_;
  const Target *y_, *state_;
  int64_t s_, h_;
};

// The one-sided 99.9% upper confidence factor for a standard deviation estimated from `runs`
// samples: σ ≤ s·sqrt((runs − 1)/χ²_{runs−1}(0.001)) with probability 0.999.
double sd_factor(int runs) {
  const boost::math::chi_squared_distribution<double> chi(double(runs - 1));
  return std::sqrt(double(runs - 1) / boost::math::quantile(chi, 0.001));
}

SharpSlice slice_of(int64_t head, int64_t elements, double observed, const std::vector<double>& null, double factor) {
  SharpSlice s;
  s.head = head;
  s.elements = elements;
  s.observed = observed;
  double mean = 0;
  for (double q : null) mean += q;
  mean /= double(null.size());
  double var = 0;
  for (double q : null) var += (q - mean) * (q - mean);
  s.null_mean = mean;
  s.null_sd = std::sqrt(var / double(null.size() - 1));
  s.ratio = mean > 0 ? observed / mean : (observed > 0 ? std::numeric_limits<double>::infinity() : 0.0);
  if (mean > 0 && observed > mean) {
    const double sd = factor * s.null_sd;
    const double z = sd > 0 ? (observed - mean) / sd : std::numeric_limits<double>::infinity();
    s.p_bound = std::isinf(z) ? 0.0 : 1.0 / (1.0 + z * z);
  }
  return s;
}

// Runs `configs` (deterministic) and, when `runs` > 0, the Monte Carlo runs of `declared`
// over every unit, summing the energies per head.
struct HeadEnergies {
  std::vector<std::vector<double>> y, state;            // [config][head]
  std::vector<std::vector<double>> null_y, null_state;  // [run][head]
  std::vector<int64_t> y_elements, state_elements;      // [head]
};

HeadEnergies energies(const Problem& p, const Contract& c, const std::vector<Configuration>& configs,
                      const Emulation& declared, int runs, const SharpOptions& o, const Target* ty, const Target* ts) {
  const Shape& sh = p.shape;
  const int64_t S = sh.num_sequences(), H = sh.H, units = S * H;
  std::vector<UnitEnergies> per(units);
  const int64_t work = sh.num_tokens() * H * sh.P * sh.N;
  const int workers = int(std::min<int64_t>(resolve_threads(o.threads), std::max<int64_t>(1, work >> 16)));
  std::vector<UnitOutputs> base_buf(workers), run_buf(workers);
  for_each_task(units, workers, [&](int64_t u, int64_t worker) {
    const int64_t s = u / H, h = u % H;
    UnitEnergies& ue = per[u];
    const UnitResiduals res(p, ty, ts, s, h);
    UnitOutputs& base = base_buf[worker];
    UnitOutputs& run = run_buf[worker];
    ue.y.assign(configs.size(), 0);
    ue.state.assign(configs.size(), 0);
    for (size_t ci = 0; ci < configs.size(); ++ci) {
      emulate_unit(p, c, configs[ci].emulation, Noise{}, s, h, ci == 0 && runs > 0 ? base : run);
      const UnitOutputs& out = ci == 0 && runs > 0 ? base : run;
      res.observed(out, ue.y[ci], ue.state[ci], ci == 0 ? &ue.y_elements : nullptr,
                   ci == 0 ? &ue.state_elements : nullptr);
    }
    ue.null_y.assign(runs, 0);
    ue.null_state.assign(runs, 0);
    for (int m = 0; m < runs; ++m) {
      emulate_unit(p, c, declared, Noise{true, o.seed + uint64_t(m) * 0x9e3779b97f4a7c15ull}, s, h, run);
      res.against(run, base, ue.null_y[m], ue.null_state[m]);
    }
  });
  HeadEnergies he;
  he.y.assign(configs.size(), std::vector<double>(H, 0));
  he.state = he.y;
  he.null_y.assign(runs, std::vector<double>(H, 0));
  he.null_state = he.null_y;
  he.y_elements.assign(H, 0);
  he.state_elements.assign(H, 0);
  for (int64_t u = 0; u < units; ++u) {  // in unit order: the same sums for any thread count
    const int64_t h = u % H;
    const UnitEnergies& ue = per[u];
    for (size_t ci = 0; ci < configs.size(); ++ci) {
      he.y[ci][h] += ue.y[ci];
      he.state[ci][h] += ue.state[ci];
    }
    for (int m = 0; m < runs; ++m) {
      he.null_y[m][h] += ue.null_y[m];
      he.null_state[m][h] += ue.null_state[m];
    }
    he.y_elements[h] += ue.y_elements;
    he.state_elements[h] += ue.state_elements;
  }
  return he;
}

double total(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

// The verdict of one tensor from its per-head energies.
void decide(SharpResult& r, const std::vector<Configuration>& allowed, const std::vector<std::vector<double>>& e,
            const std::vector<std::vector<double>>& null, const std::vector<int64_t>& elements, const SharpOptions& o) {
  const int64_t H = int64_t(elements.size());
  size_t best = 0;
  for (size_t ci = 1; ci < allowed.size(); ++ci) {
    if (total(e[ci]) < total(e[best])) best = ci;
  }
  r.evaluated = true;
  r.allowed = allowed[best].name;
  r.runs = o.runs;
  r.margin = o.margin;
  r.false_alarm = o.false_alarm;
  r.seed = o.seed;
  r.sd_factor = sd_factor(o.runs);
  std::vector<double> whole_null(null.size());
  for (size_t m = 0; m < null.size(); ++m) whole_null[m] = total(null[m]);
  int64_t n_all = 0;
  for (int64_t n : elements) n_all += n;
  r.whole = slice_of(-1, n_all, total(e[best]), whole_null, r.sd_factor);
  int64_t slices = 1;
  std::vector<SharpSlice> heads;
  for (int64_t h = 0; h < H; ++h) {
    if (elements[h] == 0) continue;
    std::vector<double> nh(null.size());
    for (size_t m = 0; m < null.size(); ++m) nh[m] = null[m][h];
    heads.push_back(slice_of(h, elements[h], e[best][h], nh, r.sd_factor));
    ++slices;
  }
  r.worst = r.whole;
  auto flagged = [&](const SharpSlice& s) {
    return s.null_mean > 0 && s.ratio > o.margin && s.p_bound * double(slices) <= o.false_alarm;
  };
  r.suspicious = flagged(r.whole);
  r.p_value_bound = std::min(1.0, r.whole.p_bound * double(slices));
  for (const SharpSlice& s : heads) {
    r.suspicious = r.suspicious || flagged(s);
    r.p_value_bound = std::min(r.p_value_bound, std::min(1.0, s.p_bound * double(slices)));
    if (s.null_mean > 0 && s.ratio > r.worst.ratio) r.worst = s;
  }
}

}  // namespace

void sharp_verdicts(const Problem& p, const verify::ExternalKernel& k, KernelCheck& kc, const std::vector<float>& y,
                    const std::vector<float>& final_states, const SharpOptions& o) {
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
    const std::vector<float>& values = is_y ? y : final_states;
    if (why_not.empty() && (t.bounds.size() != size_t(t.elements) || values.size() != size_t(t.elements))) {
      t.sharp.why_not = "no per-element bounds kept by the check (ElementDetail::summary)";
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
  const std::vector<Configuration> allowed = allowed_configurations(c, p, k.tokens_per_launch);
  const HeadEnergies he =
      energies(p, c, allowed, allowed[0].emulation, o.runs, o, ty.report ? &ty : nullptr, ts.report ? &ts : nullptr);
  if (ty.report) decide(ty.report->sharp, allowed, he.y, he.null_y, he.y_elements, o);
  if (ts.report) decide(ts.report->sharp, allowed, he.state, he.null_state, he.state_elements, o);

  // Attribution, only where there is something to explain.
  auto wants = [](const Target& t) {
    return t.report && (t.report->sharp.suspicious || t.report->count(verify::Verdict::violation) > 0);
  };
  if (!o.attribute || (!wants(ty) && !wants(ts))) return;
  const std::vector<Configuration> defects = candidate_defects(c, p, k.tokens_per_launch);
  if (defects.empty()) return;
  const HeadEnergies de = energies(p, c, defects, allowed[0].emulation, 0, o, wants(ty) ? &ty : nullptr,
                                   wants(ts) ? &ts : nullptr);
  for (const Target* t : {&ty, &ts}) {
    if (!wants(*t)) continue;
    SharpResult& r = t->report->sharp;
    const auto& e = t->is_y ? de.y : de.state;
    for (size_t d = 0; d < defects.size(); ++d) {
      SharpCandidate cand;
      cand.name = defects[d].name;
      cand.description = defects[d].description;
      cand.residual = total(e[d]);
      cand.explained = r.whole.observed > 0 ? 1.0 - cand.residual / r.whole.observed : 0.0;
      cand.consistent = cand.residual <= o.margin * r.whole.null_mean;
      r.attribution.push_back(cand);
    }
    std::stable_sort(r.attribution.begin(), r.attribution.end(),
                     [](const SharpCandidate& a, const SharpCandidate& b) { return a.residual < b.residual; });
  }
}

}  // namespace ssmv::sharp
