// The fast tier (tiered.h). Every constant and formula below is derived in
// docs/reference-tiers.md (section numbers in brackets); u = 2^-53, u_m = 2^-check_bits.
#include "reference/tiered.h"

#include <mpfr.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "reference/arithmetic.h"
#include "reference/double_double.h"
#include "reference/gate_memo.h"
#include "reference/head_recurrence.h"
#include "reference/magnitude.h"
#include "reference/mpfr_bound.h"
#include "reference/row_sums.h"
#include "spec/format.h"
#include "spec/vector_clones.h"

namespace ssmv::ref::detail {
namespace {

using dd::DD;

constexpr double kU = 0x1p-53;
constexpr double kU2 = dd::kU2;
// Absolute error one state update may add under underflow [3]: at most eight products of
// the double-double operations round to a subnormal, each by at most 2^-1075.
constexpr double kZeta = 0x1p-1065;
// Factor that makes a sum or product of at most 2^12 non-negative doubles, each rounded to
// nearest, an upper bound of the exact one: (1 - u)^4096 · (1 + 2^-40) > 1 [2].
constexpr double kUp = 1 + 0x1p-40;
// Γ and Z recurrences take three rounded operations; (1 - u)^4 · (1 + 8u) > 1.
constexpr double kUp8 = 1 + 8 * kU;
// Values settled only inside [2^-900, 2^1000] (magnitudes) and |nearest| >= 2^-1020: the
// error terms then stay clear of double's subnormal and overflow ranges [5].
constexpr double kMinMagnitude = 0x1p-900, kMaxMagnitude = 0x1p1000, kMinNearest = 0x1p-1020;
// Relative errors above this are not second-order any more; the pair goes to MPFR.
constexpr double kMaxRho = 0x1p-60;

double abs_up(mpfr_srcptr v) { return std::fabs(mpfr_get_d(v, MPFR_RNDA)); }

// Relative error of hi + lo (to_dd) against the MPFR value it came from [1]:
// |v - (hi + lo)| <= u·|lo| <= 1.01·u^2·|v|, plus 2^-1075 if lo underflows.
double rho_conversion(const DD& v) {
  return v.hi == 0 ? 0.0 : 1.01 * kU2 + 0x1p-1074 / std::fabs(v.hi);
}

const Format kFormats[] = {Format::fp32, Format::bf16, Format::fp16};

// Whether no rounding boundary of fp32, bf16 or fp16 can lie among the three doubles next to
// r (its neighbours and itself), read off r's bits. Every boundary of these formats (a
// midpoint between neighbours, normal or subnormal, and the overflow threshold) has at most 25
// significant bits, so as a double its 52-bit stored significand ends in 28 zero bits. The
// neighbours' low 28 bits are r's ± 1 (or a power of two's run of ones), so when r's low 28
// bits k satisfy 1 < k < 2^28 − 1, none of the three ends in 28 zeros: RNE_f is constant on
// [r⁻, r⁺] in each format, which decides() otherwise checks by rounding both ends. All but
// about 3 in 2^28 values take this path.
bool clear_of_format_boundaries(double r) {
  const uint64_t k = std::bit_cast<uint64_t>(r) & ((uint64_t{1} << 28) - 1);
  return k > 1 && k < (uint64_t{1} << 28) - 1;
}

// Whether every value within err of v (and the check run's value, which lies there too)
// has the nearest double v.hi and (formats) one correct rounding in each format [4]. v.hi must be
// the nearest double of v.hi + v.lo (true of every dd:: result).
bool decides(const DD& v, double err, bool formats) {
  const double r = v.hi;
  if (!(std::fabs(r) >= kMinNearest) || !std::isfinite(r) || !(err >= 0) || !std::isfinite(err)) {
    return false;
  }
  // The neighbours of r toward +∞ and −∞: r is normal (|r| >= 2^-1020), so they are its bit
  // pattern ± 1 with r's sign (std::nextafter's values; an overflow gives ±∞, refused below).
  const uint64_t b = std::bit_cast<uint64_t>(r);
  const double away = std::bit_cast<double>(b + 1), toward_zero = std::bit_cast<double>(b - 1);
  const double up = r > 0 ? away : toward_zero, dn = r > 0 ? toward_zero : away;
  // Half-gaps to the neighbours, exact (differences of adjacent normal doubles, halved).
  const double h_up = (up - r) * 0.5, h_dn = (r - dn) * 0.5;
  // v + err < r + h_up and v - err > r - h_dn, with the sums' roundings covered by the
  // (1 - 2^-40) margin.
  const double lim = std::min(h_up, h_dn) * (1 - 0x1p-40);
  if (!(std::fabs(v.lo) + err <= lim)) return false;
  if (!std::isfinite(up) || !std::isfinite(dn)) return false;
  if (!formats || clear_of_format_boundaries(r)) return true;
  for (Format f : kFormats) {
    if (round_nearest_even(f, dn) != round_nearest_even(f, up)) return false;
  }
  return true;
}

// The fast path of settles() over the n elements of a state (value sh + sl, fast bound err,
// magnitude sabs), for 2^-certified_bits = cert_factor: each element's certified error to
// cert[i] as state() computes it, and whether every element settles with no format boundary
// near its nearest double (decides()'s fast path). The same operations on the same doubles as
// state(), settles() and decides(), without a branch, so that the loop vectorises (the elements
// of a 256-request decode dump's final states are 67 million); false sends the state through
// settles() element by element. Compiled for AVX2 without FMA (nothing contracted) and
// generic x86-64.
SSMV_VECTOR_CLONES
bool settle_all(int64_t n, const double* __restrict sh, const double* __restrict sl, const double* __restrict err,
                const double* __restrict sabs, const MpfrRunBound& check, double um, double cert_factor,
                double* __restrict cert) {
  constexpr double kMax = std::numeric_limits<double>::max();
  constexpr uint64_t kLow28 = (uint64_t{1} << 28) - 1;
  int64_t all = 1;
  for (int64_t i = 0; i < n; ++i) {
    const double r = sh[i], m = sabs[i];
    const double e = err[i] * kUp;
    const double c = (e + 2 * um * std::fabs(r)) * kUp;
    cert[i] = c;
    const double total = c + check.state(m);  // decides()'s err: ours and the check run's
    const uint64_t b = std::bit_cast<uint64_t>(r);
    const double away = std::bit_cast<double>(b + 1), toward_zero = std::bit_cast<double>(b - 1);
    const double up = r > 0 ? away : toward_zero, dn = r > 0 ? toward_zero : away;
    const double lim = std::min((up - r) * 0.5, (r - dn) * 0.5) * (1 - 0x1p-40);
    const uint64_t k = b & kLow28;  // clear_of_format_boundaries(r)
    // & rather than &&: no branch
    const bool ok = (m >= kMinMagnitude) & (m <= kMaxMagnitude) & (std::fabs(r) >= kMinNearest) &
                    (std::fabs(r) <= kMax) & (total >= 0) & (total <= kMax) & (std::fabs(sl[i]) + total <= lim) &
                    (std::fabs(up) <= kMax) & (std::fabs(dn) <= kMax) & (k > 1) & (k < kLow28) & (c <= m * cert_factor);
    all &= int64_t(ok);
  }
  return all != 0;
}

// What one token gives every row [3, 4]: δ·B_n as a double-double (uh, ul), C_n, the
// magnitude recurrence's ŵ_n, |C_n| and â (magnitude.h), the decay as a double-double, and the
// per-element error bound's factors (e_decay = â(1+θ), θ).
struct TokenTerms {
  const double *uh, *ul, *c, *w, *abs_c;  // [N]
  int64_t N;
  DD decay;
  double a_mag, e_decay, theta;
};

// Rows p0 .. p0 + R − 1 of one token [3, 4] (sh, sl, sabs, err and ch, cl point at row p0;
// x[k] is row p0 + k's x), every per-element step of the token in one pass over the row:
//   Ŝ_n advanced by MagnitudeRecurrence::advance (magnitude.h), and whether some |C_n|·Ŝ_n > 0
//     to reads_state[k];
//   [3] E_n = (e_decay·E_n + θ·Ŝ_n + ζ)·(1 + 8u) with the new Ŝ_n (false returned when one is
//     not finite);
//   S[n] = decay·S[n] + u[n]·x and its product C[n]·S[n] (to ch, cl);
// then the rows' sums, each in its own fixed order: Σ_n |C_n|·Ŝ_n and Σ_n |C_n|·E_n in the order
// of n from zero (weighted_row_sums: to sum_sabs[k], carried[k]); Σ_n C[n]·S[n] over four
// interleaved partial sums — lane k takes n ≡ k (mod 4) of the whole blocks of four, lane 0 the
// rest — combined as (0 + 1) + (2 + 3) (a fixed tree: the bits do not depend on the machine),
// added as one dd::DD4, lane by lane the scalar operations, the R rows' sums side by side (each
// add waits on the one before it: one row alone had been half of the time), to acc[k]; and
// Σ|C[n]·S[n]| to abs_cs[k]. The per-element steps had been four passes over the state (the
// magnitudes, the errors, their two row sums) beside this one; the operations and their order
// are those of the separate passes, so the bits are the same. Compiled for x86-64-v4, x86-64-v3
// (AVX2, FMA) and generic x86-64, chosen at load time; std::fma rounds once in all, nothing else
// is contracted (-ffp-contract=off), so all give the same bits.
// (The token's arrays are restrict parameters, not read through TokenTerms: GCC vectorises the
// double-double loop only when it knows they do not alias the rows.)
template <int R>
SSMV_VECTOR_FMA_CLONES bool rows_of_token(double* __restrict sh, double* __restrict sl, double* __restrict sabs,
                                          double* __restrict err, const double* __restrict uh,
                                          const double* __restrict ul, const double* __restrict c,
                                          const double* __restrict w, const double* __restrict abs_c, int64_t N,
                                          DD decay, double a_mag, double e_decay, double theta, const double* x,
                                          double* __restrict ch, double* __restrict cl, unsigned char* reads_state,
                                          double* sum_sabs, double* carried, double* abs_cs, DD* acc) {
  int64_t finite = 1;
  for (int r = 0; r < R; ++r) {
    const double xr = x[r], axr = std::fabs(xr);
    double *rh = sh + r * N, *rl = sl + r * N, *qh = ch + r * N, *ql = cl + r * N;
    double *ra = sabs + r * N, *re = err + r * N;
    int64_t nonzero = 0;
    for (int64_t n = 0; n < N; ++n) {
      const double m = MagnitudeRecurrence::advance(ra[n], w[n], a_mag, axr);
      ra[n] = m;
      nonzero |= int64_t((abs_c[n] > 0) & (m > 0));
      const double e = (e_decay * re[n] + theta * m + kZeta) * kUp8;
      re[n] = e;
      finite &= int64_t(e <= std::numeric_limits<double>::max());
    }
    for (int64_t n = 0; n < N; ++n) {
      const DD s = dd::add(dd::mul(decay, DD{rh[n], rl[n]}), dd::mul(DD{uh[n], ul[n]}, xr));
      rh[n] = s.hi;
      rl[n] = s.lo;
      const DD cs = dd::mul(s, c[n]);
      qh[n] = cs.hi;
      ql[n] = cs.lo;
    }
    reads_state[r] = nonzero != 0;
  }
  weighted_row_sums(abs_c, sabs, R, N, sum_sabs);
  weighted_row_sums(abs_c, err, R, N, carried);
  dd::DD4 sum[R];
  dd::V4 abs_sum[R] = {};
  int64_t n = 0;
  for (; n + 4 <= N; n += 4) {
    for (int r = 0; r < R; ++r) {
      dd::DD4 cs;
      std::memcpy(&cs.hi, &ch[r * N + n], sizeof cs.hi);
      std::memcpy(&cs.lo, &cl[r * N + n], sizeof cs.lo);
      sum[r] = dd::add(sum[r], cs);
      abs_sum[r] += cs.hi < 0 ? -cs.hi : cs.hi;  // |hi| (a zero's sign does not change the sum)
    }
  }
  for (int r = 0; r < R; ++r) {
    DD lane[4];
    double abs_lane[4];
    for (int l = 0; l < 4; ++l) {
      lane[l] = DD{sum[r].hi[l], sum[r].lo[l]};
      abs_lane[l] = abs_sum[r][l];
    }
    for (int64_t m = n; m < N; ++m) {
      lane[0] = dd::add(lane[0], DD{ch[r * N + m], cl[r * N + m]});
      abs_lane[0] += std::fabs(ch[r * N + m]);
    }
    abs_cs[r] = (abs_lane[0] + abs_lane[1]) + (abs_lane[2] + abs_lane[3]);
    acc[r] = dd::add(dd::add(lane[0], lane[1]), dd::add(lane[2], lane[3]));
  }
  return finite != 0;
}
template <int R>
bool update_rows(double* sh, double* sl, double* sabs, double* err, const TokenTerms& k, const double* x, double* ch,
                 double* cl, unsigned char* reads_state, double* sum_sabs, double* carried, double* abs_cs, DD* acc) {
  return rows_of_token<R>(sh, sl, sabs, err, k.uh, k.ul, k.c, k.w, k.abs_c, k.N, k.decay, k.a_mag, k.e_decay, k.theta,
                          x, ch, cl, reads_state, sum_sabs, carried, abs_cs, acc);
}

}  // namespace

struct FastPairRunner::Impl {
  Impl(const Problem& pr, const InitialStates& init, const Options& o, int check_bits,
       const std::vector<std::vector<int64_t>>& positions, Sink& sink)
      : pr(pr), init(init), positions(positions), sink(sink), P(pr.shape.P), N(pr.shape.N),
        certified_bits(o.certified_bits), check_bits(check_bits), um(std::ldexp(1.0, -check_bits)), scalars(check_bits, P),
        mag(P, N), sh(size_t(P * N)), sl(size_t(P * N)), uh(size_t(N)), ul(size_t(N)), c(size_t(N)),
        ch(size_t(4 * N)), cl(size_t(4 * N)), carried(size_t(P)), gate(size_t(P)), gate_up(size_t(P)),
        y_vals(size_t(P)), state_vals(size_t(P * N)), y_nearest(size_t(P)), y_err(size_t(P)), ungated_nearest(size_t(P)),
        sum_abs_cs(size_t(P)), state_nearest(size_t(P * N)), state_err(size_t(P * N)),
        err(size_t(P * N)), check_bound(check_bits, N), gates(check_bits), table(o.scalars) {
    // table: checked by run_with (ExactScalars::check_fits) before any worker starts.
    mpfr_init2(tmp, check_bits);
    cert_factor = std::ldexp(1.0, -certified_bits);
  }
  ~Impl() { mpfr_clear(tmp); }

