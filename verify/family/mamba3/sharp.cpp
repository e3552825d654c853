#include "verify/family/mamba3/sharp.h"

#include <cmath>
#include <memory>

#include "spec/splitmix.h"
#include "verify/bound/mamba3/prefill_emulation.h"
#include "verify/bound/mamba3/step_emulation.h"
#include "verify/judge/sharp_weight.h"

namespace ssmv::family::mamba3 {
namespace {

using bound::mamba3::EmulatedSteps;
using bound::mamba3::EmulationOptions;
using bound::mamba3::PrefillContract;
using bound::mamba3::PrefillEmulationOptions;
using bound::mamba3::StepContract;
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
double energy(const std::vector<float>& a, const std::vector<float>& d, const std::vector<double>& bounds,
              bool circular, int64_t* count) {
  constexpr double kTwoPi = 6.283185307179586;
  double sum = 0;
  int64_t n = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double w = verify::sharp_weight(verify::sharp_weight_bits(bounds[i]));
    if (!std::isfinite(a[i]) || !(w > 0)) continue;
    double diff = double(a[i]) - double(d[i]);
    if (circular) diff -= kTwoPi * std::nearbyint(diff / kTwoPi);
    sum += (diff / w) * (diff / w);
    ++n;
  }
  if (count) *count = n;
  return sum;
}

}  // namespace

SharpModel step_model(const StepContract& c) {
  SharpModel m;
  m.emulate = [c](const ssmv::mamba3::Problem& pr, size_t, uint64_t noise_seed, const Transcendentals& fns) {
    EmulationOptions o;
    o.dot_operands = c.dot_operands;
    o.fused = true;  // Triton's default enable_fp_fusion
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
  return m;
}

SharpModel prefill_model(const PrefillContract& c, int64_t chunk_size) {
  SharpModel m;
  m.configurations = {"as declared", "theta in fp32", "fp32 stores and dots"};
  m.emulate = [c, chunk_size](const ssmv::mamba3::Problem& pr, size_t configuration, uint64_t noise_seed,
                              const Transcendentals& fns) {
    PrefillEmulationOptions o;
    o.chunk_size = chunk_size;
    o.angle_store = configuration == 0 ? c.angle_store : Format::fp32;
    o.qk_store = configuration <= 1 ? c.qk_store : Format::fp32;
    o.dot_operands = configuration <= 1 ? c.dot_operands : Format::fp32;
    o.qk_dot_tf32 = configuration <= 1 && c.qk_dot_tf32;
    o.fused = true;  // Triton's default enable_fp_fusion
    o.noise_seed = noise_seed;
    o.fns = fns;
    return bound::mamba3::emulate_prefill(pr, o);
  };
  m.tanh = c.tanh;
  m.cos = c.cos;
  m.sin = c.sin;
  m.exp2 = c.exp2;
  m.sigmoid = c.sigmoid;
  return m;
}

PairEnergies pair_energies(const ssmv::mamba3::Problem& pair, const SharpModel& model, const Outputs& kernel,
                           const bound::mamba3::StepBounds& bounds, const sharp::SharpOptions& o, uint64_t seed) {
  const size_t configs = model.configurations.size();
  const ssmv::mamba3::FourPartState& kf = kernel.final_state;
  const std::array<const std::vector<float>*, kParts> k_parts = {&kernel.y, &kf.angle, &kf.S, &kf.B_prev, &kf.x_prev};
  const std::array<const std::vector<double>*, kParts> b_parts = {&bounds.y, &bounds.angle, &bounds.S,
                                                                  &bounds.B_prev, &bounds.x_prev};
  const auto parts = [](const EmulatedSteps& e) {
    return std::array<const std::vector<float>*, kParts>{&e.y, &e.angle, &e.S, &e.B_prev, &e.x_prev};
  };
  PairEnergies r;
  for (size_t p = 0; p < kParts; ++p) r.energy[p].assign(configs + size_t(o.runs), 0.0);
  EmulatedSteps declared;
  for (size_t c = 0; c < configs; ++c) {
    EmulatedSteps d = model.emulate(pair, c, 0, bound::mamba3::library_transcendentals());
    const auto d_parts = parts(d);
    for (size_t p = 0; p < kParts; ++p) {
      if (!k_parts[p]->empty()) {
        r.energy[p][c] = energy(*k_parts[p], *d_parts[p], *b_parts[p], p == kAngle, c == 0 ? &r.elements[p] : nullptr);
      }
    }
    if (c == 0) declared = std::move(d);
  }
  const auto d_parts = parts(declared);
  for (int m = 1; m <= o.runs; ++m) {
    const uint64_t noise_seed = splitmix64_mix(seed + uint64_t(m) * 0x632be59bd9b4e019ull) | 1;  // nonzero: noise on
    const EmulatedSteps e =
        model.emulate(pair, 0, noise_seed, noisy_transcendentals(model, splitmix64_mix(noise_seed ^ 0xd1b54a32d192ed03ull)));
    const auto e_parts = parts(e);
    for (size_t p = 0; p < kParts; ++p) {
      if (!k_parts[p]->empty()) {
        r.energy[p][configs + size_t(m) - 1] = energy(*e_parts[p], *d_parts[p], *b_parts[p], p == kAngle, nullptr);
      }
    }
  }
  return r;
}

}  // namespace ssmv::family::mamba3
