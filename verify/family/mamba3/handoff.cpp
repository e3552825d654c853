#include "verify/family/mamba3/handoff.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "verify/bound/mamba3/bound_terms.h"
#include "verify/bound/mamba3/prefill_bound.h"
#include "verify/bound/mamba3/prefill_emulation.h"
#include "verify/family/mamba3/certified_trace.h"

namespace ssmv::family::mamba3 {
namespace {

using bound::mamba3::ExactTrace;
using bound::mamba3::StepBounds;
using ssmv::mamba3::Problem;

// Tokens [first, first + count) of a one-pair trace whose |S| rows [row0, row0 + rows) belong to
// them.
ExactTrace slice(const ExactTrace& t, int64_t first, int64_t count, int64_t row0, int64_t rows, int64_t P, int64_t N,
                 int64_t R) {
  const auto part = [](const std::vector<double>& v, int64_t width, int64_t from, int64_t n) {
    return std::vector<double>(v.begin() + from * width, v.begin() + (from + n) * width);
  };
  return {part(t.angle, R, first, count), part(t.angle_error, R, first, count), part(t.S_abs, P * N, row0, rows),
          part(t.y_abs, P, first, count)};
}

}  // namespace

StepBounds handoff_bounds(const Problem& pair, const Handoff& h, const ExactTrace& exact) {
  const int64_t T = pair.shape.num_tokens(), P = pair.shape.P, N = pair.shape.N, R = pair.shape.R;
  const int64_t K = std::min(h.prefill_tokens, T);
  if (pair.shape.num_sequences() != 1 || pair.shape.H != 1) {
    throw std::invalid_argument("handoff_bounds: one sequence and one head expected");
  }
  if (K < 1) throw std::invalid_argument("handoff_bounds: prefill_tokens must be >= 1");
  const bound::mamba3::TraceGrid grid = h.grid();
  if (exact.S_abs.size() != size_t(grid.kept(T) * P * N)) {
    throw std::invalid_argument("handoff_bounds: the trace keeps " + std::to_string(exact.S_abs.size() / size_t(P * N)) +
                                " states, the hand-off's grid " + std::to_string(grid.kept(T)) +
                                " (certified_run(pair, threads, h.grid()))");
  }
  const int64_t prefill_rows = grid.kept(K);  // the prefill's chunk ends; token K − 1 the last of them
  const Problem pre = pair_tokens(pair, 0, 0, 0, K, true);
  StepBounds pb =
      bound::mamba3::prefill_bounds(pre, h.chunk_size, h.prefill, slice(exact, 0, K, 0, prefill_rows, P, N, R));
  if (K == T) return pb;

  // The decode starts from the prefill's returned state: its bounds, and the exact state after
  // token K − 1 (|S| from the trace, |b| turned by the exact θ, |x| exact).
  bound::mamba3::StartState start;
  start.angle_error = pb.angle;
  start.angle_abs = pb.angle_abs;
  start.S_error = pb.S;
  start.S_abs = std::vector<double>(exact.S_abs.begin() + (prefill_rows - 1) * P * N,
                                    exact.S_abs.begin() + prefill_rows * P * N);
  start.B_prev_error = pb.B_prev;
  start.B_prev_abs.assign(size_t(N), 0.0);
  for (int64_t r = 0; r < N / 2; ++r) {
    bound::mamba3::terms::PairAngle a;
    a.turned = r < R;
    if (a.turned) {
      a.phi = exact.angle[size_t((K - 1) * R + r)];
      a.phi_err = exact.angle_error[size_t((K - 1) * R + r)];
    }
    double mag[2], err[2];
    const auto u = [&](int64_t n) { return double(pair.B[size_t((K - 1) * N + n)]) + pair.B_bias[size_t(n)]; };
    bound::mamba3::terms::turn_pair(u(2 * r), u(2 * r + 1), a, mag, err);
    start.B_prev_abs[size_t(2 * r)] = mag[0];
    start.B_prev_abs[size_t(2 * r + 1)] = mag[1];
  }
  start.x_prev_error = pb.x_prev;
  start.x_prev_abs.resize(size_t(P));
  for (int64_t p = 0; p < P; ++p) start.x_prev_abs[size_t(p)] = std::fabs(double(pair.x[size_t((K - 1) * P + p)]));

  const Problem dec = pair_tokens(pair, 0, 0, K, T - K, false);
  StepBounds db =
      bound::mamba3::step_bounds(dec, h.decode, slice(exact, K, T - K, prefill_rows, T - K, P, N, R), &start);
  db.y.insert(db.y.begin(), pb.y.begin(), pb.y.end());
  return db;
}

namespace {

// A hand-off pair's emulation: `prefill` over the first K0 tokens (every token when there are no
// more), then `decode` from the four-part state it returned, y of both joined.
template <class Prefill, class Decode>
bound::mamba3::EmulatedSteps prefill_then_steps(const Problem& pr, int64_t K0, const Prefill& prefill,
                                                const Decode& decode) {
  const int64_t T = pr.shape.num_tokens(), K = std::min(K0, T);
  bound::mamba3::EmulatedSteps e = prefill(pair_tokens(pr, 0, 0, 0, K, true));
  if (K == T) return e;
  Problem dec = pair_tokens(pr, 0, 0, K, T - K, false);
  dec.initial = {e.angle, e.S, e.B_prev, e.x_prev};  // what the step kernel is given
  bound::mamba3::EmulatedSteps d = decode(dec);
  d.y.insert(d.y.begin(), e.y.begin(), e.y.end());
  return d;
}

}  // namespace

SharpModel handoff_model(const Handoff& h) {
  SharpModel prefill = prefill_model(h.prefill, h.chunk_size), decode = step_model(h.decode);
  SharpModel m = prefill;  // the budgets the runs move the functions by: the prefill's (the step's alike but exp)
  // the prefill's configurations, the steps as declared after each
  m.emulate = [prefill, decode, K0 = h.prefill_tokens](const Problem& pr, size_t configuration, uint64_t seed,
                                                       const bound::mamba3::Transcendentals& fns) {
    return prefill_then_steps(
        pr, K0, [&](const Problem& pre) { return prefill.emulate(pre, configuration, seed, fns); },
        [&](const Problem& dec) { return decode.emulate(dec, 0, seed == 0 ? 0 : seed ^ 0x9e3779b97f4a7c15ull, fns); });
  };
  // The candidate defects: the prefill's in the prefill (the steps as declared after it), then the
  // step kernel's in the decode (after the prefill as declared).
  m.defects = prefill.defects;
  for (const Defect& d : decode.defects) m.defects.push_back({"decode: " + d.name, d.description});
  m.emulate_defect = [prefill, decode, K0 = h.prefill_tokens](const Problem& pr, size_t defect) {
    const size_t in_prefill = prefill.defects.size();
    const bound::mamba3::Transcendentals library = bound::mamba3::library_transcendentals();
    return prefill_then_steps(
        pr, K0,
        [&](const Problem& pre) {
          return defect < in_prefill ? prefill.emulate_defect(pre, defect) : prefill.emulate(pre, 0, 0, library);
        },
        [&](const Problem& dec) {
          return defect < in_prefill ? decode.emulate(dec, 0, 0, library)
                                     : decode.emulate_defect(dec, defect - in_prefill);
        });
  };
  return m;
}

}  // namespace ssmv::family::mamba3
