// The Mamba-3 SISO chunked prefill's arithmetic on the host (prefill_emulation.h). Bracketed
// numbers are lines at e9594ce1c732 of mamba_ssm/ops/triton/mamba3/: [a…] angle_dt.py,
// [w…] mamba3_siso_fwd.py's wrapper, plain […] mamba3_siso_fwd.py's kernel.
#include "verify/bound/mamba3/prefill_emulation.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "verify/bound/mamba3/emulation_ops.h"
#include "spec/mamba3/contract.h"  // kPiF32, kLog2eF32

namespace ssmv::bound::mamba3 {
namespace {

// What a tf32 mma reads of an fp32 register it is given without a cvt.rna.tf32: the sign, the
// exponent and the 10 leading significand bits (the low 13 bits ignored: truncation toward 0).
float truncate_to_tf32(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  b &= 0xFFFFE000u;
  std::memcpy(&v, &b, sizeof v);
  return v;
}


using detail::Ops;
using detail::reduce_angle;
using detail::turn;
using detail::to_format;
using ssmv::mamba3::kLog2eF32;
using ssmv::mamba3::kPiF32;
using ssmv::mamba3::Problem;

// One (sequence, head) pair: tokens [t0, t0 + L) of sequence s, in chunks of C from t0 (the
// kernels' varlen programs offset every pointer to the sequence's first token [a69–71, 182–190]).
class PairRun {
 public:
  PairRun(const Problem& pr, const PrefillEmulationOptions& o, Ops& op, int64_t s, int64_t h)
      : pr_(pr),
        o_(o),
        op_(op),
        s_(s),
        h_(h),
        g_(pr.shape.group_of(h)),
        t0_(pr.shape.cu_seqlens[size_t(s)]),
        L_(pr.shape.seq_len(s)),
        C_(std::min(o.chunk_size, pr.shape.seq_len(s))),  // a chunk past the end changes nothing
        N_(pr.shape.N),
        P_(pr.shape.P),
        R_(pr.shape.R) {}

  void run(EmulatedSteps& res) {
    angle_cumsum(&res.angle[size_t(pr_.angle_state_index(s_, h_, 0))]);
    phase1(&res.B_prev[size_t(pr_.b_prev_index(s_, h_, 0))]);
    phase2(res);
    const Format st = pr_.formats.state;
    for (int64_t p = 0; p < P_; ++p) {  // [w722–723] V of the last token
      res.x_prev[size_t(pr_.x_prev_index(s_, h_, p))] = to_format(st, x(L_ - 1, p));
    }
  }

 private:
  float dt(int64_t i) const { return pr_.dt[size_t(pr_.th_index(t0_ + i, h_))]; }
  float trap(int64_t i) const { return pr_.trap[size_t(pr_.th_index(t0_ + i, h_))]; }
  float adt(int64_t i) const { return pr_.adt[size_t(pr_.th_index(t0_ + i, h_))]; }
  float x(int64_t i, int64_t p) const { return pr_.x[size_t(pr_.x_index(t0_ + i, h_, p))]; }

  // angle_dt_fwd_kernel: θ of every token [L, R] in the angle store format, and the final state.
  void angle_cumsum(float* final_angle) {
    theta_.assign(size_t(L_ * R_), 0.0f);
    std::vector<float> vals(static_cast<size_t>(C_));
    for (int64_t r = 0; r < R_; ++r) {
      // [a77–81] fp32 in registers for the whole sequence.
      float state = pr_.has_initial_state() ? pr_.initial.angle[size_t(pr_.angle_state_index(s_, h_, r))] : 0.0f;
      for (int64_t c0 = 0; c0 < L_; c0 += C_) {
        const int64_t m = std::min(C_, L_ - c0);
        float cum = 0.0f;
        for (int64_t j = 0; j < m; ++j) {
          const float a = pr_.angles[size_t(pr_.angle_index(t0_ + c0 + j, h_, r))];
          vals[size_t(j)] = op_.mul(op_.mul(o_.fns.tanh(a), kPiF32), dt(c0 + j));  // [a94, a101]
          cum = j == 0 ? vals[0] : op_.add(cum, vals[size_t(j)]);                  // [a104] tl.cumsum
          // [a105, a108, a112] the chunk's own prefix sum plus the carried state, reduced, stored.
          theta_[size_t((c0 + j) * R_ + r)] = to_format(o_.angle_store, reduce_angle(op_, op_.add(cum, state)));
        }
        if (o_.bug == PrefillBug::angle_carry_dropped) continue;  // every chunk starts from the initial state
        float sum = vals[0];  // [a115] tl.sum, a reduction of its own
        for (int64_t j = 1; j < m; ++j) sum = op_.add(sum, vals[size_t(j)]);
        state = reduce_angle(op_, op_.add(state, sum));  // [a116–117]
      }
      final_angle[r] = to_format(o_.angle_store, state);  // [a122] OUTPUT_STATE has Angles' dtype
    }
  }

