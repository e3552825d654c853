// What the Mamba-3 bound tests measure: error ÷ bound of every element of each kind of tensor over
// a suite of cases, the kernel's (an emulation's) outputs against the certified reference.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "spec/format.h"
#include "verify/bound/mamba3/step_bound.h"
#include "verify/bound/mamba3/step_emulation.h"
#include "reference/mamba3/tests/test_problem.h"
#include "verify/bound/mamba3/tests/certified_trace.h"

namespace ssmv::bound::mamba3::testing {

// A realistic problem (upstream's draws, reference/mamba3/tests/test_problem.h) in the given state
// and output formats (the initial state rounded to the state format), without D or z if asked.
inline ssmv::mamba3::Problem realistic_problem(const std::vector<int64_t>& cu, int64_t H, int64_t P, int64_t N,
                                               int64_t G, int64_t R, uint64_t seed, bool initial, Format state,
                                               Format output, bool D, bool z) {
  ssmv::mamba3::Problem pr = ref::mamba3::testing::random_problem(cu, H, P, N, G, R, seed, initial);
  pr.formats.state = state;
  pr.formats.output = output;
  if (!D) pr.D.clear();
  if (!z) pr.z.clear();
  for (std::vector<float>* v : {&pr.initial.S, &pr.initial.B_prev, &pr.initial.x_prev}) {
    for (float& e : *v) e = float(round_value(state, e));
  }
  return pr;
}

// Error ÷ bound of every element of one tensor kind, over the suite.
struct Usage {
  std::vector<double> ratios;
  double worst = 0;
  std::string where;
  void add(double err, double bound, const std::string& what) {
    const double r = bound > 0 ? err / bound : (err > 0 ? std::numeric_limits<double>::infinity() : 0.0);
    ratios.push_back(r);
    if (r > worst || ratios.size() == 1) {
      worst = std::max(worst, r);
      if (r >= worst) where = what;
    }
  }
  double median() const {
    if (ratios.empty()) return 0;
    std::vector<double> v = ratios;
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  }
};

inline double circular(double a, double b) {
  const double two_pi = 2 * 3.141592653589793;
  double d = std::fmod(std::fabs(a - b), two_pi);
  return std::min(d, two_pi - d);
}

struct Suite {
  Usage y_bf16, y_fp32, angle, S_fp32, S_bf16, B_fp32, B_bf16, x_prev;
  // Every element of one case's five tensors (the angle on the circle).
  void add(const std::string& name, Format state, Format output, const EmulatedSteps& e, const Certified& ref,
           const StepBounds& b) {
    const std::string tag = name + " ";
    for (size_t i = 0; i < b.y.size(); ++i) {
      (output == Format::bf16 ? y_bf16 : y_fp32)
          .add(std::fabs(double(e.y[i]) - ref.y[i]), b.y[i], tag + "y[" + std::to_string(i) + "]");
    }
    for (size_t i = 0; i < b.angle.size(); ++i) {
      angle.add(circular(e.angle[i], ref.angle[i]), b.angle[i], tag + "angle[" + std::to_string(i) + "]");
    }
    for (size_t i = 0; i < b.S.size(); ++i) {
      (state == Format::fp32 ? S_fp32 : S_bf16)
          .add(std::fabs(double(e.S[i]) - ref.S[i]), b.S[i], tag + "S[" + std::to_string(i) + "]");
    }
    for (size_t i = 0; i < b.B_prev.size(); ++i) {
      (state == Format::fp32 ? B_fp32 : B_bf16)
          .add(std::fabs(double(e.B_prev[i]) - ref.B_prev[i]), b.B_prev[i], tag + "B_prev[" + std::to_string(i) + "]");
    }
    for (size_t i = 0; i < b.x_prev.size(); ++i) {
      x_prev.add(std::fabs(double(e.x_prev[i]) - ref.x_prev[i]), b.x_prev[i], tag + "x_prev[" + std::to_string(i) + "]");
    }
  }
  double worst() const {
    return std::max({y_bf16.worst, y_fp32.worst, angle.worst, S_fp32.worst, S_bf16.worst, B_fp32.worst, B_bf16.worst,
                     x_prev.worst});
  }
  void expect_within() const {
    for (const Usage* u : {&y_bf16, &y_fp32, &angle, &S_fp32, &S_bf16, &B_fp32, &B_bf16, &x_prev}) {
      EXPECT_LE(u->worst, 1.0) << "bound exceeded at " << u->where;
    }
  }
  void print() const {
    const std::pair<const char*, const Usage*> rows[] = {{"y bf16", &y_bf16},   {"y fp32", &y_fp32},
                                                         {"angle", &angle},     {"S fp32", &S_fp32},
                                                         {"S bf16", &S_bf16},   {"B_prev fp32", &B_fp32},
                                                         {"B_prev bf16", &B_bf16}, {"x_prev", &x_prev}};
    for (const auto& [name, u] : rows) {
      if (u->ratios.empty()) continue;
      std::printf("%-12s elements %7zu  error/bound median %.3g  max %.3g  (%s)\n", name, u->ratios.size(),
                  u->median(), u->worst, u->where.c_str());
    }
  }
};

}  // namespace ssmv::bound::mamba3::testing
