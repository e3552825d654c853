#include "properties/mamba3/step_gen.h"

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <sstream>
#include <utility>
#include <vector>

#include "properties/gen/choice.h"
#include "properties/gen/float_gen.h"
#include "properties/harness/feature_count.h"
#include "properties/harness/settings.h"

namespace ssmv::prop::mamba3 {
namespace {

using rc::gen::inRange;
using ssmv::mamba3::Problem;

std::vector<float> draw_vector(int64_t n, const rc::Gen<float>& g) {
  return *rc::gen::container<std::vector<float>>(size_t(n), g);
}

// A uniform draw in [lo, lo + width) on a grid of 2^20 steps, shrinking toward lo.
rc::Gen<double> uniform(double lo, double width) {
  return rc::gen::map(inRange<int>(0, 1 << 20), [lo, width](int k) { return lo + width * std::ldexp(double(k), -20); });
}

}  // namespace

rc::Gen<GeneratedStep> step_problem(const StepOptions& o) {
  return rc::gen::exec([o] {
    // Dimensions first: rapidcheck redraws every pick after a shrunk one.
    const int64_t G = *choice<int64_t>(1, 2);
    const int64_t H = G * *inRange<int64_t>(1, 3);
    const int64_t P = *inRange<int64_t>(1, 9);
    const int64_t N = 2 * *inRange<int64_t>(2, 17);
    const int64_t R = 2 * *inRange<int64_t>(1, N / 4 + 1);
    const int64_t HPN = H * P * N;
    // One case in long_share is one long sequence (shrinking toward a short case).
    // (At full size: rapidcheck scales inRange's draws by the case's size, which starts small.)
    const bool long_case =
        o.long_share > 0 && *rc::gen::resize(kMaxSize, inRange<int64_t>(0, o.long_share)) == o.long_share - 1;
    std::vector<int64_t> cu{0};
    if (long_case) {
      const int64_t hi = std::clamp<int64_t>(4 * o.max_updates / HPN, kLongMin, kLongMax);
      cu.push_back(*inRange<int64_t>(kLongMin, hi + 1));
    } else {
      int64_t S = *inRange<int64_t>(1, o.max_sequences + 1);
      while (S > 1 && S * o.min_len * HPN > o.max_updates) --S;
      const int64_t max_len = std::max(o.min_len, std::min(o.max_len, o.max_updates / (S * HPN)));
      for (int64_t s = 0; s < S; ++s) cu.push_back(cu.back() + *inRange<int64_t>(o.min_len, max_len + 1));
    }
    const int64_t S = int64_t(cu.size()) - 1;

    Problem p;
    p.shape = ssmv::mamba3::Shape{cu, H, P, N, G, R};
    p.formats.input = Format::bf16;
    p.formats.angles = Format::bf16;
    p.formats.state = *choice(Format::fp32, Format::bf16);
    p.formats.output = *choice(Format::bf16, Format::fp32);
    const bool has_D = *rc::gen::arbitrary<bool>();
    const bool has_z = *rc::gen::arbitrary<bool>();
    const bool has_initial = *rc::gen::arbitrary<bool>();

    const int64_t T = cu.back();
    const rc::Gen<float> unit_bf16 = normal_value(Format::bf16, 0.0, 1.0);
    const rc::Gen<float> unit_fp32 = normal_value(Format::fp32, 0.0, 1.0);
    p.x = draw_vector(T * H * P, unit_bf16);
    p.B = draw_vector(T * G * N, unit_bf16);
    p.C = draw_vector(T * G * N, unit_bf16);
    p.trap = draw_vector(T * H, unit_bf16);
    p.angles = draw_vector(T * H * R, unit_bf16);
    ShrinkLimits dt_limits;
    dt_limits.keep_sign = true;
    dt_limits.max_abs = 0.1;
    dt_limits.nonzero = true;
    p.dt = draw_vector(T * H, log_uniform_value(Format::fp32, 1e-3, 0.1, false, dt_limits));
    const std::vector<double> a = *rc::gen::container<std::vector<double>>(size_t(T * H), uniform(1.0, 15.0));
    p.adt.resize(p.dt.size());
    for (size_t i = 0; i < p.dt.size(); ++i) p.adt[i] = -(float(a[i]) * p.dt[i]);  // as upstream: in fp32
    p.B_bias = draw_vector(H * N, unit_fp32);
    p.C_bias = draw_vector(H * N, unit_fp32);
    if (has_D) p.D = draw_vector(H, unit_fp32);
    if (has_z) p.z = draw_vector(T * H * P, unit_bf16);
    if (has_initial) {
      const std::vector<double> theta = *rc::gen::container<std::vector<double>>(size_t(S * H * R), uniform(0.0, 6.28));
      p.initial.angle.assign(theta.begin(), theta.end());
      const rc::Gen<float> unit_state = normal_value(p.formats.state, 0.0, 1.0);
      p.initial.S = draw_vector(S * H * P * N, unit_state);
      p.initial.B_prev = draw_vector(S * H * N, unit_state);
      p.initial.x_prev = draw_vector(S * H * P, unit_state);
    }
    ssmv::mamba3::validate(p);
    return GeneratedStep{std::move(p)};
  });
}

void label_case(const GeneratedStep& g) { label_problem(g.problem); }

void label_problem(const Problem& p) {
  const ssmv::mamba3::Shape& s = p.shape;
  count_label(std::string("state_") + std::string(format_name(p.formats.state)));
  count_label(std::string("output_") + std::string(format_name(p.formats.output)));
  if (p.has_D()) count_label("D");
  if (p.has_z()) count_label("z");
  if (p.has_initial_state()) count_label("initial_state");
  if (s.num_sequences() > 1) count_label("sequences>1");
  if (s.num_tokens() >= kLongMin && s.num_sequences() == 1) count_label("long");
  if (s.G < s.H) count_label("G<H");
  if (2 * s.R < s.N) count_label("unrotated_pairs");
  count_updates(s.num_tokens() * s.H * s.P * s.N);
  RC_TAG(std::string(format_name(p.formats.state)), std::string(format_name(p.formats.output)));
}

std::string describe(const Problem& p) {
  std::ostringstream os;
  const ssmv::mamba3::Shape& s = p.shape;
  os << "S=" << s.num_sequences() << " T=" << s.num_tokens() << " lens=[";
  for (int64_t q = 0; q < s.num_sequences(); ++q) os << (q ? "," : "") << s.seq_len(q);
  os << "] H=" << s.H << " G=" << s.G << " P=" << s.P << " N=" << s.N << " R=" << s.R
     << " input=" << format_name(p.formats.input) << " angles=" << format_name(p.formats.angles)
     << " state=" << format_name(p.formats.state) << " output=" << format_name(p.formats.output)
     << " D=" << p.has_D() << " z=" << p.has_z() << " initial=" << p.has_initial_state();
  const std::pair<const char*, const std::vector<float>*> tensors[] = {
      {"x", &p.x},           {"B", &p.B},           {"C", &p.C},
      {"dt", &p.dt},         {"adt", &p.adt},       {"trap", &p.trap},
      {"angles", &p.angles}, {"B_bias", &p.B_bias}, {"C_bias", &p.C_bias},
      {"D", &p.D},           {"z", &p.z},           {"initial.angle", &p.initial.angle},
      {"initial.S", &p.initial.S}, {"initial.B_prev", &p.initial.B_prev}, {"initial.x_prev", &p.initial.x_prev}};
  size_t largest = 0;
  for (const auto& [name, v] : tensors) largest = std::max(largest, v->size());
  if (largest > 64) return os.str();
  for (const auto& [name, v] : tensors) {
    if (v->empty()) continue;
    os << "\n    " << name << " = [";
    char buf[40];
    for (size_t i = 0; i < v->size(); ++i) {
      std::snprintf(buf, sizeof buf, "%s%a", i ? ", " : "", double((*v)[i]));
      os << buf;
    }
    os << "]";
  }
  return os.str();
}

void showValue(const GeneratedStep& g, std::ostream& os) { os << "{" << describe(g.problem) << "}"; }

}  // namespace ssmv::prop::mamba3
