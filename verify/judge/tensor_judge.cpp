#include "verify/judge/tensor_judge.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "spec/vector_clones.h"

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

// A run is judged in blocks of this many elements (add_run).
constexpr int kBlock = 256;

// What add_to derives of each element of a block (add_run), in arrays.
struct BlockFigures {
  int64_t ulps[kBlock];
  double usage[kBlock], diff[kBlock], rel[kBlock], over[kBlock], at_scale[kBlock];
  int exact = 0;  // elements whose computed bits equal the exact value's rounding
};

// bits[k] = round_nearest_even(f, v[k]) for k < n, its fast path (fi is f's) without a branch,
// so that the loop vectorises; false when some v[k] lies outside the format's normal binades
// (no bits are then to be used: the caller rounds the block with round_nearest_even).
SSMV_VECTOR_CLONES
bool round_in_normal_binades(const FormatInfo& fi, int n, const double* __restrict v, Bits* __restrict bits) {
  const int m = fi.precision - 1;
  const int64_t emin = fi.emin, emax = fi.emax;
  const Bits inf = ((Bits{1} << fi.exponent_bits) - 1) << m, mmask = (Bits{1} << m) - 1;
  int64_t inside = 1;
  for (int k = 0; k < n; ++k) {
    const uint64_t b = std::bit_cast<uint64_t>(v[k]);
    const int64_t e = int64_t((b >> 52) & 0x7ff) - 1023;
    const uint64_t r = detail::round_bits(b, fi.precision);
    const int64_t er = int64_t((r >> 52) & 0x7ff) - 1023;  // past emax: ±Inf
    const Bits sign = Bits(b >> 63) << (fi.total_bits - 1);
    const Bits finite = (Bits(er + emax) << m) | (Bits(r >> (52 - m)) & mmask);
    bits[k] = sign | (er > emax ? inf : finite);
    inside &= int64_t((e >= emin) & (e <= emax));
  }
  return inside != 0;
}

// add_to's figures of elements 0 .. n − 1 (the kernel's bits cb, the exact value's rounding eb,
// its nearest double x, certified error, magnitude, bound), the same operations on the same
// doubles as judge() and add_to, without a branch, so that the loop vectorises. True when
// every element is ordinary: its computed value normal (decode's fast path), its exact rounding
// not NaN, x finite, its magnitude in ulp_of's fast path, and its verdict EXACT or
// WITHIN_CONTRACT; otherwise the figures are not to be used (add_to judges the block). Compiled
// for AVX2 without FMA, so nothing is contracted.
SSMV_VECTOR_CLONES
bool block_figures(const FormatInfo& fi, int n, const Bits* __restrict cb, const Bits* __restrict eb,
                   const double* __restrict x, const double* __restrict cert, const double* __restrict mag,
                   const double* __restrict bound, BlockFigures& out) {
  const int m = fi.precision - 1;
  const uint64_t sign = uint64_t{1} << (fi.total_bits - 1), emask = (uint64_t{1} << fi.exponent_bits) - 1;
  const uint64_t inf = emask << m, mmask = (uint64_t{1} << m) - 1;
  const int64_t emin = fi.emin, ulp_shift = 1 - fi.precision + 1023;
  int64_t ordinary = 1, exact = 0;
  for (int k = 0; k < n; ++k) {
    const uint64_t c = cb[k], e = eb[k];
    const uint64_t ce = (c >> m) & emask;
    const uint64_t vb = (((c >> (fi.total_bits - 1)) & 1) << 63) | ((ce - uint64_t(fi.emax) + 1023) << 52) |
                        ((c & mmask) << (52 - m));
    const double v = std::bit_cast<double>(vb);  // decode(f, c) for a normal c
    const int64_t oc = (c & sign) ? -int64_t(c & ~sign) : int64_t(c & ~sign);  // ordered_index
    const int64_t oe = (e & sign) ? -int64_t(e & ~sign) : int64_t(e & ~sign);
    const int64_t d = oc - oe;
    out.ulps[k] = d < 0 ? -d : d;
    const bool same = c == e;
    const double xk = x[k], ax = std::fabs(xk), b = bound[k], mk = mag[k];
    const double diff = std::fabs(v - xk);
    // judge(): the error and its use of the bound
    const double error = pick(same, diff, diff * (1 + 0x1p-52) + cert[k] + ax * 0x1p-53);
    constexpr double kTiny = 0x1p-1074;  // the smallest positive double: a divisor where the quotient is not used
    const double unbounded = (error > 0) & !same ? HUGE_VAL : 0.0, nonzero = diff > 0 ? HUGE_VAL : 0.0;
    out.usage[k] = pick(b > 0, error / (b > 0 ? b : kTiny), unbounded);
    out.diff[k] = diff;
    out.rel[k] = pick(xk != 0, diff / (xk != 0 ? ax : kTiny), nonzero);
    out.over[k] = pick(mk > 0, diff / (mk > 0 ? mk : kTiny), nonzero);
    // ulp_of(f, mk)'s fast path: 2^(e − p + 1) from mk's binade exponent e
    const uint64_t mb = std::bit_cast<uint64_t>(mk);
    const int64_t me = int64_t((mb >> 52) & 0x7ff) - 1023;
    const bool ulp_fast = (me >= emin) & (std::fabs(mk) <= fi.max_finite);
    const double ulp = std::bit_cast<double>(uint64_t(std::max(me, emin) + ulp_shift) << 52);
    out.at_scale[k] = diff / ulp;
    // & rather than &&: no branch
    const bool ok = (ce != 0) & (ce != emask) & ((e & ~sign) <= inf) & (ax <= std::numeric_limits<double>::max()) &
                    ulp_fast & (same | (error <= b));
    ordinary &= int64_t(ok);
    exact += int64_t(same);
  }
  out.exact = int(exact);
  return ordinary != 0;
}

