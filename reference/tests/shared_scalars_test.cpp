// Options::scalars (reference/reference.h): a streamed run that reads compute_scalars' δ and
// decay hands over every value, magnitude and certified error bit for bit as one that computes
// them token by token; values computed at another check precision are refused.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "reference/reference.h"
#include "spec/realistic_problem.h"
#include "spec/tests/error_text.h"

namespace ssmv::ref {
namespace {

using testing::error_of;

// Every double handed over, per (sequence, head, token or position, kind), in the order given.
class RecordingSink : public Sink {
 public:
  using Key = std::tuple<int64_t, int64_t, int64_t, int>;
  void token(const TokenOutputs& o) override {
    std::vector<double> v{o.delta, o.decay};
    for (auto s : {o.y_nearest, o.y_magnitude, o.y_certified_error, o.sum_abs_CS, o.sum_abs_C_Sabs, o.abs_Dx,
                   o.y_ungated}) {
      v.insert(v.end(), s.begin(), s.end());
    }
    for (const HandedValue& h : o.y) {
      v.insert(v.end(), {h.hi, h.lo});
      mpfr_values += h.mpfr != nullptr;
    }
    keep({o.sequence, o.head, o.token, 0}, std::move(v));
  }
  void state(const StateOutputs& o) override {
    std::vector<double> v;
    for (auto s : {o.nearest, o.magnitude, o.certified_error}) v.insert(v.end(), s.begin(), s.end());
    for (const HandedValue& h : o.value) v.insert(v.end(), {h.hi, h.lo});
    keep({o.sequence, o.head, o.position, o.final ? 2 : 1}, std::move(v));
  }
  std::map<Key, std::vector<double>> kept;
  std::atomic<int64_t> mpfr_values{0};  // y values the MPFR tier handed over

 private:
  void keep(Key k, std::vector<double> v) {
    std::lock_guard<std::mutex> lock(mutex_);
    kept[k] = std::move(v);
  }
  std::mutex mutex_;
};

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

TEST(SharedScalars, StreamedRunReadsThemAndHandsOverTheSameBits) {
  // Two sequences (one with an initial state), z and D: every branch of the fast tier's token.
  const Problem pr = realistic_problem(Shape{{0, 37, 60}, 4, 8, 16, 2}, Formats{Format::bf16, Format::fp32, Format::bf16},
                                       19);
  Options plain;
  plain.threads = 2;
  plain.state_positions = {20, 50};
  const ExactScalars scalars = compute_scalars(pr, plain);
  Options shared = plain;
  shared.scalars = &scalars;
  RecordingSink a, b;
  compute_streaming(pr, a, plain);
  compute_streaming(pr, b, shared);
  ASSERT_EQ(a.kept.size(), b.kept.size());
  ASSERT_GT(a.kept.size(), 0u);
  for (const auto& [key, values] : a.kept) {
    const auto it = b.kept.find(key);
    ASSERT_NE(it, b.kept.end());
    EXPECT_TRUE(same_bits(values, it->second)) << "sequence " << std::get<0>(key) << " head " << std::get<1>(key)
                                               << " token/position " << std::get<2>(key) << " kind " << std::get<3>(key);
  }
}

// The run reads the table: an entry marked as not a number sends its (sequence, head) pair to the
// MPFR tier, which computes its own δ and decay (the same values, now as MPFR values).
TEST(SharedScalars, AnEntryMarkedUnusableSendsItsPairToTheMpfrTier) {
  const Problem pr = realistic_problem(Shape{{0, 12}, 2, 4, 8, 1}, Formats{Format::bf16, Format::fp32, Format::bf16}, 5);
  Options plain;
  ExactScalars scalars = compute_scalars(pr, plain);
  RecordingSink a;
  Options shared = plain;
  shared.scalars = &scalars;
  compute_streaming(pr, a, shared);
  EXPECT_EQ(a.mpfr_values.load(), 0) << "the fast tier settles this small problem";
  scalars.decay_up[scalars.entry[size_t(pr.dt_index(7, 1))]] = std::numeric_limits<double>::quiet_NaN();
  RecordingSink b;
  compute_streaming(pr, b, shared);
  EXPECT_GT(b.mpfr_values.load(), 0);
}

// The values are kept once per (head, distinct dt): pairs of one head with the same dt bits name
// one entry, other heads (their own dt_bias and A) their own, and each entry holds compute()'s
// values of every pair that names it.
TEST(SharedScalars, OneEntryPerHeadAndDistinctDt) {
  Problem pr = realistic_problem(Shape{{0, 40, 64}, 3, 4, 8, 1}, Formats{Format::bf16, Format::fp32, Format::bf16}, 11);
  const int64_t T = pr.shape.num_tokens(), H = pr.shape.H;
  std::vector<float> dt(size_t(T * H));
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t h = 0; h < H; ++h) dt[size_t(pr.dt_index(t, h))] = 0.25f * float(1 + (t % 5));  // 5 values a head
  }
  pr.dt = FormatValues(dt);
  const ExactScalars scalars = compute_scalars(pr);
  ASSERT_EQ(scalars.pairs(), size_t(T * H));
  EXPECT_EQ(scalars.delta.size(), size_t(5 * H));
  std::map<std::pair<int64_t, float>, uint32_t> seen;
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t h = 0; h < H; ++h) {
      const uint32_t e = scalars.entry[size_t(pr.dt_index(t, h))];
      const auto [it, fresh] = seen.emplace(std::pair{h, dt[size_t(pr.dt_index(t, h))]}, e);
      EXPECT_EQ(it->second, e) << "token " << t << " head " << h;
    }
  }
  std::map<uint32_t, int> owners;
  for (const auto& [key, e] : seen) ++owners[e];
  for (const auto& [e, n] : owners) EXPECT_EQ(n, 1) << "entry " << e << " is named by several (head, dt)";
  const ExactResult r = compute(pr);
  for (size_t k = 0; k < scalars.pairs(); ++k) {
    EXPECT_EQ(scalars.delta_column()[k], r.delta[k]) << "pair " << k;
    EXPECT_EQ(scalars.decay_column()[k], r.decay[k]) << "pair " << k;
  }
}

