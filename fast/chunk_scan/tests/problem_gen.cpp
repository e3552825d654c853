#include "fast/chunk_scan/tests/problem_gen.h"

#include <cmath>

#include "spec/realistic_problem.h"

namespace ssmv::chunk_scan::testing {

Problem make_problem(const GenOptions& o, uint64_t seed) {
  Shape shape;
  shape.cu_seqlens = {0};
  for (int64_t len : o.seq_lens) shape.cu_seqlens.push_back(shape.cu_seqlens.back() + len);
  shape.H = o.H;
  shape.P = o.P;
  shape.N = o.N;
  shape.G = o.G;
  RealisticOptions r;
  r.dt_softplus = o.softplus;
  r.dt_bias = o.dt_bias;
  r.d_mode = !o.D ? DMode::none : o.D_per_dim ? DMode::per_head_dim : DMode::per_head;
  r.z = o.z;
  r.initial_state = o.initial_state;
  Problem p = realistic_problem(shape, Formats{o.input, o.state, o.output}, seed, r);
  p.dt_limit_lo = o.dt_limit_lo;
  p.dt_limit_hi = o.dt_limit_hi;
  return p;
}

GenOptions random_options(std::mt19937_64& rng, int64_t L, int64_t max_tokens) {
  auto pick = [&](std::initializer_list<int64_t> v) {
    return *(v.begin() + std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng));
  };
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  GenOptions o;
  const Format formats[] = {Format::bf16, Format::fp16, Format::fp32};
  o.input = chance(0.6) ? Format::bf16 : formats[pick({1, 2})];
  o.state = formats[pick({0, 1, 2})];
  o.output = formats[pick({0, 1, 2})];
  o.G = pick({1, 1, 2});
  o.H = o.G * pick({1, 2});
  if (chance(0.05)) {
    o.P = pick({128, 256});
    o.N = pick({8, 16});
  } else if (chance(0.05)) {
    o.P = pick({8, 16});
    o.N = pick({128, 256});
  } else {
    // 12 and 20 are not multiples of 8: the kernels' scalar (unvectorised) load paths.
    o.P = pick({8, 12, 16, 24, 32, 64});
    o.N = pick({16, 20, 32, 48, 64});
  }
  const int64_t budget = max_tokens * 64 * 64 / (o.H * std::max<int64_t>(o.P * o.N, 64 * 64) / 1);
  int64_t total = 0;
  const int64_t S = pick({1, 2, 3, 5});
  for (int64_t s = 0; s < S; ++s) {
    int64_t len = pick({1, L - 1, L, L + 1, 2 * L + 1});
    if (chance(0.4)) len = std::uniform_int_distribution<int64_t>(1, 2 * L)(rng);
    if (total + len > budget && total > 0) break;
    o.seq_lens.push_back(std::max<int64_t>(1, std::min(len, budget)));
    total += o.seq_lens.back();
  }
  o.softplus = chance(0.8);
  o.dt_bias = chance(0.8);
  o.z = chance(0.5);
  o.D = chance(0.7);
  o.D_per_dim = chance(0.3);
  o.initial_state = chance(0.5);
  if (chance(0.2)) {
    o.dt_limit_lo = 2e-3f;
    o.dt_limit_hi = 5e-2f;
  }
  return o;
}

std::string describe(const Problem& p) {
  std::string s = "T=" + std::to_string(p.shape.num_tokens()) + ",S=" +
                  std::to_string(p.shape.num_sequences()) + ",H=" + std::to_string(p.shape.H) +
                  ",P=" + std::to_string(p.shape.P) + ",N=" + std::to_string(p.shape.N) +
                  ",G=" + std::to_string(p.shape.G) + ",in=" +
                  std::string(format_name(p.formats.input)) + ",state=" +
                  std::string(format_name(p.formats.state)) + ",out=" +
                  std::string(format_name(p.formats.output)) + ",lens=";
  for (int64_t i = 0; i < p.shape.num_sequences(); ++i) s += std::to_string(p.shape.seq_len(i)) + " ";
  s += p.has_z() ? ",z" : "";
  s += p.has_D() ? ",D" : "";
  s += p.has_initial_state() ? ",h0" : "";
  s += p.dt_softplus ? ",softplus" : "";
  return s;
}

}  // namespace ssmv::chunk_scan::testing