  DD to_dd(mpfr_srcptr v) { return dd_of(v, tmp); }

  bool load(int64_t s, int64_t h) {
    const int64_t pn = P * N;
    gamma = 0;
    zeta_sum = 0;
    std::fill(err.begin(), err.end(), 0.0);
    check_bound.start(0);
    if (init.exact) {
      const int64_t base = (s * pr.shape.H + h) * pn;
      mag.load(&init.exact->magnitude[base]);
      for (int64_t i = 0; i < pn; ++i) {
        const DD v = to_dd(init.exact->value[base + i].backend().data());
        sh[i] = v.hi;
        sl[i] = v.lo;
        // The bound is relative to the magnitude: it must dominate the value [3].
        if (!(std::fabs(v.hi) * (1 + 0x1p-50) <= init.exact->magnitude[base + i])) return false;
      }
      gamma = 1.01 * kU2;  // to_dd
      zeta_sum = 0x1p-1074;  // a lo that underflowed
      // The same per element, E_0 = Γ_0·Ŝ_0 + Z_0 rounded up [3].
      for (int64_t i = 0; i < pn; ++i) err[i] = (gamma * init.exact->magnitude[base + i] + zeta_sum) * kUp;
      check_bound.start(um * kUp);  // the check run rounds the value to its precision (|v| <= magnitude)
    } else if (const float* f = init.floats[s]) {
      mag.load(f + h * pn);
      for (int64_t i = 0; i < pn; ++i) {
        sh[i] = double(f[h * pn + i]);
        sl[i] = 0;
      }
    } else {
      mag.load_zero();
      std::fill(sh.begin(), sh.end(), 0.0);
      std::fill(sl.begin(), sl.end(), 0.0);
    }
    return true;
  }