// A table whose entries do not match its pairs (built or edited elsewhere) is refused, not read
// out of bounds.
TEST(SharedScalars, AnEntryOutsideTheTablesIsRefused) {
  const Problem pr = realistic_problem(Shape{{0, 6}, 2, 4, 8, 1}, Formats{Format::bf16, Format::fp32, Format::bf16}, 4);
  ExactScalars scalars = compute_scalars(pr);
  scalars.entry[3] = uint32_t(scalars.delta.size());
  Options o;
  o.scalars = &scalars;
  RecordingSink sink;
  const std::string n = std::to_string(scalars.delta.size());
  EXPECT_EQ(error_of([&] { compute_streaming(pr, sink, o); }),
            "reference: Options::scalars: 'entry' of pair 3 = " + n + " is outside the tables' " + n + " values");
  EXPECT_TRUE(sink.kept.empty());  // refused before any worker ran
  scalars.entry[3] = 0;
  scalars.decay_up.pop_back();
  EXPECT_EQ(error_of([&] { compute_streaming(pr, sink, o); }),
            "reference: Options::scalars: table 'decay_up' holds " + std::to_string(scalars.decay_up.size()) +
                " values, 'delta' " + n);
}

TEST(SharedScalars, ValuesOfAnotherPrecisionAreRefused) {
  const Problem pr = realistic_problem(Shape{{0, 5}, 2, 4, 8, 1}, Formats{Format::bf16, Format::fp32, Format::bf16}, 3);
  Options other;
  other.check_precision_bits = 200;
  const ExactScalars scalars = compute_scalars(pr, other);
  Options o;
  o.scalars = &scalars;
  RecordingSink sink;
  EXPECT_EQ(error_of([&] { compute_streaming(pr, sink, o); }),
            "reference: Options::scalars: computed at 200 bits; this run's check precision is " +
                std::to_string(o.resolved_check_precision_bits()) + " bits");
}

}  // namespace
}  // namespace ssmv::ref