// The largest of v[0 .. n − 1] (n ≥ 1, none NaN), in four independent chains.
double largest(int n, const double* v) {
  double m[4] = {v[0], v[0], v[0], v[0]};
  int k = 0;
  for (; k + 4 <= n; k += 4) {
    for (int l = 0; l < 4; ++l) m[l] = std::max(m[l], v[k + l]);
  }
  for (; k < n; ++k) m[0] = std::max(m[0], v[k]);
  return std::max(std::max(m[0], m[1]), std::max(m[2], m[3]));
}

// The first k with v[k] == value (one exists).
int first_at(const double* v, double value) {
  int k = 0;
  while (v[k] != value) ++k;
  return k;
}

// s.see(first + k, v[k]) for k < n (n ≥ 1, none NaN), in bulk: the block's largest is
// looked for only where it can replace s's best.
void see_block(ScanMax& s, int64_t first, int n, const double* v) {
  ScanMax b;
  b.first = first;
  b.first_value = v[0];
  const double m = largest(n, v);
  if (s.best < 0 || m >= s.best_value) {
    b.best = first + first_at(v, m);
    b.best_value = m;
  }
  s.merge(b);
}

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
  if (keep_weights_) report_.sharp_weights = SharpWeights(size_t(elements));
}

TensorJudge::~TensorJudge() = default;

