#include "fast/ssu/tests/ssu_problems.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <sstream>

#include "spec/format.h"

namespace ssmv::ssu::testing {
namespace {

using Rng = std::mt19937_64;

float normal_in(Rng& rng, Format f, double scale = 1.0) {
  std::normal_distribution<double> nd(0.0, scale);
  return static_cast<float>(round_value(f, nd(rng)));
}

double uniform(Rng& rng, double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); }

// Sub-seed per tensor so that changing one option leaves the other tensors unchanged.
Rng tensor_rng(uint64_t seed, uint64_t tensor) { return Rng(seed * 0x9e3779b97f4a7c15ULL + tensor); }

}  // namespace

GeneratedProblem make_problem(const ProblemConfig& c, uint64_t seed) {
  GeneratedProblem g;
  DecodeProblem& d = g.decode;
  Problem& pr = d.problem;
  Shape& s = pr.shape;
  s.H = c.H;
  s.P = c.P;
  s.N = c.N;
  s.G = c.G;
  pr.formats = c.formats;
  pr.dt_softplus = c.dt_softplus;
  Rng len_rng = tensor_rng(seed, 1);
  s.cu_seqlens = {0};
  for (int64_t r = 0; r < c.requests; ++r) {
    s.cu_seqlens.push_back(s.cu_seqlens.back() + std::uniform_int_distribution<int64_t>(1, c.max_tokens)(len_rng));
  }
  const int64_t T = s.num_tokens(), H = c.H, P = c.P, N = c.N, G = c.G, R = c.requests;
  const Format in = c.formats.input;

  Rng rng = tensor_rng(seed, 2);
  for (int64_t i = 0; i < T * H * P; ++i) pr.x.push_back(normal_in(rng, in));
  rng = tensor_rng(seed, 3);
  for (int64_t i = 0; i < T * G * N; ++i) pr.B.push_back(normal_in(rng, in));
  rng = tensor_rng(seed, 4);
  for (int64_t i = 0; i < T * G * N; ++i) pr.C.push_back(normal_in(rng, in));
  if (c.z) {
    rng = tensor_rng(seed, 5);
    for (int64_t i = 0; i < T * H * P; ++i) pr.z.push_back(normal_in(rng, in));
  }
  rng = tensor_rng(seed, 6);
  for (int64_t h = 0; h < H; ++h) pr.A.push_back(static_cast<float>(-std::exp(uniform(rng, 0.0, std::log(16.0)))));
  // δ target log-uniform in [1e-3, 0.1]; with softplus the bias is its inverse softplus
  // log(e^δ − 1) and dt adds a small N(0, 0.5) perturbation per token.
  rng = tensor_rng(seed, 7);
  for (int64_t h = 0; h < H; ++h) {
    const double target = std::exp(uniform(rng, std::log(1e-3), std::log(0.1)));
    const double bias = c.dt_softplus ? std::log(std::expm1(target)) : target;
    if (c.dt_bias) pr.dt_bias.push_back(static_cast<float>(bias));
  }
  rng = tensor_rng(seed, 8);
  for (int64_t i = 0; i < T * H; ++i) {
    // Without a bias, dt itself must carry δ: positive around 0.05 without softplus.
    const double base = c.dt_bias ? 0.0 : (c.dt_softplus ? -3.0 : 0.05);
    const double spread = c.dt_softplus ? 0.5 : (c.dt_bias ? 0.01 : 0.02);
    double v = base + std::normal_distribution<double>(0.0, spread)(rng);
    if (!c.dt_softplus && !c.dt_bias) v = std::fabs(v);
    pr.dt.push_back(static_cast<float>(round_value(in, v)));
  }
  if (c.dt_limit) {
    pr.dt_limit_lo = 1e-3f;
    pr.dt_limit_hi = 0.05f;
  }
  rng = tensor_rng(seed, 9);
  if (c.d_mode == DMode::per_head)
    for (int64_t h = 0; h < H; ++h) pr.D.push_back(normal_in(rng, Format::fp32));
  if (c.d_mode == DMode::per_head_dim)
    for (int64_t i = 0; i < H * P; ++i) pr.D.push_back(normal_in(rng, Format::fp32));

  // Slots: [0, R) read slots, [R, 2R) final destinations (when used), then token states.
  const bool use_out = c.repeated_reads || c.separate_out;
  d.slots = R + (use_out ? R : 0) + (c.token_states ? T : 0) + 1;  // + 1: a slot nobody uses
  d.pad_slot_id = c.pad_slot_id >= 0 ? std::max(c.pad_slot_id, d.slots) : -1;
  rng = tensor_rng(seed, 10);
  std::vector<int64_t> perm(R);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  for (int64_t r = 0; r < R; ++r) {
    const bool pad = uniform(rng, 0, 1) < c.pad_fraction;
    int64_t in_slot = c.repeated_reads ? std::uniform_int_distribution<int64_t>(0, std::max<int64_t>(0, R / 2))(rng) : perm[r];
    d.slot_in.push_back(pad ? d.pad_slot_id : in_slot);
    if (use_out) d.slot_out.push_back(pad ? d.pad_slot_id : R + r);
  }
  if (c.token_states) {
    for (int64_t q = 0; q < T; ++q) {
      g.options.token_state_slots.push_back(uniform(rng, 0, 1) < 0.8 ? R + (use_out ? R : 0) + q : d.pad_slot_id);
    }
  }
  rng = tensor_rng(seed, 11);
  if (c.random_pool) {
    for (int64_t i = 0; i < d.slots * H * P * N; ++i) d.state_pool.push_back(normal_in(rng, c.formats.state, 2.0));
  } else {
    d.state_pool.assign(size_t(d.slots * H * P * N), 0.0f);
  }

  std::ostringstream os;
  os << "seed " << seed << ": R=" << R << " T=" << T << " H=" << H << " P=" << P << " N=" << N << " G=" << G
     << " in=" << format_name(c.formats.input) << " state=" << format_name(c.formats.state)
     << " out=" << format_name(c.formats.output) << " softplus=" << c.dt_softplus << " bias=" << c.dt_bias
     << " limit=" << c.dt_limit << " D=" << int(c.d_mode) << " z=" << c.z << " pad=" << c.pad_fraction
     << " repeated=" << c.repeated_reads << " out_slots=" << use_out << " token_states=" << c.token_states
     << " pad_id=" << d.pad_slot_id;
  g.description = os.str();
  return g;
}

