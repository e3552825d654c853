// Double-word ("double-double") arithmetic for the reference's fast tier (tiered.cpp).
//
// A value is hi + lo with hi = RN(hi + lo). The algorithms and their relative error
// bounds (u = 2^-53, no underflow or overflow) are those of Joldes, Muller and Popescu,
// "Tight and rigorous error bounds for basic building blocks of double-word arithmetic",
// ACM TOMS 44(2), 2017 (JMP below), as corrected by Muller and Rideau's formal proofs
// (ACM TOMS 48(1), 2022). The constants used by the error analysis
// (docs/reference-tiers.md) are those bounds rounded up, so that the u^3 terms and the
// published corrections are covered:
//   add(DD, DD)     JMP Algorithm 6 (AccurateDWPlusDW)   3u^2/(1-4u)  -> kAddErr = 4u^2
//   add(DD, double) JMP Algorithm 4 (DWPlusFP)           2u^2         -> kAddErr = 4u^2
//   mul(DD, double) JMP Algorithm 9 (DWTimesFP3, FMA)    2u^2         -> kMulFpErr = 3u^2
//   mul(DD, DD)     JMP Algorithm 12 (DWTimesDW3, FMA)   5u^2         -> kMulErr = 6u^2
// Each error is relative to the exact result of the operation (for the additions: to
// |x + y|, so it holds under cancellation). FMA is std::fma: one rounding whether the
// compiler emits the instruction or calls libm, so the bits do not depend on the target.
#pragma once

#include <cmath>

namespace ssmv::ref::dd {

inline constexpr double kU2 = 0x1p-106;  // u^2
inline constexpr double kAddErr = 4 * kU2;
inline constexpr double kMulFpErr = 3 * kU2;
inline constexpr double kMulErr = 6 * kU2;

// hi + lo: a double-double (T = double), or four of them lane by lane (T = V4, a GCC vector
// of four doubles: each lane's operations are the scalar ones, so its bits are the same).
template <class T>
struct Pair {
  T hi{}, lo{};
};
using DD = Pair<double>;
using V4 = double __attribute__((vector_size(32)));
using DD4 = Pair<V4>;

// s + e = a + b exactly (Knuth's TwoSum, exact also under underflow).
template <class T>
inline Pair<T> two_sum(T a, T b) {
  const T s = a + b;
  const T bb = s - a;
  const T e = (a - (s - bb)) + (b - bb);
  return {s, e};
}
// s + e = a + b exactly when the exponent of a is at least that of b (Dekker).
template <class T>
inline Pair<T> fast_two_sum(T a, T b) {
  const T s = a + b;
  return {s, b - (s - a)};
}
// p + e = a·b exactly unless e underflows (then |error| <= 2^-1075).
inline DD two_prod(double a, double b) {
  const double p = a * b;
  return {p, std::fma(a, b, -p)};
}

template <class T>
inline Pair<T> add(Pair<T> x, Pair<T> y) {  // JMP Algorithm 6
  const Pair<T> s = two_sum(x.hi, y.hi);
  const Pair<T> t = two_sum(x.lo, y.lo);
  const Pair<T> v = fast_two_sum(s.hi, s.lo + t.hi);
  return fast_two_sum(v.hi, t.lo + v.lo);
}
inline DD add(DD x, double y) {  // JMP Algorithm 4
  const DD s = two_sum(x.hi, y);
  return fast_two_sum(s.hi, x.lo + s.lo);
}
inline DD mul(DD x, double y) {  // JMP Algorithm 9
  const DD c = two_prod(x.hi, y);
  return fast_two_sum(c.hi, std::fma(x.lo, y, c.lo));
}
inline DD mul(DD x, DD y) {  // JMP Algorithm 12
  const DD c = two_prod(x.hi, y.hi);
  const double tl1 = std::fma(x.hi, y.lo, x.lo * y.lo);
  const double cl2 = std::fma(x.lo, y.hi, tl1);
  return fast_two_sum(c.hi, c.lo + cl2);
}

}  // namespace ssmv::ref::dd
