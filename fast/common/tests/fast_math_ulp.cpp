#include "fast/common/tests/fast_math_ulp.h"

#include <mpfr.h>

#include <cmath>
#include <cstring>
#include <random>

#include "fast/common/fast_math.h"
#include "spec/format.h"

namespace ssmv::fm_test {
namespace {
// 128 bits: the exact value rounded to double carries an error below 2^-52 relative
// (MPFR rounds correctly at 128 bits, then once more to double), negligible against the
// 2^-24 of one fp32 ULP.
constexpr mpfr_prec_t kPrecision = 128;
}  // namespace

std::string function_name(Function f) {
  switch (f) {
    case Function::exp: return "exp";
    case Function::log1p: return "log1p";
    case Function::softplus: return "softplus";
    case Function::sigmoid: return "sigmoid";
    case Function::silu: return "silu";
    case Function::tanh: return "tanh";
    case Function::cos: return "cos";
    case Function::sin: return "sin";
  }
  return "?";
}

double exact(Function f, float x) {
  mpfr_t v, one;
  mpfr_init2(v, kPrecision);
  mpfr_init2(one, kPrecision);
  mpfr_set_flt(v, x, MPFR_RNDN);
  switch (f) {
    case Function::exp: mpfr_exp(v, v, MPFR_RNDN); break;
    case Function::log1p: mpfr_log1p(v, v, MPFR_RNDN); break;
    case Function::softplus:  // max(x, 0) + log1p(e^-|x|): no overflow of e^x for large x
      mpfr_set_flt(one, x > 0 ? x : 0.0f, MPFR_RNDN);
      mpfr_abs(v, v, MPFR_RNDN);
      mpfr_neg(v, v, MPFR_RNDN);
      mpfr_exp(v, v, MPFR_RNDN);
      mpfr_log1p(v, v, MPFR_RNDN);
      mpfr_add(v, v, one, MPFR_RNDN);
      break;
    case Function::sigmoid:  // 1 / (1 + e^-x)
      mpfr_neg(v, v, MPFR_RNDN);
      mpfr_exp(v, v, MPFR_RNDN);
      mpfr_add_ui(v, v, 1, MPFR_RNDN);
      mpfr_set_ui(one, 1, MPFR_RNDN);
      mpfr_div(v, one, v, MPFR_RNDN);
      break;
    case Function::silu:  // x / (1 + e^-x)
      mpfr_set_flt(one, x, MPFR_RNDN);
      mpfr_neg(v, v, MPFR_RNDN);
      mpfr_exp(v, v, MPFR_RNDN);
      mpfr_add_ui(v, v, 1, MPFR_RNDN);
      mpfr_div(v, one, v, MPFR_RNDN);
      break;
    case Function::tanh: mpfr_tanh(v, v, MPFR_RNDN); break;
    case Function::cos: mpfr_cos(v, v, MPFR_RNDN); break;
    case Function::sin: mpfr_sin(v, v, MPFR_RNDN); break;
  }
  const double d = mpfr_get_d(v, MPFR_RNDN);
  mpfr_clear(v);
  mpfr_clear(one);
  return d;
}

float computed(Function f, float x) {
  switch (f) {
    case Function::exp: return fm::exp(x);
    case Function::log1p: return fm::log1p(x);
    case Function::softplus: return fm::softplus(x);
    case Function::sigmoid: return fm::sigmoid(x);
    case Function::silu: return fm::silu(x);
    case Function::tanh: return fm::tanh(x);
    case Function::cos: return fm::cos(x);
    case Function::sin: return fm::sin(x);
  }
  return 0;
}

std::vector<float> arguments(float lo, float hi, int64_t random_count, uint64_t seed) {
  std::vector<float> args;
  for (uint32_t b = 0; b < 0x10000u; ++b) {
    const double v = decode(Format::bf16, b);
    if (v >= lo && v <= hi) args.push_back(static_cast<float>(v));
  }
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(lo, hi);
  for (int64_t i = 0; i < random_count; ++i) {
    if (i % 2 == 0) {
      args.push_back(uniform(rng));
      continue;
    }
    for (;;) {  // a random bit pattern inside [lo, hi]: covers every binade evenly
      const uint32_t b = static_cast<uint32_t>(rng());
      float v;
      std::memcpy(&v, &b, sizeof v);
      if (v >= lo && v <= hi) {
        args.push_back(v);
        break;
      }
    }
  }
  return args;
}

UlpStats measure(Function f, const std::vector<float>& args) {
  UlpStats s;
  for (float x : args) {
    const double want = exact(f, x);
    const double got = computed(f, x);
    const double err = std::fabs(got - want);
    const double ulps = err / ulp_of(Format::fp32, want);
    if (ulps > s.max_ulp || std::isnan(ulps)) {
      s.max_ulp = std::isnan(ulps) ? INFINITY : ulps;
      s.worst_arg = x;
    }
    if (err > s.max_abs) s.max_abs = err;
    ++s.count;
  }
  return s;
}

}  // namespace ssmv::fm_test
