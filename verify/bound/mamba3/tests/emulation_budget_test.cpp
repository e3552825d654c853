// The host emulation's transcendentals (step_emulation.h) hold the budgets of the
// host_emulation contract (step_contract.cpp), on every bf16 argument (the formats x, z, trap and
// angles arrive in) and on 2^22 fp32 arguments per function spread over the ranges the kernel
// evaluates. The exact values come from the double functions of the C++ library (a few 2^-53
// relative: counted against the budget as 2^-50·|exact|).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "spec/format.h"
#include "verify/bound/error_model.h"
#include "verify/bound/mamba3/step_contract.h"
#include "verify/bound/mamba3/step_emulation.h"

namespace ssmv::bound::mamba3 {
namespace {

using ssmv::mamba3::kLog2eF32;
using ssmv::mamba3::StepContract;

std::vector<float> every_bf16() {
  std::vector<float> v;
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const uint32_t bits = b << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    if (std::isfinite(f)) v.push_back(f);
  }
  return v;
}

std::vector<float> uniform(double lo, double hi, uint64_t seed, int n = 1 << 22) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) f = float(d(rng));
  return v;
}

// Largest error ÷ budget over `args`; fails on the first argument over budget.
double check(const TranscendentalBudget& b, const std::vector<float>& args, const std::function<float(float)>& f,
             const std::function<double(double)>& exact) {
  double worst = 0;
  for (float x : args) {
    if (x < b.arg_lo || x > b.arg_hi) continue;
    const double e = exact(x);
    const double err = std::fabs(double(f(x)) - e) + 0x1p-50 * std::fabs(e);
    const double allowed = transcendental_error(b, x, std::fabs(e));
    if (!(err <= allowed)) {
      ADD_FAILURE() << b.function << "(" << std::hexfloat << x << "): error " << err << " over budget " << allowed;
      return worst;
    }
    worst = std::max(worst, err / allowed);
  }
  return worst;
}

TEST(Mamba3BoundEmulationBudgets, LibraryFunctionsHoldTheHostEmulationBudgets) {
  const StepContract c = host_emulation();
  const Transcendentals f = library_transcendentals();
  const std::vector<float> bf16 = every_bf16();
  const auto sig = [](double x) { return 1 / (1 + std::exp(-x)); };
  struct Row {
    const TranscendentalBudget* b;
    std::vector<std::vector<float>> args;
    std::function<float(float)> f;
    std::function<double(double)> exact;
  };
  const std::vector<Row> rows = {
      {&c.tanh, {bf16, uniform(-10, 10, 1)}, f.tanh, [](double x) { return std::tanh(x); }},
      {&c.cos, {uniform(-0.5, 7, 2)}, f.cos, [](double x) { return std::cos(x); }},
      {&c.sin, {uniform(-0.5, 7, 3)}, f.sin, [](double x) { return std::sin(x); }},
      {&c.exp, {uniform(-126, 0, 4), uniform(-1, 1, 5), uniform(0, 88, 6)},
       [&](float a) { return f.exp2(a * kLog2eF32); }, [](double x) { return std::exp(x); }},
      {&c.sigmoid, {bf16, uniform(-100, 100, 7), uniform(-4, 4, 8)}, f.sigmoid, sig},
      {&c.silu, {bf16, uniform(-100, 100, 9), uniform(-4, 4, 10)}, [&](float z) { return z * f.sigmoid(z); },
       [&](double z) { return z * sig(z); }},
  };
  for (const Row& r : rows) {
    double worst = 0;
    for (const auto& a : r.args) worst = std::max(worst, check(*r.b, a, r.f, r.exact));
    std::printf("%-8s largest error / budget %.3f\n", r.b->function.c_str(), worst);
    EXPECT_GT(worst, 0.0) << r.b->function;
  }
}

}  // namespace
}  // namespace ssmv::bound::mamba3
