#include "fast/ssu/tests/problem_gen.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <sstream>

#include "spec/format.h"
#include "spec/realistic_problem.h"

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
  Shape s;
  s.H = c.H;
  s.P = c.P;
  s.N = c.N;
  s.G = c.G;
  Rng len_rng = tensor_rng(seed, 1);
  s.cu_seqlens = {0};
  for (int64_t r = 0; r < c.requests; ++r) {
    const int64_t tokens = std::uniform_int_distribution<int64_t>(c.min_tokens, c.max_tokens)(len_rng);
    s.cu_seqlens.push_back(s.cu_seqlens.back() + tokens);
  }
  const int64_t T = s.num_tokens(), H = c.H, P = c.P, N = c.N, R = c.requests;
  RealisticOptions options;
  options.dt_softplus = c.dt_softplus;
  options.dt_bias = c.dt_bias;
  options.d_mode = c.d_mode;
  options.z = c.z;
  options.initial_state = false;  // decode reads its states from the pool below
  pr = realistic_problem(s, c.formats, seed, options);
  if (c.dt_limit) {
    pr.dt_limit_lo = 1e-3f;
    pr.dt_limit_hi = 0.05f;
  }

  // Slots: [0, R) read slots, [R, 2R) final destinations (when used), then token states.
  const bool use_out = c.repeated_reads || c.separate_out;
  d.slots = R + (use_out ? R : 0) + (c.token_states ? T : 0) + 1;  // + 1: a slot nobody uses
  d.pad_slot_id = c.pad_slot_id >= 0 ? std::max(c.pad_slot_id, d.slots) : -1;
  Rng rng = tensor_rng(seed, 10);
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
      g.config.token_state_slots.push_back(uniform(rng, 0, 1) < 0.8 ? R + (use_out ? R : 0) + q : d.pad_slot_id);
    }
  }
  rng = tensor_rng(seed, 11);
  if (c.random_pool) {
    for (int64_t i = 0; i < d.slots * H * P * N; ++i) d.state_pool.push_back(normal_in(rng, c.formats.state, 2.0));
  } else {
    d.state_pool.assign(size_t(d.slots * H * P * N), 0.0f);
  }

  std::ostringstream os;
  os << "seed " << seed << ": R=" << R << " T=" << T << " H=" << H << " P=" << P << " N=" << N << " G=" << c.G
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
