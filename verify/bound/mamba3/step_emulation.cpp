// The Mamba-3 SISO step kernel's arithmetic on the host; the rounding points, in order, are
// docs/mamba3-bounds.md §2 (the kernel's line numbers in brackets).
#include "verify/bound/mamba3/step_emulation.h"

#include <cmath>

#include "verify/bound/mamba3/emulation_ops.h"
#include "spec/mamba3/contract.h"  // kPiF32, kLog2eF32

namespace ssmv::bound::mamba3 {
namespace {

using ssmv::mamba3::kLog2eF32;
using ssmv::mamba3::kPiF32;
using ssmv::mamba3::Problem;

using detail::Ops;
using detail::to_format;

// v rounded to `bits` significant bits (nearest; the planted bugs' coarse functions).
float keep_bits(double v, int bits) {
  int e = 0;
  const double m = std::frexp(v, &e);
  return float(std::ldexp(std::nearbyint(std::ldexp(m, bits)), e - bits));
}

// 0.5·t + 0.5 with t = tanh(0.5x) kept to 11 significant bits (PlantedBug::gate_via_tanh_approx).
float sigmoid_via_coarse_tanh(float x) { return 0.5f * keep_bits(std::tanh(0.5 * double(x)), 11) + 0.5f; }

}  // namespace

float sigmoid_f32(float x) {
  const float e = std::exp2(-x * kLog2eF32);
  const float d = 1.0f + e;
  return 1.0f / d;
}

Transcendentals library_transcendentals() {
  Transcendentals t;
  t.tanh = [](float x) { return std::tanh(x); };
  t.cos = [](float x) { return std::cos(x); };
  t.sin = [](float x) { return std::sin(x); };
  t.exp2 = [](float x) { return std::exp2(x); };
  t.sigmoid = sigmoid_f32;
  return t;
}

EmulatedSteps emulate_steps(const Problem& pr, const EmulationOptions& o) {
  ssmv::mamba3::validate(pr);
  const auto& sh = pr.shape;
  const int64_t S = sh.num_sequences(), H = sh.H, P = sh.P, N = sh.N, R = sh.R, N2 = N / 2;
  const Format st = pr.formats.state, out = pr.formats.output;
  EmulatedSteps res;
  res.y.assign(size_t(sh.num_tokens() * H * P), 0.0f);
  res.angle.assign(size_t(S * H * R), 0.0f);
  res.S.assign(size_t(S * H * P * N), 0.0f);
  res.B_prev.assign(size_t(S * H * N), 0.0f);
  res.x_prev.assign(size_t(S * H * P), 0.0f);
  if (pr.has_initial_state()) {
    res.angle = pr.initial.angle;
    res.S = pr.initial.S;
    res.B_prev = pr.initial.B_prev;
    res.x_prev = pr.initial.x_prev;
  }
  Ops op(o.fused, o.noise_seed);
  std::vector<float> q(static_cast<size_t>(N)), k(static_cast<size_t>(N)), cs(static_cast<size_t>(N2)),
      sn(static_cast<size_t>(N2)), Sf(static_cast<size_t>(P * N));
  for (int64_t s = 0; s < S; ++s) {
    for (int64_t h = 0; h < H; ++h) {
      float* angle = &res.angle[size_t(pr.angle_state_index(s, h, 0))];
      float* Sst = &res.S[size_t(pr.state_index(s, h, 0, 0))];
      float* kprev = &res.B_prev[size_t(pr.b_prev_index(s, h, 0))];
      float* vprev = &res.x_prev[size_t(pr.x_prev_index(s, h, 0))];
      const int64_t g = sh.group_of(h);
      for (int64_t t = sh.cu_seqlens[size_t(s)]; t < sh.cu_seqlens[size_t(s + 1)]; ++t) {
        // [142–143] bias added in fp32.
        for (int64_t n = 0; n < N; ++n) {
          q[size_t(n)] = op.add(pr.C[size_t(pr.bc_index(t, g, n))], pr.C_bias[size_t(pr.bias_index(h, n))]);
          k[size_t(n)] = op.add(pr.B[size_t(pr.bc_index(t, g, n))], pr.B_bias[size_t(pr.bias_index(h, n))]);
        }
        const float dt = pr.dt[size_t(pr.th_index(t, h))];
        // [147–163] the angle: tanh·PI·dt + state, reduced, stored; pairs r >= R load 0.
        for (int64_t r = 0; r < N2; ++r) {
          const float a = r < R ? pr.angles[size_t(pr.angle_index(t, h, r))] : 0.0f;
          const float tp = op.mul(o.fns.tanh(a), kPiF32);
          const bool keep_state = r < R && o.bug != PlantedBug::angle_state_ignored;
          const float prev = keep_state ? angle[r] : 0.0f;
          const float th = detail::reduce_angle(op, op.mul_add(tp, dt, prev));
          if (r < R) angle[r] = o.bug == PlantedBug::angle_stored_bf16 ? to_format(Format::bf16, th) : th;
          cs[size_t(r)] = o.fns.cos(th);
          sn[size_t(r)] = o.fns.sin(th);
        }
        // [166–174] the turn of q and k, in fp32.
        const bool halves = o.bug == PlantedBug::rotation_pairs_halves;
        for (int64_t r = 0; r < N2; ++r) {
          const size_t i0 = size_t(halves ? r : 2 * r), i1 = size_t(halves ? r + N2 : 2 * r + 1);
          for (std::vector<float>* v : {&q, &k}) detail::turn(op, (*v)[i0], (*v)[i1], cs[size_t(r)], sn[size_t(r)]);
        }
        // [185–191] the gates.
        const float adt = op.mul(pr.adt[size_t(pr.th_index(t, h))], kLog2eF32);
        const float lam = o.fns.sigmoid(pr.trap[size_t(pr.th_index(t, h))]);
        const float alpha = o.bug == PlantedBug::crude_exp2 ? keep_bits(o.fns.exp2(adt), 12) : o.fns.exp2(adt);
        const float ad = o.bug == PlantedBug::beta_without_decay ? dt : op.mul(alpha, dt);
        const float beta = op.mul(ad, op.sub(1.0f, lam));
        const float gamma = op.mul(lam, dt);
        // [193–200] the update: (β·x_prev)·b_prev + (γ·x)·b, then S·α + that.
        const float* bp = o.bug == PlantedBug::beta_uses_current_b ? k.data() : kprev;
        for (int64_t p = 0; p < P; ++p) {
          const float x = pr.x[size_t(pr.x_index(t, h, p))];
          const float bx = op.mul(beta, vprev[p]);
          const float gx = op.mul(gamma, x);
          for (int64_t n = 0; n < N; ++n) {
            const float d1 = op.mul(bx, bp[n]);
            const float diff = op.mul_add(gx, k[size_t(n)], d1);
            float s0 = Sst[p * N + n];
            if (o.bug == PlantedBug::state_rounded_before_update) s0 = to_format(Format::bf16, s0);
            Sf[size_t(p * N + n)] = op.mul_add(s0, alpha, diff);
          }
        }
        // [207–222] y = bf16(S)·bf16(c) (exact products, summed in fp32), + D·x, ·silu(z), stored.
        for (int64_t p = 0; p < P; ++p) {
          float acc = 0.0f;
          for (int64_t n = 0; n < N; ++n) {
            const float sd = to_format(o.dot_operands, Sf[size_t(p * N + n)]), cd = to_format(o.dot_operands, q[size_t(n)]);
            acc = op.mul_add(sd, cd, acc);
          }
          const float x = pr.x[size_t(pr.x_index(t, h, p))];
          if (pr.has_D()) {
            acc = op.mul_add(pr.D[size_t(h)], x, acc);
          }
          if (pr.has_z()) {
            const float z = pr.z[size_t(pr.x_index(t, h, p))];
            const float sz = o.bug == PlantedBug::gate_via_tanh_approx ? sigmoid_via_coarse_tanh(z) : o.fns.sigmoid(z);
            const float gz = op.mul(z, sz);
            acc = op.mul(acc, gz);
          }
          res.y[size_t(pr.x_index(t, h, p))] = to_format(out, acc);
        }
        // [159, 177, 203–204, 375] the four-part state, stored in its formats.
        for (int64_t i = 0; i < P * N; ++i) Sst[i] = to_format(st, Sf[size_t(i)]);
        for (int64_t n = 0; n < N; ++n) kprev[n] = to_format(st, k[size_t(n)]);
        for (int64_t p = 0; p < P; ++p) vprev[p] = to_format(st, pr.x[size_t(pr.x_index(t, h, p))]);
      }
    }
  }
  return res;
}

}  // namespace ssmv::bound::mamba3
