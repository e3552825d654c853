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
#include <tuple>
#include <vector>

#include "reference/reference.h"
#include "spec/realistic_problem.h"

namespace ssmv::ref {
namespace {

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
  scalars.decay_up[size_t(pr.dt_index(7, 1))] = std::numeric_limits<double>::quiet_NaN();
  RecordingSink b;
  compute_streaming(pr, b, shared);
  EXPECT_GT(b.mpfr_values.load(), 0);
}

TEST(SharedScalars, ValuesOfAnotherPrecisionAreRefused) {
  const Problem pr = realistic_problem(Shape{{0, 5}, 2, 4, 8, 1}, Formats{Format::bf16, Format::fp32, Format::bf16}, 3);
  Options other;
  other.check_precision_bits = 200;
  const ExactScalars scalars = compute_scalars(pr, other);
  Options o;
  o.scalars = &scalars;
  RecordingSink sink;
  EXPECT_THROW(compute_streaming(pr, sink, o), std::invalid_argument);
}

}  // namespace
}  // namespace ssmv::ref
