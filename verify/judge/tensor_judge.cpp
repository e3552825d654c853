#include "verify/judge/tensor_judge.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "verify/judge/sharp_weight.h"

namespace ssmv::verify {
namespace {

// ULP distances below this are counted in a dense histogram, the rest listed.
constexpr int64_t kDenseUlps = int64_t(1) << 16;

// The element a sequential scan in flat order keeps for "index < 0 || value > kept":
// the first element it sees when that one's value is NaN (nothing is greater), else the
// first of the largest values (NaN values never replace).
struct ScanMax {
  int64_t first = -1, best = -1;
  double first_value = 0, best_value = 0;
  void see(int64_t i, double v) {
    if (first < 0 || i < first) {
      first = i;
      first_value = v;
    }
    if (!std::isnan(v) && (best < 0 || v > best_value || (v == best_value && i < best))) {
      best = i;
      best_value = v;
    }
  }
  void merge(const ScanMax& o) {
    if (o.first >= 0 && (first < 0 || o.first < first)) {
      first = o.first;
      first_value = o.first_value;
    }
    if (o.best >= 0 && (best < 0 || o.best_value > best_value || (o.best_value == best_value && o.best < best))) {
      best = o.best;
      best_value = o.best_value;
    }
  }
  DifferenceAt result() const {
    if (first < 0) return {};
    if (std::isnan(first_value) || best < 0) return {first, {}, first_value};
    return {best, {}, best_value};
  }
};

}  // namespace

uint64_t TensorJudge::next_serial() {
  static std::atomic<uint64_t> serial{0};
  return ++serial;
}

struct TensorJudge::Partial {
  std::array<int64_t, 4> counts{};
  // Counts of each small ULP distance, grown to the largest seen (at most kDenseUlps): most
  // tensors' distances are a few ULPs, and 512 KiB zeroed per judge and thread had been most of
  // a small check's time.
  std::vector<int64_t> dense;
  std::vector<int64_t> large;  // the other ULP distances
  double max_bound_usage = 0;
  ScanMax abs_diff, rel_diff, over_scale, ulps_at_scale;
  // The worst element: the largest key (INVALID above every finite usage), the first in
  // flat order among equal keys; a NaN key never.
  double worst_key = -1;
  WorstElement worst;
  WorstInputs worst_inputs;
  mpfr_t worst_value;
  bool has_value = false;
  std::vector<std::pair<double, WorstElement>> bad;  // (key, element), worst first, at most kKeptBadElements
  Partial() { mpfr_init2(worst_value, 2); }
  ~Partial() { mpfr_clear(worst_value); }
  Partial(const Partial&) = delete;
  Partial& operator=(const Partial&) = delete;
  void take_value(const ref::HandedValue& v) {
    mpfr_set_prec(worst_value, ref::precision(v));
    ref::set_value(worst_value, v);  // the value as an MPFR number of its precision
    has_value = true;
  }
};

namespace {

// Whether bad element a ranks before b: the larger key (INVALID is +inf), then the first in flat order.
bool worse(const std::pair<double, WorstElement>& a, const std::pair<double, WorstElement>& b) {
  return a.first > b.first || (a.first == b.first && a.second.index < b.second.index);
}

// Keeps `e` among the kKeptBadElements worst of `kept` (sorted worst first).
void keep_bad(std::vector<std::pair<double, WorstElement>>& kept, std::pair<double, WorstElement> e) {
  if (kept.size() == kKeptBadElements && !worse(e, kept.back())) return;
  kept.insert(std::upper_bound(kept.begin(), kept.end(), e, worse), std::move(e));
  if (kept.size() > kKeptBadElements) kept.pop_back();
}

}  // namespace

TensorJudge::TensorJudge(std::string name, Format format, int64_t elements, TensorLayout layout, ElementDetail detail)
    : coords_(std::move(layout.coords)), keep_(detail == ElementDetail::elements),
      keep_weights_(detail != ElementDetail::summary), serial_(next_serial()) {
  report_.name = std::move(name);
  report_.format = format;
  report_.coord_names = std::move(layout.coord_names);
  report_.elements = elements;
  report_.dims = std::move(layout.dims);
  if (keep_) {
    report_.computed.assign(size_t(elements), 0);
    report_.exact_nearest.assign(size_t(elements), 0.0);
    report_.scales.assign(size_t(elements), 0.0);
    report_.bounds.assign(size_t(elements), 0.0);
  }
  if (keep_weights_) report_.sharp_weights.assign(size_t(elements), 0);
}

TensorJudge::~TensorJudge() = default;

TensorJudge::Partial& TensorJudge::partial() {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& p = partials_[std::this_thread::get_id()];
  if (!p) p = std::make_unique<Partial>();
  return *p;
}

void TensorJudge::add(int64_t i, Bits computed, Bits exact_rounded, double exact_nearest, double certified_error,
                      double magnitude, double bound, const ref::HandedValue& exact_value, double extra) {
  if (i < 0 || i >= report_.elements) {
    throw std::out_of_range("TensorJudge '" + report_.name + "': element " + std::to_string(i) + " of " +
                            std::to_string(report_.elements));
  }
  // The calling thread's partial, looked up once per judge and thread (a judge's serial
  // is unique in the process, unlike its address).
  thread_local uint64_t cached_serial = 0;
  thread_local Partial* cached = nullptr;
  if (cached_serial != serial_) {
    cached = &partial();
    cached_serial = serial_;
  }
  Partial& r = *cached;
  const Format format = report_.format;
  const ElementJudgement j = judge(format, computed, exact_rounded, exact_nearest, certified_error, bound);
  ++r.counts[size_t(j.verdict)];
  if (j.verdict != Verdict::invalid) {
    if (j.ulps >= 0 && j.ulps < kDenseUlps) {
      if (size_t(j.ulps) >= r.dense.size()) {
        r.dense.resize(std::min(size_t(kDenseUlps), std::max(size_t(64), size_t(j.ulps) * 2)), 0);
      }
      ++r.dense[size_t(j.ulps)];
    } else {
      r.large.push_back(j.ulps);
    }
    r.max_bound_usage = std::max(r.max_bound_usage, j.bound_usage);
  }
  const double key = j.verdict == Verdict::invalid ? HUGE_VAL : j.bound_usage;
  const double v = decode(format, computed);
  if (std::isfinite(v)) {
    const double diff = std::fabs(v - exact_nearest);
    const double rel = exact_nearest != 0 ? diff / std::fabs(exact_nearest) : diff > 0 ? HUGE_VAL : 0;
    r.abs_diff.see(i, diff);
    r.rel_diff.see(i, rel);
    const double over = magnitude > 0 ? diff / magnitude : diff > 0 ? HUGE_VAL : 0;
    r.over_scale.see(i, over);
    r.ulps_at_scale.see(i, diff / ulp_of(format, magnitude));
  }
  if (j.verdict == Verdict::violation || j.verdict == Verdict::invalid) {
    keep_bad(r.bad, {key, WorstElement{i, {}, computed, exact_rounded, exact_nearest, "", bound, j}});
  }
  if (!std::isnan(key) && (key > r.worst_key || (key == r.worst_key && i < r.worst.index))) {
    r.worst_key = key;
    r.worst = WorstElement{i, {}, computed, exact_rounded, exact_nearest, "", bound, j};
    r.worst_inputs = WorstInputs{certified_error, extra};
    r.take_value(exact_value);
  }
  if (keep_) {
    report_.computed[size_t(i)] = computed;
    report_.exact_nearest[size_t(i)] = exact_nearest;
    report_.scales[size_t(i)] = magnitude;
    report_.bounds[size_t(i)] = bound;
  }
  if (keep_weights_) report_.sharp_weights[size_t(i)] = sharp_weight_bits(bound);
}

TensorReport TensorJudge::finish() {
  TensorReport r = std::move(report_);
  std::vector<int64_t> dense, large;
  ScanMax abs_diff, rel_diff, over_scale, ulps_at_scale;
  double worst_key = -1;
  const Partial* worst = nullptr;
  std::vector<std::pair<double, WorstElement>> bad;
  for (auto& [id, pp] : partials_) {
    const Partial& p = *pp;
    for (size_t v = 0; v < 4; ++v) r.counts[v] += p.counts[v];
    if (p.dense.size() > dense.size()) dense.resize(p.dense.size(), 0);
    for (size_t u = 0; u < p.dense.size(); ++u) dense[u] += p.dense[u];
    large.insert(large.end(), p.large.begin(), p.large.end());
    r.max_bound_usage = std::max(r.max_bound_usage, p.max_bound_usage);
    abs_diff.merge(p.abs_diff);
    rel_diff.merge(p.rel_diff);
    over_scale.merge(p.over_scale);
    ulps_at_scale.merge(p.ulps_at_scale);
    for (const auto& e : p.bad) keep_bad(bad, e);
    if (p.worst.index >= 0 &&
        (!worst || p.worst_key > worst_key || (p.worst_key == worst_key && p.worst.index < worst->worst.index))) {
      worst_key = p.worst_key;
      worst = &p;
    }
  }
  for (auto& [key, e] : bad) {
    e.coords = coords_(e.index);
    r.bad.push_back(std::move(e));
  }
  r.max_abs_difference = abs_diff.result();
  r.max_rel_difference = rel_diff.result();
  r.max_err_over_scale = over_scale.result();
  r.max_ulps_at_scale = ulps_at_scale.result();
  for (DifferenceAt* d : {&r.max_abs_difference, &r.max_rel_difference, &r.max_err_over_scale, &r.max_ulps_at_scale}) {
    if (d->index >= 0) d->coords = coords_(d->index);
  }
  if (r.count(Verdict::invalid) > 0) r.max_bound_usage = HUGE_VAL;
  // Percentiles of the sorted distances: element floor(q·(n − 1)).
  std::sort(large.begin(), large.end());
  int64_t n = int64_t(large.size());
  for (int64_t c : dense) n += c;
  if (n > 0) {
    auto at = [&](int64_t k) {  // the k-th smallest (0-based)
      for (size_t u = 0; u < dense.size(); ++u) {
        if (k < dense[u]) return int64_t(u);
        k -= dense[u];
      }
      return large[size_t(k)];
    };
    r.ulp_p50 = at(int64_t(std::floor(0.50 * double(n - 1))));
    r.ulp_p99 = at(int64_t(std::floor(0.99 * double(n - 1))));
    r.ulp_max = at(n - 1);
  }
  worst_inputs_ = {};
  if (worst) {
    r.worst = worst->worst;
    worst_inputs_ = worst->worst_inputs;
    r.worst.coords = coords_(r.worst.index);
    char buf[80];
    mpfr_snprintf(buf, sizeof buf, "%.40Rg", worst->worst_value);
    r.worst.exact_decimal = buf;
  }
  partials_.clear();
  serial_ = next_serial();  // threads' cached partials of this judge are stale now
  return r;
}

}  // namespace ssmv::verify