  // Phase 1 [276–351]: the gates, bias, q·k, the turn; Q_store, K_store and QK_store.
  void phase1(float* final_k) {
    q_store_.assign(size_t(L_ * N_), 0.0f);
    k_store_.assign(size_t(L_ * N_), 0.0f);
    qk_.assign(size_t(L_), 0.0f);
    std::vector<float> q(static_cast<size_t>(N_)), k(static_cast<size_t>(N_));
    for (int64_t i = 0; i < L_; ++i) {
      const int64_t t = t0_ + i;
      // [293–306] the next token's dt and trap load as 0 past the sequence's end (σ(0) = ½, still
      // computed); the bug masks at the chunk's end as well.
      const bool chunk_end = (i + 1) % C_ == 0 && o_.bug == PrefillBug::shifted_gamma_chunk_masked;
      const bool next = i + 1 < L_ && !chunk_end;
      const float lam = o_.fns.sigmoid(trap(i));
      const float lam_next = o_.fns.sigmoid(next ? trap(i + 1) : 0.0f);
      const float om_next = op_.sub(1.0f, lam_next);
      const float gamma = op_.mul(dt(i), lam);
      const float scale = op_.mul_add(next ? dt(i + 1) : 0.0f, om_next, gamma);  // shifted_gamma + gamma
      // [312–316] bf16 + fp32 bias: fp32.
      for (int64_t n = 0; n < N_; ++n) {
        q[size_t(n)] = op_.add(pr_.C[size_t(pr_.bc_index(t, g_, n))], pr_.C_bias[size_t(pr_.bias_index(h_, n))]);
        k[size_t(n)] = op_.add(pr_.B[size_t(pr_.bc_index(t, g_, n))], pr_.B_bias[size_t(pr_.bias_index(h_, n))]);
      }
      // [319–325] tl.dot(q·k, ones): the elementwise products, rounded (`q_pre_block * k_pre_block`
      // is its own mul.f32 in the PTX), summed from 0 in increasing n. With qk_dot_tf32 each product
      // reaches the tf32 mma as its fp32 bits unconverted: the low 13 significand bits dropped. Then
      // ·γ, stored fp32.
      float qk = 0.0f;
      for (int64_t n = 0; n < N_; ++n) {
        float p = op_.mul(q[size_t(n)], k[size_t(n)]);
        if (o_.qk_dot_tf32) p = truncate_to_tf32(p);
        qk = op_.add(qk, p);
      }
      qk_[size_t(i)] = op_.mul(qk, gamma);
      // [287–290, 328–350] pairs r >= R load angle 0; k turned, kept fp32 as the final K state,
      // scaled and stored; then q turned and stored.
      for (int64_t r = 0; r < N_ / 2; ++r) {
        const float th = r < R_ ? theta_[size_t(i * R_ + r)] : 0.0f;
        const float c = o_.fns.cos(th), sn = o_.fns.sin(th);
        turn(op_, k[size_t(2 * r)], k[size_t(2 * r + 1)], c, sn);
        turn(op_, q[size_t(2 * r)], q[size_t(2 * r + 1)], c, sn);
      }
      for (int64_t n = 0; n < N_; ++n) {
        if (i == L_ - 1) final_k[n] = to_format(pr_.formats.state, k[size_t(n)]);  // [337–341, w711–720]
        k_store_[size_t(i * N_ + n)] = to_format(o_.qk_store, op_.mul(k[size_t(n)], scale));  // [343–344]
        q_store_[size_t(i * N_ + n)] = to_format(o_.qk_store, q[size_t(n)]);                   // [351]
      }
    }
  }