  // One token; false when a value of it cannot be settled (nothing handed over then).
  bool token(int64_t s, int64_t t, int64_t h) {
    DD delta, decay;
    double delta_up, decay_up;
    if (table) {  // compute_scalars' values: the same MPFR operations at the same precision
      const size_t e = table->entry[size_t(pr.dt_index(t, h))];
      delta_up = table->delta_up[e];
      decay_up = table->decay_up[e];
      if (std::isnan(delta_up) || std::isnan(decay_up)) return false;  // not a number, or a decay of 0
      delta = DD{table->delta[e], table->delta_lo[e]};
      decay = DD{table->decay[e], table->decay_lo[e]};
    } else {
      scalars.step(pr, t, h, false);
      const mpfr_srcptr delta_v = scalars.delta(), decay_v = scalars.decay();
      if (!mpfr_number_p(delta_v) || !mpfr_number_p(decay_v) || mpfr_zero_p(decay_v)) return false;
      delta = to_dd(delta_v);
      decay = to_dd(decay_v);
      delta_up = abs_up(delta_v);
      decay_up = abs_up(decay_v);
    }
    if (!std::isfinite(delta.hi) || !std::isfinite(decay.hi)) return false;
    const bool has_z = pr.has_z();
    if (has_z) {
      for (int64_t p = 0; p < P; ++p) {
        const GateMemo::Gate& gt = gates.of(pr.z[size_t(pr.x_index(t, h, p))]);
        gate[p] = gt.value;
        gate_up[p] = gt.abs_up;
      }
    }
    // The magnitudes' coefficients; the rows advance below, in update_rows.
    mag.begin_step(pr, t, h, delta_up, decay_up);

    // Relative errors of the check run's δ and decay (mpfr_bound.h), then of their
    // double-doubles [1].
    check_bound.step(delta_up, double(pr.A[h]));
    const double rho_delta_m = check_bound.rho_delta(), rho_a_m = check_bound.rho_decay();
    if (!std::isfinite(rho_a_m)) return false;
    const double rho_delta = (rho_delta_m + rho_conversion(delta)) * kUp;
    const double rho_a = (rho_a_m + rho_conversion(decay)) * kUp;
    if (!(rho_delta <= kMaxRho) || !(rho_a <= kMaxRho)) return false;
    // One state update's relative error against Sabs [3].
    const double theta = (std::max(rho_a, rho_delta) + 10 * kU2) * kUp;
    const double a_hat = decay_up * (1 + 2 * rho_a_m) * kUp8;
    gamma = (gamma + theta + gamma * theta) * kUp8;
    zeta_sum = (a_hat * (1 + theta) * zeta_sum + kZeta) * kUp8;
    if (!std::isfinite(zeta_sum) || !(gamma <= 0x1p-70)) return false;
    // [3] The per-element bound E_t = â(1+θ)E_{t−1} + θ·Ŝ_t + ζ (rounded up by 1 + 8u: five
    // operations on non-negative terms), advanced in update_rows. It stays near θ·Ŝ/(1 − a)
    // while Γ_t·Ŝ grows with t: at 65,536 tokens the scalar bound was 2^16 times larger and left
    // y elements near zero undecided, sending whole pairs to the MPFR tier.

    const int64_t g = pr.shape.group_of(h);
    const float* B = pr.B.read(size_t(pr.bc_index(t, g, 0)), size_t(N), row_b);
    const float* C = pr.C.read(size_t(pr.bc_index(t, g, 0)), size_t(N), row_c);
    const float* xs = pr.x.read(size_t(pr.x_index(t, h, 0)), size_t(P), row_x_bits);
    for (int64_t n = 0; n < N; ++n) {
      const DD un = dd::mul(delta, double(B[n]));
      uh[n] = un.hi;
      ul[n] = un.lo;
      c[n] = double(C[n]);
    }
    const bool has_d = pr.d_mode() != DMode::none;
    // Output error factors [4]: κ for N products and N + 1 double-double additions.
    const double kappa = (double(N + 2) * dd::kAddErr + dd::kMulFpErr) * kUp;
    const double rho_g_m = check_bound.rho_gate();
    const TokenTerms terms{uh.data(), ul.data(), c.data(), mag.w(), mag.abs_c(), N, decay, mag.a(),
                           a_hat * (1 + theta), theta};
    // Rows in groups of four side by side (update_rows), the last P mod 4 one by one. Each
    // group's rows come out with their magnitudes' sums and Σ_n |C_n|·E_n, the state's error
    // carried into y (at most 2N + 1 operations on non-negative terms) [4].
    constexpr int kRows = 4;
    const int64_t grouped = P / kRows * kRows;
    DD row_acc[kRows];
    double row_x[kRows], row_sum_sabs[kRows];
    unsigned char row_reads[kRows];
    for (int64_t p = 0; p < P; ++p) {
      const int k = p < grouped ? int(p % kRows) : 0;
      if (k == 0) {
        const int rows = p < grouped ? kRows : 1;
        for (int r = 0; r < rows; ++r) row_x[r] = double(xs[p + r]);
        const size_t at = size_t(p * N);
        double* sabs = mag.mutable_state() + at;
        const bool finite =
            rows == kRows
                ? update_rows<kRows>(&sh[at], &sl[at], sabs, &err[at], terms, row_x, ch.data(), cl.data(), row_reads,
                                     row_sum_sabs, &carried[size_t(p)], &sum_abs_cs[p], row_acc)
                : update_rows<1>(&sh[at], &sl[at], sabs, &err[at], terms, row_x, ch.data(), cl.data(), row_reads,
                                 row_sum_sabs, &carried[size_t(p)], &sum_abs_cs[p], row_acc);
        if (!finite) return false;
        for (int r = 0; r < rows; ++r) {
          mag.finish_row(pr, t, h, p + r, row_sum_sabs[r], row_reads[r] != 0, has_z ? gate_up.data() : nullptr);
        }
      }
      const double x = row_x[k];
      const DD acc = row_acc[k];
      // D·x is exact in double (24 × 24 significant bits).
      const DD yu = has_d ? dd::add(acc, double(pr.d_value(h, p)) * x) : acc;
      const double Mu = mag.y_ungated()[p];
      const double ce = carried[size_t(p)] * kUp;  // rounded up by K [4]
      const double e_yu = (ce + kappa * (Mu + ce) + double(N + 2) * kZeta) * kUp;
      const double em_yu = check_bound.y_ungated(Mu);
      if (!decides(yu, e_yu + em_yu, false)) return false;  // nearest only: never rounded to a format
      ungated_nearest[p] = yu.hi;
      DD y = yu;
      double e_y = e_yu, em_y = em_yu;
      if (has_z) {
        y = dd::mul(yu, gate[p]);
        const double rho_g = (rho_g_m + rho_conversion(gate[p])) * kUp;
        const double g_abs = gate_up[p] * (1 + 2 * rho_g_m) * kUp;
        e_y = g_abs * (e_yu * (1 + rho_g) * (1 + dd::kMulErr) + Mu * (rho_g + dd::kMulErr) * kUp) * kUp;
        em_y = check_bound.y(em_yu, Mu, g_abs);
      }
      const double cert = (e_y + 2 * um * std::fabs(y.hi)) * kUp;
      if (!settles(y, cert, em_y, mag.y()[p])) return false;
      y_nearest[p] = y.hi;
      y_err[p] = cert;
      y_vals[p] = HandedValue{nullptr, y.hi, y.lo, check_bits};
    }
    const TokenOutputs out =
        token_outputs(s, t, h, delta.hi, decay.hi,  // hi: the nearest double (dd_of)
                      {y_vals, y_nearest, y_err, sum_abs_cs, ungated_nearest}, mag, size_t(P));
    sink.token(out);
    return true;
  }

