#include "reference/mamba3/reference.h"

#include <string>
#include <utility>

#include "reference/mamba3/pair_run.h"

namespace ssmv::ref::mamba3 {
namespace {

using ssmv::ProblemError;

void check_options(const Options& o) {
  if (o.precision_bits < 24) {
    throw ProblemError("mamba3 reference option 'precision_bits' = " + std::to_string(o.precision_bits) +
                       ": must be >= 24 (every input exact)");
  }
  if (o.check_extra_bits < 1) {
    throw ProblemError("mamba3 reference option 'check_extra_bits' = " + std::to_string(o.check_extra_bits) +
                       ": must be >= 1");
  }
  if (o.certified_bits < 1) {
    throw ProblemError("mamba3 reference option 'certified_bits' = " + std::to_string(o.certified_bits) +
                       ": must be >= 1");
  }
}

// Every pair's state at both precisions, zeros (run() starts them from the problem).
CarriedState fresh_state(const Problem& pr, const Options& o) {
  const ssmv::mamba3::Shape& s = pr.shape;
  CarriedState c{
      s.num_sequences(), s.H, s.P, s.N, s.R, o.precision_bits, o.precision_bits + o.check_extra_bits, {}, {}};
  c.working.reserve(size_t(c.sequences * s.H));
  c.check.reserve(size_t(c.sequences * s.H));
  for (int64_t i = 0; i < c.sequences * s.H; ++i) {
    c.working.emplace_back(s.P, s.N, s.R, c.working_bits);
    c.check.emplace_back(s.P, s.N, s.R, c.check_bits);
  }
  return c;
}

void check_carried(const Problem& pr, const CarriedState& c, const Options& o) {
  const ssmv::mamba3::Shape& s = pr.shape;
  const auto mismatch = [](const char* field, int64_t have, int64_t want) {
    if (have != want) {
      throw ProblemError(std::string("mamba3 decode: carried state field '") + field + "' = " + std::to_string(have) +
                         ", the problem and options need " + std::to_string(want));
    }
  };
  mismatch("sequences", c.sequences, s.num_sequences());
  mismatch("H", c.H, s.H);
  mismatch("P", c.P, s.P);
  mismatch("N", c.N, s.N);
  mismatch("R", c.R, s.R);
  mismatch("working_bits", c.working_bits, o.precision_bits);
  mismatch("check_bits", c.check_bits, o.precision_bits + o.check_extra_bits);
  if (pr.has_initial_state()) {
    throw ProblemError(
        "mamba3 decode: problem field 'initial' must be empty: the sequences continue from the carried state");
  }
}

// Runs every pair over its tokens from `carried` (started from the problem first when
// `start` is set), certifying each y and, after each sequence, its four-part state.
Result run(const Problem& pr, CarriedState& carried, const Options& o, bool start) {
  const ssmv::mamba3::Shape& s = pr.shape;
  const int64_t S = s.num_sequences();
  Result res;
  res.precision_bits = int(carried.working_bits);
  res.check_precision_bits = int(carried.check_bits);
  res.y.resize(size_t(s.num_tokens() * s.H * s.P));
  res.angle_state.resize(size_t(S * s.H * s.R));
  if (o.certify_state) {
    res.state.resize(size_t(S * s.H * s.P * s.N));
    res.B_prev.resize(size_t(S * s.H * s.N));
    res.x_prev.resize(size_t(S * s.H * s.P));
  }

  // The magnitudes certify against the check run's: the working run needs none.
  PairRun working(s, carried.working_bits, /*magnitudes=*/false), check(s, carried.check_bits);
  AgreementCheck agree(o.certified_bits, carried.check_bits);
  Num working_angle, check_angle, magnitude;
  working_angle.init(carried.working_bits);
  check_angle.init(carried.check_bits);
  magnitude.init(kMagnitudeBits);
  for (int64_t seq = 0; seq < S; ++seq) {
    for (int64_t h = 0; h < s.H; ++h) {
      PairState& w = carried.working[size_t(seq * s.H + h)];
      PairState& c = carried.check[size_t(seq * s.H + h)];
      if (start) {
        working.start(pr, seq, h, w);
        check.start(pr, seq, h, c);
      }
      for (int64_t t = s.cu_seqlens[seq]; t < s.cu_seqlens[seq + 1]; ++t) {
        working.step(pr, t, h, w);
        check.step(pr, t, h, c);
        for (int64_t p = 0; p < s.P; ++p) {
          agree.accept(res.y, size_t(pr.x_index(t, h, p)), working.y(p), check.y(p), check.y_magnitude(p), "y");
        }
      }
      for (int64_t r = 0; r < s.R; ++r) {
        working.reduced_angle(w, r, working_angle.get());
        check.reduced_angle(c, r, check_angle.get());
        agree.accept(res.angle_state, size_t(pr.angle_state_index(seq, h, r)), working_angle.get(), check_angle.get(),
                     c.angle_mag[size_t(r)].get(), "angle_state");
      }
      if (!o.certify_state) continue;
      for (int64_t p = 0; p < s.P; ++p) {
        for (int64_t n = 0; n < s.N; ++n) {
          const size_t k = size_t(p * s.N + n);
          agree.accept(res.state, size_t(pr.state_index(seq, h, p, n)), w.S[k].get(), c.S[k].get(), c.S_mag[k].get(),
                       "state");
        }
        mpfr_abs(magnitude.get(), c.x_prev[size_t(p)].get(), MPFR_RNDU);
        agree.accept(res.x_prev, size_t(pr.x_prev_index(seq, h, p)), w.x_prev[size_t(p)].get(),
                     c.x_prev[size_t(p)].get(), magnitude.get(), "x_prev");
      }
      for (int64_t n = 0; n < s.N; ++n) {
        agree.accept(res.B_prev, size_t(pr.b_prev_index(seq, h, n)), w.b_prev[size_t(n)].get(),
                     c.b_prev[size_t(n)].get(), c.b_prev_mag[size_t(n)].get(), "B_prev");
      }
    }
  }
  return res;
}

}  // namespace

Result compute(const Problem& problem, const Options& options) {
  ssmv::mamba3::validate(problem);
  check_options(options);
  CarriedState carried = fresh_state(problem, options);
  Result r = run(problem, carried, options, true);
  r.carried = std::move(carried);
  return r;
}

Result decode(const Problem& problem, const CarriedState& carried, const Options& options) {
  CarriedState next = carried.copy();
  Result r = advance(problem, next, options);
  r.carried = std::move(next);
  return r;
}

Result advance(const Problem& problem, CarriedState& carried, const Options& options) {
  ssmv::mamba3::validate(problem);
  check_options(options);
  check_carried(problem, carried, options);
  return run(problem, carried, options, false);
}

}  // namespace ssmv::ref::mamba3