inline void TensorJudge::add_to(Partial& r, int64_t i, Bits computed, Bits exact_rounded, double exact_nearest,
                                double certified_error, double magnitude, double bound,
                                const ref::HandedValue& exact_value, double extra) {
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

TensorJudge::Partial& TensorJudge::partial() {
  // Looked up once per judge and thread (a judge's serial is unique in the process, unlike
  // its address).
  thread_local uint64_t cached_serial = 0;
  thread_local Partial* cached = nullptr;
  if (cached_serial == serial_) return *cached;
  std::lock_guard<std::mutex> lock(mutex_);
  auto& p = partials_[std::this_thread::get_id()];
  if (!p) p = std::make_unique<Partial>();
  cached = p.get();
  cached_serial = serial_;
  return *p;
}

void TensorJudge::add(int64_t i, Bits computed, Bits exact_rounded, double exact_nearest, double certified_error,
                      double magnitude, double bound, const ref::HandedValue& exact_value, double extra) {
  if (i < 0 || i >= report_.elements) {
    throw std::out_of_range("TensorJudge '" + report_.name + "': element " + std::to_string(i) + " of " +
                            std::to_string(report_.elements));
  }
  add_to(partial(), i, computed, exact_rounded, exact_nearest, certified_error, magnitude, bound, exact_value, extra);
}

void TensorJudge::add_run(int64_t first, std::span<const float> computed, std::span<const ref::HandedValue> values,
                          const double* nearest, const double* certified_error, const double* magnitude,
                          const double* bound) {
  const int64_t n = int64_t(computed.size());
  if (first < 0 || n > report_.elements - first || values.size() != computed.size()) {
    throw std::out_of_range("TensorJudge '" + report_.name + "': elements " + std::to_string(first) + " to " +
                            std::to_string(first + n - 1) + " of " + std::to_string(report_.elements) +
                            " with " + std::to_string(values.size()) + " values");
  }
  Partial& r = partial();
  const Format f = report_.format;
  const FormatInfo& fi = kFormatInfos[static_cast<int>(f)];
  Bits cb[kBlock], eb[kBlock];
  double cv[kBlock], hi[kBlock];
  BlockFigures fig;
  for (int64_t k0 = 0; k0 < n; k0 += kBlock) {
    const int b = int(std::min<int64_t>(kBlock, n - k0));
    const int64_t i0 = first + k0;
    // The kernel's bits and the exact value's rounding (of hi for a fast-tier value).
    bool mpfr = false;
    for (int k = 0; k < b; ++k) {
      cv[k] = double(computed[size_t(k0 + k)]);
      hi[k] = values[size_t(k0 + k)].hi;
      mpfr |= values[size_t(k0 + k)].mpfr != nullptr;
    }
    if (!round_in_normal_binades(fi, b, cv, cb)) {
      for (int k = 0; k < b; ++k) cb[k] = round_nearest_even(f, cv[k]);
    }
    if (mpfr || !round_in_normal_binades(fi, b, hi, eb)) {
      for (int k = 0; k < b; ++k) eb[k] = ref::round_nearest_even(f, values[size_t(k0 + k)]);
    }
    const double *x = nearest + k0, *err = certified_error + k0, *mag = magnitude + k0, *bnd = bound + k0;
    if (!block_figures(fi, b, cb, eb, x, err, mag, bnd, fig)) {
      for (int k = 0; k < b; ++k) add_to(r, i0 + k, cb[k], eb[k], x[k], err[k], mag[k], bnd[k], values[size_t(k0 + k)], 0);
      continue;
    }
    // Every element ordinary, EXACT or WITHIN_CONTRACT: what add_to would have done, in bulk.
    r.counts[size_t(Verdict::exact)] += fig.exact;
    r.counts[size_t(Verdict::within_contract)] += b - fig.exact;
    // The ULP distances below 64 counted in four interleaved histograms (one histogram's
    // increments of a repeated distance had waited on each other), then added.
    int32_t small[4][64] = {};
    for (int k = 0; k < b; ++k) {
      const int64_t u = fig.ulps[k];
      if (u < 64) {
        ++small[k & 3][u];
      } else if (u < kDenseUlps) {
        if (size_t(u) >= r.dense.size()) r.dense.resize(std::min(size_t(kDenseUlps), size_t(u) * 2), 0);
        ++r.dense[size_t(u)];
      } else {
        r.large.push_back(u);
      }
    }
    if (r.dense.size() < 64) r.dense.resize(64, 0);
    for (int u = 0; u < 64; ++u) r.dense[size_t(u)] += (small[0][u] + small[1][u]) + (small[2][u] + small[3][u]);
    see_block(r.abs_diff, i0, b, fig.diff);
    see_block(r.rel_diff, i0, b, fig.rel);
    see_block(r.over_scale, i0, b, fig.over);
    see_block(r.ulps_at_scale, i0, b, fig.at_scale);
    const double worst = largest(b, fig.usage);
    r.max_bound_usage = std::max(r.max_bound_usage, worst);
    if (worst >= r.worst_key) {
      const int k = first_at(fig.usage, worst);
      if (worst > r.worst_key || i0 + k < r.worst.index) {
        r.worst_key = worst;
        r.worst = WorstElement{i0 + k, {}, cb[k], eb[k], x[k], "", bnd[k], judge(f, cb[k], eb[k], x[k], err[k], bnd[k])};
        r.worst_inputs = WorstInputs{err[k], 0};
        r.take_value(values[size_t(k0 + k)]);
      }
    }
    for (int k = 0; k < b && keep_; ++k) {
      report_.computed[size_t(i0 + k)] = cb[k];
      report_.exact_nearest[size_t(i0 + k)] = x[k];
      report_.scales[size_t(i0 + k)] = mag[k];
      report_.bounds[size_t(i0 + k)] = bnd[k];
    }
    for (int k = 0; k < b && keep_weights_; ++k) report_.sharp_weights[size_t(i0 + k)] = sharp_weight_bits(bnd[k]);
  }
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