  // A printed value: decided with the check run's error beside ours, and certified.
  bool settles(const DD& v, double cert, double em, double magnitude) const {
    if (!(magnitude >= kMinMagnitude) || !(magnitude <= kMaxMagnitude)) return false;
    if (!decides(v, cert + em, true)) return false;
    // magnitude·2^-certified_bits is exact (normal) for magnitude >= 2^-900 and
    // certified_bits <= 100; otherwise ldexp rounds it.
    return cert <= (certified_bits <= 100 ? magnitude * cert_factor : std::ldexp(magnitude, -certified_bits));
  }

  bool state(int64_t s, int64_t h, int64_t q, bool final) {
    const int64_t pn = P * N;
    const double* sabs = mag.state();
    if (certified_bits <= 100 &&
        settle_all(pn, sh.data(), sl.data(), err.data(), sabs, check_bound, um, cert_factor, state_err.data())) {
      std::copy(sh.begin(), sh.end(), state_nearest.begin());
      for (int64_t i = 0; i < pn; ++i) state_vals[i] = HandedValue{nullptr, sh[i], sl[i], check_bits};
    } else {
      for (int64_t i = 0; i < pn; ++i) {
        const double e = err[i] * kUp;
        const double em = check_bound.state(sabs[i]);
        const DD v{sh[i], sl[i]};
        const double cert = (e + 2 * um * std::fabs(v.hi)) * kUp;
        if (!settles(v, cert, em, sabs[i])) return false;
        state_nearest[i] = v.hi;
        state_err[i] = cert;
        state_vals[i] = HandedValue{nullptr, v.hi, v.lo, check_bits};
      }
    }
    StateOutputs out;
    out.sequence = s;
    out.head = h;
    out.position = q;
    out.final = final;
    out.value = state_vals;
    out.nearest = state_nearest;
    out.magnitude = {sabs, size_t(pn)};
    out.certified_error = state_err;
    sink.state(out);
    return true;
  }