  // Σ_j a[j]·b[j] from `acc` in increasing j (an fp32 chain; FMA when fused).
  float chain(int64_t n, const float* a, int64_t as, const float* b, int64_t bs, float acc) {
    for (int64_t j = 0; j < n; ++j) acc = op_.mul_add(a[j * as], b[j * bs], acc);
    return acc;
  }
  // acc + Σ_j a[j]·b[j] for a dot whose result the source adds to acc [418, 442]. Fused: summed
  // into acc directly, the compiled kernel's order (Triton's combine pass folds `c + dot(a, b)`
  // into the dot's accumulator, Combine.td CombineDotAddF[Rev]Pattern, independently of
  // enable_fp_fusion). Otherwise the source's literal order, the dot from 0, then the add: tied to
  // `fused` so that the tests run both evaluations.
  float add_dot(float acc, int64_t n, const float* a, int64_t as, const float* b, int64_t bs) {
    if (o_.fused) return chain(n, a, as, b, bs, acc);
    return op_.add(acc, chain(n, a, as, b, bs, 0.0f));
  }

  // Phase 2 [354–451]: per chunk, y and the state update; the final state.
  void phase2(EmulatedSteps& res) {
    const Format dot = o_.dot_operands;
    std::vector<float> S(size_t(P_ * N_), 0.0f);  // [373] zeros without an initial state
    if (pr_.has_initial_state()) {
      // [355–371] S0 + ((x_prev·b_prev)·dt_0)·(1 − σ(trap_0)); the last product contracts when fused.
      const float om0 = op_.sub(1.0f, o_.fns.sigmoid(trap(0)));
      for (int64_t p = 0; p < P_; ++p) {
        for (int64_t n = 0; n < N_; ++n) {
          const float s0 = pr_.initial.S[size_t(pr_.state_index(s_, h_, p, n))];
          const float term = op_.mul(op_.mul(pr_.initial.x_prev[size_t(pr_.x_prev_index(s_, h_, p))],
                                             pr_.initial.B_prev[size_t(pr_.b_prev_index(s_, h_, n))]),
                                     dt(0));
          S[size_t(p * N_ + n)] =
              o_.bug == PrefillBug::initial_trap_term_dropped ? s0 : op_.mul_add(term, om0, s0);
        }
      }
    }
    const float D = pr_.has_D() ? pr_.D[size_t(h_)] : 0.0f;  // [375–378]
    std::vector<float> cs, rev, Sd(S.size()), s, xs, vs;
    for (int64_t c0 = 0; c0 < L_; c0 += C_) {
      const int64_t m = std::min(C_, L_ - c0);
      // [386, 396–398] da, its prefix sums, its total (a reduction of its own), total − prefix.
      cs.assign(size_t(m), 0.0f);
      std::vector<float> da(static_cast<size_t>(m));
      for (int64_t j = 0; j < m; ++j) {
        da[size_t(j)] = op_.mul(adt(c0 + j), kLog2eF32);
        cs[size_t(j)] = j == 0 ? da[0] : op_.add(cs[size_t(j - 1)], da[size_t(j)]);
      }
      float last = da[0];
      for (int64_t j = 1; j < m; ++j) last = op_.add(last, da[size_t(j)]);
      rev.assign(size_t(m), 0.0f);
      for (int64_t j = 0; j < m; ++j) rev[size_t(j)] = op_.sub(last, cs[size_t(j)]);
      // [406] the state's dot operand; x of the chunk as a [m, P] block.
      for (size_t e = 0; e < S.size(); ++e) Sd[e] = to_format(dot, S[e]);
      xs.assign(size_t(m * P_), 0.0f);
      for (int64_t j = 0; j < m; ++j) {
        for (int64_t p = 0; p < P_; ++p) xs[size_t(j * P_ + p)] = x(c0 + j, p);
      }
      s.assign(size_t(m), 0.0f);
      for (int64_t i = 0; i < m; ++i) {
        const float* qi = &q_store_[size_t((c0 + i) * N_)];
        // [411–417] the causal weights of row i, j < i only (the rest is masked to 0), in the dot
        // operands' format [418].
        for (int64_t j = 0; j < i; ++j) {
          const float qk = chain(N_, qi, 1, &k_store_[size_t((c0 + j) * N_)], 1, 0.0f);
          const bool off = o_.bug == PrefillBug::intra_decay_off_by_one;
          const float from = off ? (j == 0 ? 0.0f : cs[size_t(j - 1)]) : cs[size_t(j)];
          const float w = o_.fns.exp2(std::min(op_.sub(cs[size_t(i)], from), 0.0f));
          s[size_t(j)] = to_format(dot, op_.mul(qk, w));
        }
        const float decay = o_.fns.exp2(cs[size_t(i)]);
        // [421–422] (D + γ·q·k)·x, once per row.
        const float diag = o_.bug == PrefillBug::diagonal_dropped ? D : op_.add(D, qk_[size_t(c0 + i)]);
        for (int64_t p = 0; p < P_; ++p) {
          float acc = op_.mul(chain(N_, qi, 1, &Sd[size_t(p * N_)], 1, 0.0f), decay);  // [406–407]
          acc = add_dot(acc, i, s.data(), 1, &xs[size_t(p)], P_);                    // [418]
          acc = op_.mul_add(diag, x(c0 + i, p), acc);
          if (pr_.has_z()) {  // [430–431] silu(z) = z·tl.sigmoid(z)
            const float z = pr_.z[size_t(pr_.x_index(t0_ + c0 + i, h_, p))];
            acc = op_.mul(acc, op_.mul(z, o_.fns.sigmoid(z)));
          }
          res.y[size_t(pr_.x_index(t0_ + c0 + i, h_, p))] = to_format(pr_.formats.output, acc);  // [434]
        }
      }
      // [440–444] x·exp2(total − prefix) in the dot operands' format; S·exp2(total) + vᵀ·k.
      vs.assign(size_t(m * P_), 0.0f);
      for (int64_t j = 0; j < m; ++j) {
        const float e = o_.fns.exp2(rev[size_t(j)]);
        for (int64_t p = 0; p < P_; ++p) {
          const float v = xs[size_t(j * P_ + p)];
          vs[size_t(j * P_ + p)] = to_format(dot, o_.bug == PrefillBug::state_update_undecayed ? v : op_.mul(v, e));
        }
      }
      const float chunk_decay = o_.fns.exp2(last);
      const float* kc = &k_store_[size_t(c0 * N_)];
      for (int64_t p = 0; p < P_; ++p) {
        for (int64_t n = 0; n < N_; ++n) {
          float& e = S[size_t(p * N_ + n)];
          e = add_dot(op_.mul(e, chunk_decay), m, &vs[size_t(p)], P_, kc + n, N_);
        }
      }
    }
    for (int64_t p = 0; p < P_; ++p) {  // [447–451]
      for (int64_t n = 0; n < N_; ++n) {
        res.S[size_t(pr_.state_index(s_, h_, p, n))] = to_format(pr_.formats.state, S[size_t(p * N_ + n)]);
      }
    }
  }

