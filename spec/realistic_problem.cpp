#include "spec/realistic_problem.h"

#include <cmath>
#include <vector>

#include "spec/splitmix.h"

namespace ssmv {
namespace {

struct Rng {
  uint64_t s;
  uint64_t next() { return splitmix64_next(s); }
  double uniform() { return double(next() >> 11) * 0x1p-53; }  // [0, 1)
  double normal() {                                              // Box–Muller
    const double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }
};

// The stream of one tensor: independent of which other tensors are drawn.
enum Tensor : uint64_t { kA = 1, kDelta, kDt, kD, kX, kZ, kB, kC, kState };
Rng stream(uint64_t seed, Tensor t) { return Rng{seed * 0x2545f4914f6cdd1dull + t * 0x9e3779b97f4a7c15ull}; }

float in_format(Format f, double v) { return float(round_value(f, v)); }

double softplus_inverse(double v) { return v + std::log(-std::expm1(-v)); }  // log(e^v − 1)

}  // namespace

Problem realistic_problem(const Shape& shape, const Formats& formats, uint64_t seed,
                          const RealisticOptions& o) {
  Problem p;
  p.shape = shape;
  p.formats = formats;
  p.dt_softplus = o.dt_softplus;
  const int64_t T = shape.num_tokens(), H = shape.H, P = shape.P, N = shape.N, G = shape.G,
                S = shape.num_sequences();
  const Format in = formats.input;

  Rng rng = stream(seed, kA);
  for (int64_t h = 0; h < H; ++h) p.A.push_back(in_format(Format::fp32, -std::exp(rng.uniform() * std::log(16.0))));
  rng = stream(seed, kDelta);
  std::vector<double> delta0(H);
  for (auto& d : delta0) d = std::exp(std::log(1e-3) + rng.uniform() * (std::log(0.1) - std::log(1e-3)));
  if (o.dt_bias) {
    for (int64_t h = 0; h < H; ++h) {
      p.dt_bias.push_back(in_format(Format::fp32, o.dt_softplus ? softplus_inverse(delta0[h]) : delta0[h] / 2));
    }
  }
  rng = stream(seed, kDt);
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t h = 0; h < H; ++h) {
      double dt;
      if (o.dt_softplus) {
        dt = (o.dt_bias ? 0.0 : softplus_inverse(delta0[h])) + 0.5 * rng.normal();
      } else {
        dt = delta0[h] * ((o.dt_bias ? 0.0 : 0.5) + rng.uniform());
      }
      p.dt.push_back(in_format(in, dt));
    }
  }
  rng = stream(seed, kD);
  const int64_t d_count = o.d_mode == DMode::per_head ? H : o.d_mode == DMode::per_head_dim ? H * P : 0;
  for (int64_t i = 0; i < d_count; ++i) p.D.push_back(in_format(Format::fp32, 1.0 + 0.1 * rng.normal()));
  rng = stream(seed, kX);
  for (int64_t i = 0; i < T * H * P; ++i) p.x.push_back(in_format(in, rng.normal()));
  if (o.z) {
    rng = stream(seed, kZ);
    for (int64_t i = 0; i < T * H * P; ++i) p.z.push_back(in_format(in, rng.normal()));
  }
  rng = stream(seed, kB);
  for (int64_t i = 0; i < T * G * N; ++i) p.B.push_back(in_format(in, rng.normal()));
  rng = stream(seed, kC);
  for (int64_t i = 0; i < T * G * N; ++i) p.C.push_back(in_format(in, rng.normal()));
  if (o.initial_state) {
    rng = stream(seed, kState);
    for (int64_t i = 0; i < S * H * P * N; ++i) p.initial_state.push_back(in_format(formats.state, 0.1 * rng.normal()));
  }
  // The input tensors as a dump's are held: narrowed to the input format (bf16 and fp16 as bits).
  for (FormatValues* v : {&p.x, &p.dt, &p.B, &p.C, &p.z}) {
    if (!v->empty()) v->narrow(in);
  }
  return p;
}

}  // namespace ssmv
