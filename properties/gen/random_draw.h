// Draws from rapidcheck's splittable Random (the only randomness the generators use, so a
// seed fixes every case). Box–Muller and log-uniform use the C library's log/cos/exp: on
// glibc every machine gives the same doubles; another libm could move a drawn double by an
// ULP, which changes the value rounded to fp32/bf16/fp16 only near a rounding boundary
// (probability about 2^-29 per fp32 value).
#pragma once

#include <rapidcheck.h>

#include <cmath>

namespace ssmv::prop {

// Uniform in [0, 1) with 53 random bits.
inline double draw_uniform(rc::Random& r) { return double(r.next() >> 11) * 0x1p-53; }

// N(0, 1) by Box–Muller (one of the pair).
inline double draw_normal(rc::Random& r) {
  const double u1 = 1.0 - draw_uniform(r), u2 = draw_uniform(r);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

}  // namespace ssmv::prop
