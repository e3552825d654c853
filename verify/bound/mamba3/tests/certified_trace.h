// The exact values the bounds' tests need: the certified run one token at a time
// (verify/family/mamba3/certified_trace.h, the family's check runs the same) with y and the
// final four-part state as doubles (hi + lo of the certified values).
#pragma once

#include <vector>

#include "verify/family/mamba3/certified_trace.h"

namespace ssmv::bound::mamba3::testing {

struct Certified {
  ExactTrace trace;
  std::vector<double> y, angle, S, B_prev, x_prev;
};

inline std::vector<double> nearest(const ref::mamba3::CertifiedValues& v) {
  std::vector<double> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = v.hi[i] + v.lo[i];
  return out;
}

// `chunk`: the trace keeps |S| at the ends of chunks of that many tokens (1: the step's; the
// prefill's chunk size for its bound).
inline Certified certified(const ssmv::mamba3::Problem& pr, int64_t chunk = 1) {
  family::mamba3::CertifiedRun r = family::mamba3::certified_run(pr, 0, chunk);
  return {std::move(r.trace), nearest(r.y), nearest(r.angle), nearest(r.S), nearest(r.B_prev), nearest(r.x_prev)};
}

}  // namespace ssmv::bound::mamba3::testing