  const Problem& pr_;
  const PrefillEmulationOptions& o_;
  Ops& op_;
  const int64_t s_, h_, g_, t0_, L_, C_, N_, P_, R_;
  std::vector<float> theta_;    // [L, R] stored cumulative angle
  std::vector<float> q_store_;  // [L, N] Q_store
  std::vector<float> k_store_;  // [L, N] K_store
  std::vector<float> qk_;       // [L]    QK_store
};

}  // namespace

EmulatedSteps emulate_prefill(const Problem& pr, const PrefillEmulationOptions& o) {
  if (o.chunk_size < 1) throw std::invalid_argument("emulate_prefill: chunk_size must be at least 1");
  ssmv::mamba3::validate(pr);
  const auto& sh = pr.shape;
  const int64_t S = sh.num_sequences(), H = sh.H;
  EmulatedSteps res;
  res.y.assign(size_t(sh.num_tokens() * H * sh.P), 0.0f);
  res.angle.assign(size_t(S * H * sh.R), 0.0f);
  res.S.assign(size_t(S * H * sh.P * sh.N), 0.0f);
  res.B_prev.assign(size_t(S * H * sh.N), 0.0f);
  res.x_prev.assign(size_t(S * H * sh.P), 0.0f);
  Ops op(o.fused, o.noise_seed);
  for (int64_t s = 0; s < S; ++s) {
    for (int64_t h = 0; h < H; ++h) PairRun(pr, o, op, s, h).run(res);
  }
  return res;
}

}  // namespace ssmv::bound::mamba3
