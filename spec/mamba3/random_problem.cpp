#include "spec/mamba3/random_problem.h"

#include <cmath>
#include <random>
#include <utility>

#include "spec/format.h"

namespace ssmv::mamba3 {

Problem zero_problem(std::vector<int64_t> cu, int64_t H, int64_t P, int64_t N, int64_t G, int64_t R) {
  Problem pr;
  pr.shape = Shape{std::move(cu), H, P, N, G, R};
  pr.formats = {Format::fp32, Format::fp32, Format::fp32, Format::fp32};
  const int64_t T = pr.shape.num_tokens();
  pr.x.assign(size_t(T * H * P), 0.0f);
  pr.B.assign(size_t(T * G * N), 0.0f);
  pr.C.assign(size_t(T * G * N), 0.0f);
  pr.dt.assign(size_t(T * H), 0.0f);
  pr.adt.assign(size_t(T * H), 0.0f);
  pr.trap.assign(size_t(T * H), 0.0f);
  pr.angles.assign(size_t(T * H * R), 0.0f);
  pr.B_bias.assign(size_t(H * N), 0.0f);
  pr.C_bias.assign(size_t(H * N), 0.0f);
  return pr;
}

Problem random_problem(std::vector<int64_t> cu, int64_t H, int64_t P, int64_t N, int64_t G, int64_t R, uint64_t seed,
                       bool with_initial_state) {
  Problem pr = zero_problem(std::move(cu), H, P, N, G, R);
  pr.formats = {Format::bf16, Format::bf16, Format::fp32, Format::bf16};
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const auto bf16 = [&] { return float(round_value(Format::bf16, normal(rng))); };
  const auto fp32 = [&] { return float(normal(rng)); };
  for (std::vector<float>* v : {&pr.x, &pr.B, &pr.C, &pr.trap, &pr.angles}) {
    for (float& e : *v) e = bf16();
  }
  for (size_t i = 0; i < pr.dt.size(); ++i) {
    pr.dt[i] = float(std::exp(std::log(1e-3) + unit(rng) * (std::log(0.1) - std::log(1e-3))));
    pr.adt[i] = -float(1.0 + 15.0 * unit(rng)) * pr.dt[i];
  }
  for (float& e : pr.B_bias) e = fp32();
  for (float& e : pr.C_bias) e = fp32();
  pr.D.resize(size_t(H));
  for (float& e : pr.D) e = fp32();
  pr.z.resize(pr.x.size());
  for (float& e : pr.z) e = bf16();
  if (with_initial_state) {
    const int64_t S = pr.shape.num_sequences();
    pr.initial.angle.resize(size_t(S * H * R));
    for (float& e : pr.initial.angle) e = float(6.28 * unit(rng));
    for (auto [v, n] : {std::pair{&pr.initial.S, S * H * P * N}, std::pair{&pr.initial.B_prev, S * H * N},
                        std::pair{&pr.initial.x_prev, S * H * P}}) {
      v->resize(size_t(n));
      for (float& e : *v) e = fp32();
    }
  }
  return pr;
}

}  // namespace ssmv::mamba3
