#include "verify/family/mamba3/sharp.h"

#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "spec/splitmix.h"
#include "verify/bound/mamba3/prefill_emulation.h"
#include "verify/bound/mamba3/step_emulation.h"
#include "verify/judge/sharp_weight.h"

namespace ssmv::family::mamba3 {
namespace {

using bound::mamba3::EmulatedSteps;
using bound::mamba3::EmulationOptions;
using ssmv::mamba3::PrefillContract;
using bound::mamba3::PrefillEmulationOptions;
using ssmv::mamba3::StepContract;
using bound::mamba3::Transcendentals;

// f's library value moved by the budget's full width at x, the sign drawn per call from `state`.
// `arg_scale` turns f's argument into the budget's (exp2 of adt·log2e is budgeted in adt).
std::function<float(float)> noisy(std::function<float(float)> f, const TranscendentalBudget& b,
                                  std::shared_ptr<uint64_t> state, double arg_scale = 1) {
  return [f = std::move(f), b, state, arg_scale](float x) {
    const float v = f(x);
    const double a = std::fabs(double(x) * arg_scale);
    const double width = (b.ulp_const + b.ulp_per_abs_arg * a) * ulp_of(Format::fp32, std::fabs(double(v))) +
                         b.abs_error;
    const bool up = (splitmix64_next(*state) >> 63) != 0;
    return float(double(v) + (up ? width : -width));
  };
}

Transcendentals noisy_transcendentals(const SharpModel& m, uint64_t seed) {
  const Transcendentals lib = bound::mamba3::library_transcendentals();
  auto state = std::make_shared<uint64_t>(seed);
  Transcendentals t;
  t.tanh = noisy(lib.tanh, m.tanh, state);
  t.cos = noisy(lib.cos, m.cos, state);
  t.sin = noisy(lib.sin, m.sin, state);
  t.exp2 = noisy(lib.exp2, m.exp2, state, m.exp2_arg_scale);
  t.sigmoid = noisy(lib.sigmoid, m.sigmoid, state);
  return t;
}

// Σ ((a_i − d_i)/w_i)² over the elements with a finite a_i and a positive weight; the angle's
// differences on the circle. `count` gets the elements counted.
double energy(const std::vector<float>& a, const std::vector<float>& d, const std::vector<uint16_t>& weights,
              bool circular, int64_t* count) {
  constexpr double kTwoPi = 6.283185307179586;
  double sum = 0;
  int64_t n = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double w = verify::sharp_weight(weights[i]);
    if (!std::isfinite(a[i]) || !(w > 0)) continue;
    double diff = double(a[i]) - double(d[i]);
    if (circular) diff -= kTwoPi * std::nearbyint(diff / kTwoPi);
    sum += (diff / w) * (diff / w);
    ++n;
  }
  if (count) *count = n;
  return sum;
}

// A candidate defect and how it changes the declared emulation's options.
template <class Options>
struct OptionsDefect {
  Defect defect;
  std::function<void(Options&)> apply;
};
template <class Options, class Bug>
OptionsDefect<Options> planted(Bug bug, std::string name, std::string description) {
  return {{std::move(name), std::move(description)}, [bug](Options& o) { o.bug = bug; }};
}

// The step kernel's candidate defects under contract c: the planted catalogue's slips
// (step_emulation.h PlantedBug), and the C·S dot's operands in bf16 where c keeps them in fp32.
std::vector<OptionsDefect<EmulationOptions>> step_defects(const StepContract& c) {
  using bound::mamba3::PlantedBug;
  const auto bug = [](PlantedBug b, const char* name, const char* description) {
    return planted<EmulationOptions>(b, name, description);
  };
  std::vector<OptionsDefect<EmulationOptions>> d = {
      bug(PlantedBug::beta_uses_current_b, "beta term on b instead of b_prev",
          "the trapezoid's previous-token term formed with the current token's b"),
      bug(PlantedBug::beta_without_decay, "beta without the decay", "beta = dt·(1 − lambda), alpha left out"),
      bug(PlantedBug::angle_state_ignored, "carried angle ignored", "theta = pi·tanh(angle)·dt, the angle state not added"),
      bug(PlantedBug::state_rounded_before_update, "state rounded to bf16 before the update",
          "the carried fp32 state rounded to bf16 before alpha·S"),
      bug(PlantedBug::gate_via_tanh_approx, "gate sigma through an 11-bit tanh",
          "sigma(z) = 0.5·tanh(0.5·z) + 0.5 with tanh.approx's 2^-11"),
      bug(PlantedBug::angle_stored_bf16, "angle state stored in bf16", "theta kept in bf16 between tokens"),
      bug(PlantedBug::crude_exp2, "exp2 to 12 bits", "the decay alpha from a 12-bit exp2"),
      bug(PlantedBug::rotation_pairs_halves, "rotation pairs (r, r + N/2)",
          "B and C turned in pairs (r, r + N/2) instead of (2r, 2r + 1)"),
  };
  if (c.dot_operands == Format::fp32) {
    d.push_back({{"dot operands in bf16", "the state and the turned C rounded to bf16 before C·S"},
                 [](EmulationOptions& o) { o.dot_operands = Format::bf16; }});
  }
  return d;
}

// The prefill's candidate defects under contract c: the planted catalogue's slips
// (prefill_emulation.h PrefillBug), and each store or dot the contract keeps finer made coarser as
// mamba_ssm's kernel makes it (θ, q and k stored in bf16, bf16 dot operands, the diagonal on tf32).
std::vector<OptionsDefect<PrefillEmulationOptions>> prefill_defects(const PrefillContract& c) {
  using bound::mamba3::PrefillBug;
  using O = PrefillEmulationOptions;
  const auto bug = [](PrefillBug b, const char* name, const char* description) {
    return planted<O>(b, name, description);
  };
  std::vector<OptionsDefect<O>> d = {
      bug(PrefillBug::shifted_gamma_chunk_masked, "next token's trapezoid term masked at chunk ends",
          "the next token's dt and trap read as 0 at each chunk's end instead of the sequence's"),
      bug(PrefillBug::angle_carry_dropped, "angle not carried across chunks",
          "each chunk's cumulative angle restarted from the sequence's start value"),
      bug(PrefillBug::initial_trap_term_dropped, "initial trapezoid term dropped",
          "the initial state enters without dt_0·(1 − lambda_0)·x_prev ⊗ b_prev"),
      bug(PrefillBug::intra_decay_off_by_one, "intra-chunk decay off by one",
          "the causal weight decays by exp2(cs_i − cs_{j−1}), one token too many"),
      bug(PrefillBug::state_update_undecayed, "state update undecayed",
          "the chunk's state update forgets the decay to the chunk's end"),
      bug(PrefillBug::diagonal_dropped, "diagonal dropped", "the (i, i) term gamma_i·(q·k)·x_i left out"),
  };
  if (c.angle_store == Format::fp32) {
    d.push_back({{"theta stored in bf16", "the cumulative angle and the returned angle state stored in bf16"},
                 [](O& o) { o.angle_store = Format::bf16; }});
  }
  if (c.qk_store == Format::fp32) {
    d.push_back({{"q and k stored in bf16", "the turned C and scaled B stored in bf16"},
                 [](O& o) { o.qk_store = Format::bf16; }});
  }
  if (c.dot_operands == Format::fp32) {
    d.push_back({{"dot operands in bf16", "the state, causal weights and decayed x rounded to bf16 before their dots"},
                 [](O& o) { o.dot_operands = Format::bf16; }});
  }
  if (!c.qk_dot_tf32) {
    d.push_back({{"diagonal on a tf32 mma", "each q_n·k_n product truncated to tf32 before the diagonal's sum"},
                 [](O& o) { o.qk_dot_tf32 = true; }});
  }
  return d;
}

// The step kernel's emulation as its contract declares it, FMA contraction on (Triton's default
// enable_fp_fusion).
EmulationOptions step_options(const StepContract& c) {
  EmulationOptions o;
  o.dot_operands = c.dot_operands;
  o.fused = true;
  return o;
}

// The prefill's emulation in allowed configuration `configuration` (prefill_model).
PrefillEmulationOptions prefill_options(const PrefillContract& c, int64_t chunk_size, size_t configuration) {
  PrefillEmulationOptions o;
  o.chunk_size = chunk_size;
  o.angle_store = configuration == 0 ? c.angle_store : Format::fp32;
  o.qk_store = configuration <= 1 ? c.qk_store : Format::fp32;
  o.dot_operands = configuration <= 1 ? c.dot_operands : Format::fp32;
  o.qk_dot_tf32 = configuration <= 1 && c.qk_dot_tf32;
  o.fused = true;  // Triton's default enable_fp_fusion
  return o;
}

}  // namespace

