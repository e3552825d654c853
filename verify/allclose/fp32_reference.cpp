#include "verify/allclose/fp32_reference.h"

#include <algorithm>
#include <cmath>

namespace ssmv::verify {
namespace {

// One (sequence, head) pair from `state` [P, N] (updated in place), writing y of its tokens.
void run_pair(const Problem& p, int64_t seq, int64_t h, float* state, std::vector<double>& y) {
  const Shape& s = p.shape;
  const int64_t P = s.P, N = s.N, g = s.group_of(h);
  const float A = p.A[h];
  std::vector<float> row_b(N), row_c(N);  // a token's B and C held as bits, decoded
  for (int64_t t = s.cu_seqlens[seq]; t < s.cu_seqlens[seq + 1]; ++t) {
    float delta = p.dt[p.dt_index(t, h)];
    if (p.has_dt_bias()) delta = delta + p.dt_bias[h];
    if (p.dt_softplus) delta = delta > 20.0f ? delta : std::log1p(std::exp(delta));
    delta = std::min(std::max(delta, p.dt_limit_lo), p.dt_limit_hi);
    const float dA = std::exp(delta * A);
    const float* B = p.B.read(size_t(p.bc_index(t, g, 0)), size_t(N), row_b.data());
    const float* C = p.C.read(size_t(p.bc_index(t, g, 0)), size_t(N), row_c.data());
    for (int64_t i = 0; i < P; ++i) {
      const float x = p.x[p.x_index(t, h, i)];
      float* S = state + i * N;
      float acc = 0.0f;
      for (int64_t n = 0; n < N; ++n) {
        const float dB = delta * B[n];
        const float decayed = S[n] * dA;
        const float input = dB * x;
        S[n] = decayed + input;
        const float product = S[n] * C[n];
        acc = acc + product;
      }
      if (p.has_D()) {
        const float dx = x * p.d_value(h, i);
        acc = acc + dx;
      }
      if (p.has_z()) {
        const float z = p.z[p.x_index(t, h, i)];
        const float silu = z / (1.0f + std::exp(-z));
        acc = acc * silu;
      }
      y[size_t(p.x_index(t, h, i))] = double(acc);
    }
  }
}

}  // namespace

Fp32Reference fp32_reference(const Problem& problem) {
  validate(problem);
  const Shape& s = problem.shape;
  const int64_t per = s.P * s.N;
  Fp32Reference r;
  r.y.assign(size_t(s.num_tokens() * s.H * s.P), 0.0);
  r.final_state.assign(size_t(s.num_sequences() * s.H * per), 0.0);
  std::vector<float> state(static_cast<size_t>(per));
  for (int64_t seq = 0; seq < s.num_sequences(); ++seq) {
    for (int64_t h = 0; h < s.H; ++h) {
      const int64_t si = problem.state_index(seq, h, 0, 0);
      for (int64_t i = 0; i < per; ++i) state[i] = problem.has_initial_state() ? problem.initial_state[si + i] : 0.0f;
      run_pair(problem, seq, h, state.data(), r.y);
      std::copy(state.begin(), state.end(), r.final_state.begin() + si);
    }
  }
  return r;
}

Fp32Reference fp32_reference(const DecodeProblem& decode) {
  validate(decode);
  const Problem& p = decode.problem;
  const Shape& s = p.shape;
  const int64_t per = s.H * s.P * s.N;
  // The problem's view with each request's starting state as its initial state.
  Problem view = p;
  view.initial_state.assign(size_t(s.num_sequences() * per), 0.0f);
  for (int64_t r = 0; r < s.num_sequences(); ++r) {
    if (decode.is_pad(r)) continue;
    std::copy(decode.state_pool.begin() + decode.slot_in[r] * per,
              decode.state_pool.begin() + (decode.slot_in[r] + 1) * per, view.initial_state.begin() + r * per);
  }
  Fp32Reference out = fp32_reference(view);
  out.state_pool.assign(decode.state_pool.begin(), decode.state_pool.end());
  for (int64_t r = 0; r < s.num_sequences(); ++r) {
    if (decode.is_pad(r)) continue;
    std::copy(out.final_state.begin() + r * per, out.final_state.begin() + (r + 1) * per,
              out.state_pool.begin() + decode.out_slot(r) * per);
  }
  return out;
}

}  // namespace ssmv::verify