  FastOutcome run(int64_t s, int64_t h) {
    FastOutcome r;
    if (!load(s, h)) return r;
    const auto& cu = pr.shape.cu_seqlens;
    const auto& pos = positions[s];
    for (int64_t t = cu[s]; t < cu[s + 1]; ++t) {
      if (!token(s, t, h)) return r;
      ++r.tokens_done;
      r.elements += P;
      if (r.positions_done < pos.size() && pos[r.positions_done] == t + 1) {
        if (!state(s, h, t + 1, false)) return r;
        ++r.positions_done;
        r.elements += P * N;
      }
    }
    if (!state(s, h, cu[s + 1], true)) return r;
    r.elements += P * N;
    r.settled = true;
    return r;
  }

  const Problem& pr;
  const InitialStates& init;
  const std::vector<std::vector<int64_t>>& positions;
  Sink& sink;
  int64_t P, N;
  int certified_bits;
  int check_bits;
  double cert_factor = 0;  // 2^-certified_bits
  double um;  // u_m = 2^-check_bits
  TokenScalars<RawMpfr> scalars;
  MagnitudeRecurrence mag;
  std::vector<double> sh, sl;    // [P, N] state, hi and lo parts
  std::vector<double> uh, ul;    // [N] δ·B_n, hi and lo parts
  std::vector<double> c;         // [N] C_n
  std::vector<float> row_b, row_c, row_x_bits;  // the token's B, C [N] and x [P] held as bits, decoded
  std::vector<double> ch, cl;    // [4, N] four rows' products C_n·S_n, hi and lo parts
  std::vector<double> carried;   // [P] Σ_n |C_n|·E_n, the state's error carried into each row
  std::vector<DD> gate;          // [P]
  std::vector<double> gate_up;   // [P] |gate| rounded away from zero
  // The values handed over: hi + lo, within u_m·|v| of the check run's set at its precision
  // (handed_value.h), which the certified errors below count (cert: + 2u_m·|hi|).
  std::vector<HandedValue> y_vals, state_vals;  // [P], [P, N]
  std::vector<double> y_nearest, y_err, ungated_nearest, sum_abs_cs;  // [P]
  std::vector<double> state_nearest, state_err;                       // [P, N]
  // Running bounds [3]: |S - S_dd| <= err per element, and <= gamma·Sabs + zeta_sum (the
  // scalar form, kept as the guard Γ <= 2^-70); the check run's, mpfr_bound.h.
  std::vector<double> err;  // [P, N]
  double gamma = 0, zeta_sum = 0;
  MpfrRunBound check_bound;
  mpfr_t tmp;
  GateMemo gates;  // the check run's gates, memoised per z value
  const ExactScalars* table;  // compute_scalars' δ and decay, or null (computed per token)
};

FastPairRunner::FastPairRunner(const Problem& pr, const InitialStates& init, const Options& o,
                               int check_bits, const std::vector<std::vector<int64_t>>& positions,
                               Sink& sink)
    : impl_(std::make_unique<Impl>(pr, init, o, check_bits, positions, sink)) {}
FastPairRunner::~FastPairRunner() = default;
FastOutcome FastPairRunner::run(int64_t s, int64_t h) { return impl_->run(s, h); }

}  // namespace ssmv::ref::detail