SharpModel step_model(const StepContract& c) {
  SharpModel m;
  m.emulate = [c](const ssmv::mamba3::Problem& pr, size_t, uint64_t noise_seed, const Transcendentals& fns) {
    EmulationOptions o = step_options(c);
    o.noise_seed = noise_seed;
    o.fns = fns;
    return bound::mamba3::emulate_steps(pr, o);
  };
  m.tanh = c.tanh;
  m.cos = c.cos;
  m.sin = c.sin;
  m.exp2 = c.exp;
  m.exp2_arg_scale = 1 / 1.4426950408889634;  // exp2's argument is adt·log2 e, the budget's adt
  m.sigmoid = c.sigmoid;
  const auto defects = step_defects(c);
  for (const auto& d : defects) m.defects.push_back(d.defect);
  m.emulate_defect = [c, defects](const ssmv::mamba3::Problem& pr, size_t d) {
    EmulationOptions o = step_options(c);
    defects[d].apply(o);
    return bound::mamba3::emulate_steps(pr, o);
  };
  return m;
}

SharpModel prefill_model(const PrefillContract& c, int64_t chunk_size) {
  SharpModel m;
  m.configurations = {"as declared", "theta in fp32", "fp32 stores and dots"};
  m.emulate = [c, chunk_size](const ssmv::mamba3::Problem& pr, size_t configuration, uint64_t noise_seed,
                              const Transcendentals& fns) {
    PrefillEmulationOptions o = prefill_options(c, chunk_size, configuration);
    o.noise_seed = noise_seed;
    o.fns = fns;
    return bound::mamba3::emulate_prefill(pr, o);
  };
  m.tanh = c.tanh;
  m.cos = c.cos;
  m.sin = c.sin;
  m.exp2 = c.exp2;
  m.sigmoid = c.sigmoid;
  const auto defects = prefill_defects(c);
  for (const auto& d : defects) m.defects.push_back(d.defect);
  m.emulate_defect = [c, chunk_size, defects](const ssmv::mamba3::Problem& pr, size_t d) {
    PrefillEmulationOptions o = prefill_options(c, chunk_size, 0);
    defects[d].apply(o);
    return bound::mamba3::emulate_prefill(pr, o);
  };
  return m;
}