ProblemConfig random_config(uint64_t seed) {
  Rng rng(seed ^ 0xc0ffee1234ULL);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const Format formats[] = {Format::fp32, Format::bf16, Format::fp16};
  // Edges of the lane layout (32·V for V = 1..8) and of the 16-row tile, ± 1.
  const int64_t edges[] = {1, 2, 3, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256};
  ProblemConfig c;
  c.requests = pick(1, 5);
  c.max_tokens = pick(0, 3) == 0 ? pick(2, 4) : 1;
  c.H = pick(1, 4);
  const int64_t groups[] = {1, 2, 4};
  do c.G = groups[pick(0, 2)];
  while (c.H % c.G != 0);
  c.P = pick(0, 1) ? edges[pick(0, 16)] : pick(1, 80);
  c.N = pick(0, 1) ? edges[pick(0, 16)] : pick(1, 256);
  // Keep the twin's work per problem around 10^5 element-steps.
  while (c.requests * c.max_tokens * c.H * c.P * c.N > 400000 && c.P > 1) c.P = (c.P + 1) / 2;
  c.formats = {formats[pick(0, 2)], formats[pick(0, 2)], formats[pick(0, 2)]};
  c.dt_softplus = pick(0, 3) != 0;
  c.dt_bias = pick(0, 3) != 0;
  c.dt_limit = pick(0, 3) == 0;
  c.d_mode = static_cast<DMode>(pick(0, 2));
  c.z = pick(0, 1) == 1;
  c.pad_fraction = pick(0, 2) == 0 ? 0.3 : 0.0;
  c.repeated_reads = pick(0, 3) == 0;
  c.separate_out = pick(0, 3) == 0;
  c.token_states = c.max_tokens > 1 && pick(0, 1) == 1;
  c.pad_slot_id = pick(0, 1) ? -1 : 1000;
  return c;
}

}  // namespace ssmv::ssu::testing
