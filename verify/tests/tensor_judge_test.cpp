// TensorJudge::add_run (a run of elements judged in blocks, with a vectorised path for
// ordinary blocks) against add() element by element: the same report, field for field and
// bit for bit, for ordinary elements, for every kind of element the fast path hands back to
// add() (NaN, Inf, the poison pattern, zero, subnormals, violations, zero bounds and
// magnitudes, MPFR-tier values), and for runs judged out of order.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <memory>
#include <random>
#include <tuple>
#include <vector>

#include "verify/judge/tensor_judge.h"

namespace ssmv::verify {
namespace {

// One element as a Sink hands it over: the kernel's float, the exact value and its figures.
struct Elements {
  std::vector<float> computed;
  std::vector<ref::HandedValue> values;
  std::vector<double> nearest, certified_error, magnitude, bound;
};

// An MPFR-tier value at the check precision.
struct Mpfr {
  mpfr_t v;
  Mpfr() { mpfr_init2(v, 127); }
  ~Mpfr() { mpfr_clear(v); }
  Mpfr(const Mpfr&) = delete;
  Mpfr& operator=(const Mpfr&) = delete;
};

// n elements of format f, the second half a copy of the first (so that the largest figures tie
// between an element and one of smaller index); `specials`: in the second half, one element in
// about 40 of a kind the fast path does not take. mpfr holds the MPFR-tier values.
Elements make_elements(Format f, int n, bool specials, uint32_t seed, std::vector<std::unique_ptr<Mpfr>>& mpfr) {
  std::normal_distribution<double> normal;
  const int range = f == Format::fp16 ? 4 : 12;  // fp16's normal range: 2^-14 to 65504
  std::uniform_int_distribution<int> exponent(-range, range), ulps(-3, 3), kind(0, 39 * 12);
  std::mt19937 rng(seed), special_rng(seed + 1000);
  Elements e;
  for (int k = 0; k < n; ++k) {
    if (k == n / 2) rng.seed(seed);  // the second half repeats the first
    double v = std::ldexp(normal(rng), exponent(rng));
    if (k % 7 == 3) v = std::ldexp(1.0, exponent(rng));  // a power of two: ties in the figures
    const Bits exact_bits = round_nearest_even(f, v);
    Bits c = exact_bits;
    for (int u = ulps(rng); u != 0; u += u < 0 ? 1 : -1) c = u < 0 ? next_down(f, c) : next_up(f, c);
    double mag = std::fabs(v) * (1 + std::fabs(normal(rng)));
    double bound = ulp_of(f, mag) * 4;
    double cert = std::fabs(v) * 0x1p-70;
    ref::HandedValue value{nullptr, v, v * 0x1p-60, 127};
    if (specials && k >= n / 2) {
      switch (kind(special_rng)) {
        case 0: c = round_nearest_even(f, std::nan("")); break;
        case 1: c = round_nearest_even(f, HUGE_VAL); break;
        case 2: c = poison_bits(f); break;
        case 3: c = round_nearest_even(f, 0.0); break;
        case 4: c = round_nearest_even(f, format_info(f).min_subnormal * 3); break;
        case 5: c = next_up(f, next_up(f, next_up(f, next_up(f, next_up(f, exact_bits))))); break;  // a violation
        case 6: bound = 0; break;
        case 7: mag = 0; break;
        case 8: mag = HUGE_VAL; break;
        case 9: v = 0; value = {nullptr, 0.0, 0.0, 127}; break;
        case 10: v = format_info(f).max_finite * 4; value = {nullptr, v, 0.0, 127}; c = round_nearest_even(f, v); break;
        case 11: {
          mpfr.push_back(std::make_unique<Mpfr>());
          mpfr_set_d(mpfr.back()->v, v, MPFR_RNDN);
          mpfr_nextabove(mpfr.back()->v);
          value = {mpfr.back()->v, 0, 0, 0};
          break;
        }
        default: break;
      }
    }
    e.computed.push_back(float(decode(f, c)));
    e.values.push_back(value);
    e.nearest.push_back(v);
    e.certified_error.push_back(cert);
    e.magnitude.push_back(mag);
    e.bound.push_back(bound);
  }
  return e;
}

TensorLayout flat_layout(int64_t n) {
  return {{"i"}, {n}, [](int64_t i) { return std::vector<int64_t>{i}; }};
}

// A double's bits: figures compared bit for bit (NaN included).
uint64_t bits(double v) { return std::bit_cast<uint64_t>(v); }

// Every field of an element (its coordinates, values, bound and judgement) as one tuple.
auto fields(const WorstElement& w) {
  const ElementJudgement& j = w.judgement;
  return std::tuple(w.index, w.coords, w.computed, w.exact_rounded, bits(w.exact), w.exact_decimal, bits(w.bound),
                    int(j.verdict), bits(j.error), bits(j.bound_usage), j.ulps, j.unwritten);
}

void expect_same_report(const TensorReport& a, const TensorReport& b) {
  EXPECT_EQ(std::tuple(a.counts, a.ulp_p50, a.ulp_p99, a.ulp_max, bits(a.max_bound_usage)),
            std::tuple(b.counts, b.ulp_p50, b.ulp_p99, b.ulp_max, bits(b.max_bound_usage)));
  EXPECT_EQ(fields(a.worst), fields(b.worst));
  ASSERT_EQ(a.bad.size(), b.bad.size());
  for (size_t i = 0; i < a.bad.size(); ++i) EXPECT_EQ(fields(a.bad[i]), fields(b.bad[i])) << "bad element " << i;
  const DifferenceAt TensorReport::*figures[] = {&TensorReport::max_abs_difference, &TensorReport::max_rel_difference,
                                                 &TensorReport::max_err_over_scale, &TensorReport::max_ulps_at_scale};
  for (auto d : figures) {
    EXPECT_EQ(std::tuple((a.*d).index, (a.*d).coords, bits((a.*d).value)),
              std::tuple((b.*d).index, (b.*d).coords, bits((b.*d).value)));
  }
  EXPECT_EQ(a.computed, b.computed);
  EXPECT_EQ(a.sharp_weights, b.sharp_weights);
  ASSERT_EQ(a.exact_nearest.size(), b.exact_nearest.size());
  for (size_t i = 0; i < a.exact_nearest.size(); ++i) {
    EXPECT_EQ(std::tuple(bits(a.exact_nearest[i]), bits(a.bounds[i]), bits(a.scales[i])),
              std::tuple(bits(b.exact_nearest[i]), bits(b.bounds[i]), bits(b.scales[i])))
        << "element " << i;
  }
}

struct Case {
  Format format;
  bool specials;
};

class AddRun : public ::testing::TestWithParam<Case> {};

TEST_P(AddRun, EqualsAddingEveryElement) {
  const Case c = GetParam();
  constexpr int n = 3000;
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    std::vector<std::unique_ptr<Mpfr>> mpfr;
    const Elements e = make_elements(c.format, n, c.specials, seed, mpfr);
    TensorJudge one("t", c.format, n, flat_layout(n), ElementDetail::elements);
    for (int i = 0; i < n; ++i) {
      one.add(i, round_nearest_even(c.format, double(e.computed[size_t(i)])),
              ref::round_nearest_even(c.format, e.values[size_t(i)]), e.nearest[size_t(i)],
              e.certified_error[size_t(i)], e.magnitude[size_t(i)], e.bound[size_t(i)], e.values[size_t(i)]);
    }
    // Runs of 700 (blocks of 256 and a remainder) from the last to the first: a later run
    // holds smaller indices than the ones judged before it, and the copies of their elements.
    TensorJudge runs("t", c.format, n, flat_layout(n), ElementDetail::elements);
    for (int first = (n - 1) / 700 * 700; first >= 0; first -= 700) {
      const size_t len = size_t(std::min(700, n - first));
      const size_t f = size_t(first);
      runs.add_run(first, std::span<const float>(&e.computed[f], len),
                   std::span<const ref::HandedValue>(&e.values[f], len), &e.nearest[f], &e.certified_error[f],
                   &e.magnitude[f], &e.bound[f]);
    }
    const TensorReport a = one.finish(), b = runs.finish();
    ASSERT_EQ(a.elements, n);
    EXPECT_GT(a.count(Verdict::within_contract), 0);  // not a vacuous comparison
    if (c.specials) EXPECT_GT(a.count(Verdict::invalid) + a.count(Verdict::violation), 0);
    SCOPED_TRACE("seed " + std::to_string(seed));
    expect_same_report(a, b);
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, AddRun,
                         ::testing::Values(Case{Format::fp32, false}, Case{Format::fp32, true},
                                           Case{Format::bf16, false}, Case{Format::bf16, true},
                                           Case{Format::fp16, false}, Case{Format::fp16, true}),
                         [](const auto& info) {
                           return std::string(format_name(info.param.format)) +
                                  (info.param.specials ? "_specials" : "_ordinary");
                         });

// The weights start as zeros (a zero weight leaves an element out), copy and compare by value,
// and clear() frees them.
TEST(SharpWeights, ZerosCopiesAndClear) {
  SharpWeights w(100003);
  ASSERT_EQ(w.size(), 100003u);
  for (size_t i = 0; i < w.size(); ++i) ASSERT_EQ(w[i], 0) << i;
  w[7] = sharp_weight_bits(0.5);
  w[100002] = sharp_weight_bits(3.0);
  SharpWeights copy = w;
  EXPECT_TRUE(copy == w);
  EXPECT_EQ(sharp_weight(copy[7]), 0.5);
  copy[0] = 1;
  EXPECT_FALSE(copy == w);
  w.clear();
  EXPECT_TRUE(w.empty());
  EXPECT_TRUE(w == SharpWeights());
}

}  // namespace
}  // namespace ssmv::verify