PairWeights pair_weights(const bound::mamba3::StepBounds& bounds) {
  const std::array<const std::vector<double>*, kParts> b = {&bounds.y, &bounds.angle, &bounds.S, &bounds.B_prev,
                                                            &bounds.x_prev};
  PairWeights w;
  for (size_t p = 0; p < kParts; ++p) {
    w[p].resize(b[p]->size());
    for (size_t i = 0; i < w[p].size(); ++i) w[p][i] = verify::sharp_weight_bits((*b[p])[i]);
  }
  return w;
}

namespace {
std::array<const std::vector<float>*, kParts> parts_of(const Outputs& o) {
  const ssmv::mamba3::FourPartState& f = o.final_state;
  return {&o.y, &f.angle, &f.S, &f.B_prev, &f.x_prev};
}
std::array<const std::vector<float>*, kParts> parts_of(const EmulatedSteps& e) {
  return {&e.y, &e.angle, &e.S, &e.B_prev, &e.x_prev};
}
}  // namespace

PairEnergies pair_energies(const ssmv::mamba3::Problem& pair, const SharpModel& model, const Outputs& kernel,
                           const PairWeights& w, const sharp::SharpOptions& o, uint64_t seed) {
  const size_t configs = model.configurations.size();
  const auto k_parts = parts_of(kernel);
  PairEnergies r;
  for (size_t p = 0; p < kParts; ++p) r.energy[p].assign(configs + size_t(o.runs), 0.0);
  EmulatedSteps declared;
  for (size_t c = 0; c < configs; ++c) {
    EmulatedSteps d = model.emulate(pair, c, 0, bound::mamba3::library_transcendentals());
    const auto d_parts = parts_of(d);
    for (size_t p = 0; p < kParts; ++p) {
      if (!k_parts[p]->empty()) {
        r.energy[p][c] = energy(*k_parts[p], *d_parts[p], w[p], p == kAngle, c == 0 ? &r.elements[p] : nullptr);
      }
    }
    if (c == 0) declared = std::move(d);
  }
  const auto d_parts = parts_of(declared);
  for (int m = 1; m <= o.runs; ++m) {
    const uint64_t noise_seed = splitmix64_mix(seed + uint64_t(m) * 0x632be59bd9b4e019ull) | 1;  // nonzero: noise on
    const EmulatedSteps e =
        model.emulate(pair, 0, noise_seed, noisy_transcendentals(model, splitmix64_mix(noise_seed ^ 0xd1b54a32d192ed03ull)));
    const auto e_parts = parts_of(e);
    for (size_t p = 0; p < kParts; ++p) {
      if (!k_parts[p]->empty()) {
        r.energy[p][configs + size_t(m) - 1] = energy(*e_parts[p], *d_parts[p], w[p], p == kAngle, nullptr);
      }
    }
  }
  return r;
}

std::array<std::vector<double>, kParts> defect_energies(const ssmv::mamba3::Problem& pair, const SharpModel& model,
                                                        const Outputs& kernel, const PairWeights& weights,
                                                        const std::array<bool, kParts>& wanted) {
  const auto k_parts = parts_of(kernel);
  std::array<std::vector<double>, kParts> r;
  for (size_t p = 0; p < kParts; ++p) {
    if (wanted[p] && !k_parts[p]->empty()) r[p].assign(model.defects.size(), 0.0);
  }
  for (size_t d = 0; d < model.defects.size(); ++d) {
    const EmulatedSteps e = model.emulate_defect(pair, d);
    const auto e_parts = parts_of(e);
    for (size_t p = 0; p < kParts; ++p) {
      if (!r[p].empty()) r[p][d] = energy(*k_parts[p], *e_parts[p], weights[p], p == kAngle, nullptr);
    }
  }
  return r;
}

}  // namespace ssmv::family::mamba3
