// Mamba2-like random problems with a fixed seed, for tests and benchmarks of the
// reference (DESIGN.md's realistic data): x, B, C ~ N(0,1) rounded to bf16; dt
// log-uniform in [1e-3, 0.1] rounded to bf16, then softplus with a bias in [-4, -3];
// A = -exp(U[0, log 16]) in fp32; D per head ~ N(0,1); z ~ N(0,1) in bf16; optional
// initial state ~ N(0,1) in fp32. All tensors exact in their formats.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "spec/format.h"
#include "spec/problem.h"

namespace ssmv::ref {

inline Problem random_problem(std::vector<int64_t> cu, int64_t H, int64_t P, int64_t N, int64_t G,
                              uint32_t seed, bool with_initial_state) {
  Problem pr;
  pr.shape.cu_seqlens = std::move(cu);
  pr.shape.H = H;
  pr.shape.P = P;
  pr.shape.N = N;
  pr.shape.G = G;
  pr.formats = {Format::bf16, Format::fp32, Format::bf16};
  const int64_t T = pr.shape.num_tokens();
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto bf16 = [&](double v) { return float(round_value(Format::bf16, v)); };
  auto fill = [&](std::vector<float>& v, int64_t n, auto draw) {
    v.resize(n);
    for (auto& e : v) e = draw();
  };
  fill(pr.x, T * H * P, [&] { return bf16(normal(rng)); });
  fill(pr.B, T * G * N, [&] { return bf16(normal(rng)); });
  fill(pr.C, T * G * N, [&] { return bf16(normal(rng)); });
  fill(pr.dt, T * H, [&] { return bf16(std::exp(std::log(1e-3) + unit(rng) * std::log(100.0))); });
  fill(pr.A, H, [&] { return float(-std::exp(unit(rng) * std::log(16.0))); });
  fill(pr.dt_bias, H, [&] { return float(-4.0 + unit(rng)); });
  pr.dt_softplus = true;
  fill(pr.D, H, [&] { return float(normal(rng)); });
  fill(pr.z, T * H * P, [&] { return bf16(normal(rng)); });
  if (with_initial_state) {
    fill(pr.initial_state, pr.shape.num_sequences() * H * P * N, [&] { return float(normal(rng)); });
  }
  return pr;
}

}  // namespace ssmv::ref
