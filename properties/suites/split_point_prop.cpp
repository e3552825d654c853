// Property 6: split point. chunk_scan (host twin) over [0, k) of every sequence, then over
// [k, T) starting from the state the first run returned (stored in the state format), agrees
// with one run over [0, T) within bounds: per element
//   |split − full| ≤ bound_full + bound_split + propagated,
// where bound_split is the chunked bound of the piece that computed the element (against
// the exact value of that piece's own problem) and, for t ≥ k, `propagated` carries the
// first piece's final-state bound e through the exact recurrence into the second piece:
//   y[t,h,p]: |zσ(z)| · Σ_n |C[t,g,n]| · Π_{j=k..t} a_j · e[h,p,n];  final state: Π_{j=k..T-1} a_j · e
// (the second piece's exact result is linear in its initial state; a_j = exp(δ_j·A) ≥ 0 are
// the reference's decays). These are evaluated in double with at most T + N + 8 roundings of
// relative 2^-53 each (≤ 7e-14 for T ≤ 600, N ≤ 64), covered by the factor 1 + 2^-40.
//
// Case counts (base; ×100 in campaign mode): 1350 per contract; k drawn in [1, shortest − 1],
// biased to chunk boundaries ± 1.
#include <algorithm>
#include <cmath>

#include "properties/gen/choice.h"
#include "properties/gen/problem_gen.h"
#include "properties/harness/case_failure.h"
#include "properties/harness/property.h"
#include "properties/relations/agreement.h"
#include "verify/judge/problem_slice.h"

namespace ssmv::prop {
namespace {

double gate(const Problem& p, int64_t i) {
  if (!p.has_z()) return 1.0;
  const double z = p.z[i];
  return std::fabs(z / (1.0 + std::exp(-z)));
}

std::optional<CaseFailure> split_agrees(const Problem& p, int64_t k, chunk_scan::ContractKind kind, int64_t L) {
  const Shape& s = p.shape;
  const int64_t S = s.num_sequences(), H = s.H, P = s.P, N = s.N, HP = H * P, per = H * P * N;
  const ref::ExactResult exact = ref::compute(p);
  const BoundedRun full = run_bounded(p, exact, kind, L);

  std::vector<int64_t> zero(S, 0), at_k(S, k), len(S);
  for (int64_t q = 0; q < S; ++q) len[q] = s.seq_len(q);
  const Problem first = verify::slice_tokens(p, zero, at_k);
  const BoundedRun run1 = run_bounded(first, ref::compute(first), kind, L);
  Problem second = verify::slice_tokens(p, at_k, len);
  second.initial_state = run1.result.final_state;  // the returned state, in the state format
  const BoundedRun run2 = run_bounded(second, ref::compute(second), kind, L);

  std::vector<float> y(full.result.y.size());
  std::vector<double> yb(y.size()), yx(y.size(), 0.0);
  std::vector<float> fs = run2.result.final_state;
  std::vector<double> fsb = run2.bounds.final_state, fsx(fs.size(), 0.0);
  constexpr double kSlack = 1 + 0x1p-40;
  for (int64_t q = 0; q < S; ++q) {
    for (int64_t h = 0; h < H; ++h) {
      std::vector<double> decay(P * N, 1.0);  // Π a_j from token k through t
      for (int64_t j = 0; j < len[q]; ++j) {
        const int64_t t = s.cu_seqlens[q] + j;
        if (j >= k) {
          for (double& d : decay) d *= exact.decay[p.dt_index(t, h)];
        }
        for (int64_t pp = 0; pp < P; ++pp) {
          const int64_t i = p.x_index(t, h, pp);
          if (j < k) {
            const int64_t i1 = (q * k + j) * HP + h * P + pp;
            y[i] = run1.result.y[i1];
            yb[i] = run1.bounds.y[i1];
            continue;
          }
          const int64_t i2 = (second.shape.cu_seqlens[q] + (j - k)) * HP + h * P + pp;
          y[i] = run2.result.y[i2];
          yb[i] = run2.bounds.y[i2];
          double sum = 0;
          for (int64_t n = 0; n < N; ++n) {
            const double e = run1.bounds.final_state[q * per + (h * P + pp) * N + n];
            sum += std::fabs(double(p.C[p.bc_index(t, s.group_of(h), n)])) * decay[pp * N + n] * e;
          }
          yx[i] = gate(p, i) * sum * kSlack;
        }
      }
      for (int64_t i = 0; i < P * N; ++i) {
        const int64_t at = q * per + h * P * N + i;
        fsx[at] = decay[i] * run1.bounds.final_state[at] * kSlack;
      }
    }
  }
  const std::string tag = " (split at " + std::to_string(k) + ", chunk " + std::to_string(L) + ")";
  if (auto f = agree_within("y" + tag, y, yb, full.result.y, full.bounds.y, yx)) return f;
  return agree_within("final_state" + tag, fs, fsb, full.result.final_state, full.bounds.final_state, fsx);
}

void split_point(chunk_scan::ContractKind kind) {
  PrefillOptions o;
  o.min_len = 2;
  const ChunkCase c = draw_chunk_case(o, kind);
  const GeneratedProblem& g = c.g;
  const int64_t L = c.L, shortest = shortest_sequence(g.problem.shape);
  const int64_t drawn = *rc::gen::inRange<int64_t>(1, shortest);
  const int64_t edge = *choice<int64_t>(L, L - 1, L + 1, 1, shortest - 1);
  const int64_t k = (edge >= 1 && edge < shortest && *rc::gen::arbitrary<bool>()) ? edge : drawn;
  RC_TAG(k % L == 0 ? "k at a chunk boundary" : (k % L == 1 || k % L == L - 1) ? "k at a boundary ± 1" : "k inside");
  run_case(prefill_case(g.problem, kind, L, verify::Device::twin),
           [&] { return split_agrees(g.problem, k, kind, L); });
}

}  // namespace

SSMV_PROPERTY(SplitPoint, Production, 1350, ()) { split_point(chunk_scan::ContractKind::production); }
SSMV_PROPERTY(SplitPoint, Fp32, 1350, ()) { split_point(chunk_scan::ContractKind::fp32); }

}  // namespace ssmv::prop
