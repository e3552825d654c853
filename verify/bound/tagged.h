// The two value types the bounds are written in (one template per bound): double, the
// bound itself; Tagged, the same bound kept as one part per BoundSource, whose parts sum
// to the double's value (each term belongs to exactly one source; a term that scales an
// error — (a + Δa)·E — scales every part of it). Internal to verify/bound/.
#pragma once

#include <array>
#include <cmath>
#include <type_traits>

#include "verify/bound/source.h"

namespace ssmv::bound {

struct Tagged {
  std::array<double, kBoundSources> v{};
  Tagged& operator+=(const Tagged& o) {
    for (size_t i = 0; i < kBoundSources; ++i) v[i] += o.v[i];
    return *this;
  }
};
inline Tagged operator+(Tagged a, const Tagged& b) { return a += b; }
inline Tagged operator*(double s, Tagged a) {
  for (double& x : a.v) x *= s;
  return a;
}
inline Tagged operator*(const Tagged& a, double s) { return s * a; }

inline double total(double x) { return x; }
inline double total(const Tagged& t) {
  double s = 0;
  for (double x : t.v) s += x;
  return s;
}

// Makes tagged terms: `at(source, x)` is x (times the source's weight, when given).
template <class V>
class Tagger {
 public:
  explicit Tagger(const SourceWeights* w) : w_(w) {}
  V at(BoundSource s, double x) const {
    const double y = w_ != nullptr ? (*w_)[s] * x : x;
    if constexpr (std::is_same_v<V, double>) {
      return y;
    } else {
      V t;
      t.v[size_t(s)] = y;
      return t;
    }
  }
  // `v` rescaled to total `target` (a smooth function of an error, e.g. a·expm1(Δw) of Δw,
  // split like its argument); all of it to `fallback` when v is zero.
  V like(const V& v, double target, BoundSource fallback) const {
    if constexpr (std::is_same_v<V, double>) return target;
    const double t = total(v);
    if (t > 0) return (target / t) * v;
    return target == 0 ? V{} : at(fallback, target);
  }

 private:
  const SourceWeights* w_;
};

// The larger of two errors, by total (the mma chain's two models).
template <class V>
const V& larger(const V& a, const V& b) {
  return total(a) >= total(b) ? a : b;
}

}  // namespace ssmv::bound

namespace ssmv::bound {

// One element's bound as its parts per source (attribution.h turns them into shares):
// only the element's sequence, head and dim are evaluated. which/index as in BoundOf.
// y_element: the element's y when `in` holds no y vectors (a streamed check's worst y
// element, sequential_bound.h YElement); null: read from in's y vectors.
struct SequentialInput;
struct YElement;
struct ChunkedInput;
Tagged sequential_bound_parts(const SequentialInput& in, BoundOf which, int64_t index,
                              const YElement* y_element = nullptr);
Tagged chunked_bound_parts(const ChunkedInput& in, BoundOf which, int64_t index);

}  // namespace ssmv::bound
