#include "properties/gen/problem_gen.h"

#include <algorithm>
#include <cmath>
#include <ostream>
#include <sstream>

#include "fast/common/recurrence_math.h"
#include "properties/gen/choice.h"
#include "properties/gen/float_gen.h"
#include "properties/harness/feature_count.h"
#include "properties/harness/settings.h"

namespace ssmv::prop {
namespace {

using rc::gen::inRange;

std::vector<float> draw_vector(int64_t n, const rc::Gen<float>& g) {
  return *rc::gen::container<std::vector<float>>(size_t(n), g);
}

// Caps on H·P·N (prefill keeps room for chunk-edge lengths of up to 2·256 + 1 tokens within
// PrefillOptions::max_updates; decode problems have few tokens and can be wider).
constexpr int64_t kMaxPrefillHPN = 256;
constexpr int64_t kMaxDecodeHPN = 1024;

// Adversarial features; each shrinks toward off (arbitrary<bool> shrinks to false).
struct Features {
  bool decay_to_one = false, cancellation = false, tiny = false, huge = false, subnormal = false,
       zeros = false, near_shortcut = false, no_softplus = false, clamp = false;
  std::vector<std::string> names() const {
    std::vector<std::string> n;
    const std::pair<bool, const char*> all[] = {
        {decay_to_one, "decay_to_one"}, {cancellation, "cancellation"}, {tiny, "tiny"},
        {huge, "huge"}, {subnormal, "subnormal"}, {zeros, "zeros"},
        {near_shortcut, "near_shortcut"}, {no_softplus, "no_softplus"}, {clamp, "dt_limit"}};
    for (const auto& [on, name] : all) {
      if (on) n.push_back(name);
    }
    return n;
  }
};

Features draw_features() {
  Features f;
  f.decay_to_one = *rc::gen::arbitrary<bool>();
  f.cancellation = *rc::gen::arbitrary<bool>();
  // tiny and huge exclude each other (the products must neither all underflow nor overflow).
  const int magnitude = *choice(0, 1, 2);  // 0 plain, 1 tiny, 2 huge
  f.tiny = magnitude == 1;
  f.huge = magnitude == 2;
  f.subnormal = *rc::gen::arbitrary<bool>();
  f.zeros = *rc::gen::arbitrary<bool>();
  f.near_shortcut = *rc::gen::arbitrary<bool>();
  f.no_softplus = !f.near_shortcut && *rc::gen::arbitrary<bool>();
  f.clamp = *rc::gen::arbitrary<bool>();
  return f;
}

// The value generator of x, B, C (input format) under the adversarial features. Magnitude
// ranges keep y and the states finite in fp32 and in the output/state formats: huge inputs
// force fp32 outputs and states (below), tiny inputs reach down to the subnormals.
rc::Gen<float> adversarial_input(Format f, const Features& ft) {
  const FormatInfo& fi = format_info(f);
  EdgeRange r;
  if (ft.tiny) {
    r.emin_exp = fi.emin - fi.precision + 1;
    r.emax_exp = f == Format::fp16 ? -10 : -40;
  } else if (ft.huge) {
    r.emin_exp = f == Format::fp16 ? 3 : 8;
    r.emax_exp = f == Format::fp16 ? 6 : 12;
  } else {
    r.emin_exp = ft.subnormal ? fi.emin - fi.precision + 1 : -8;
    r.emax_exp = 3;
  }
  rc::Gen<float> g = edge_value(f, r);
  if (ft.subnormal && !ft.tiny) {
    EdgeRange s;
    s.emin_exp = fi.emin - fi.precision + 1;
    s.emax_exp = fi.emin - 1;
    g = rc::gen::weightedOneOf<float>({{3, g}, {1, edge_value(f, s)}});
  }
  if (ft.zeros) g = rc::gen::weightedOneOf<float>({{2, g}, {1, rc::gen::just(0.0f)}});
  return g;
}

// δ as the kernels compute it (fm::delta, fast/common/recurrence_math.h): the values their
// cumulative sums add. Where fit_chunk_decay rescales (Σ δ·|A| > 96 over 256 tokens needs δ
// of order 1, softplus arguments above −1) each differs from the exact δ by under 3 ULP,
// inside fit_chunk_decay's 2^-20 margin.
double delta_of(const Problem& p, int64_t t, int64_t h) {
  return fm::delta(p.dt[p.dt_index(t, h)], p.has_dt_bias(), p.has_dt_bias() ? p.dt_bias[h] : 0.0f, p.dt_softplus,
                   p.dt_limit_lo, p.dt_limit_hi);
}

// Scales A[h] so that every 256-token window of a sequence (aligned to its start) has
// Σ δ·|A| ≤ 96: the chunked family's cumulative log-decays then stay inside the exp budget
// [−104, 89] with room for their rounding errors (see problem_gen.h).
void fit_chunk_decay(Problem& p) {
  constexpr double kMaxLogDecay = 96;
  const Shape& s = p.shape;
  for (int64_t h = 0; h < s.H; ++h) {
    double worst = 0;
    for (int64_t q = 0; q < s.num_sequences(); ++q) {
      for (int64_t w = s.cu_seqlens[q]; w < s.cu_seqlens[q + 1]; w += 256) {
        double sum = 0;
        for (int64_t t = w; t < std::min(w + 256, s.cu_seqlens[q + 1]); ++t) sum += delta_of(p, t, h);
        worst = std::max(worst, sum * std::fabs(double(p.A[h])));
      }
    }
    if (worst > kMaxLogDecay) {
      // Rounded toward zero in fp32, then shrunk by 2^-20 to absorb the double sums' rounding.
      const double scaled = double(p.A[h]) * (kMaxLogDecay / worst) * (1 - 0x1p-20);
      p.A[h] = std::nextafter(float(scaled), 0.0f);
    }
  }
}

// The production contract rounds the dt-scaled B (≤ |B|·δ), the decayed, dt-scaled C·Bᵀ
// (≤ N·max|C|·max|B|·δ) and the incoming chunk state (≤ |h0| + Σ_t δ·|B|·|x|, decays ≤ 1) to
// the input format; with fp16 inputs a value above 65504 overflows, which docs/bounds.md §4
// places outside the contract ("the contract cannot represent that input"). Scales B and the
// initial state by a power of two (re-rounded to their formats) until these upper bounds stay
// below 2^14, a factor 4 inside the range.
void fit_fp16_production_range(Problem& p) {
  if (p.formats.input != Format::fp16) return;
  const Shape& s = p.shape;
  double max_b = 0, max_c = 0, max_h0 = 0, worst = 0;
  for (float v : p.B) max_b = std::max(max_b, std::fabs(double(v)));
  for (float v : p.C) max_c = std::max(max_c, std::fabs(double(v)));
  for (float v : p.initial_state) max_h0 = std::max(max_h0, std::fabs(double(v)));
  for (int64_t h = 0; h < s.H; ++h) {
    double max_x = 0;
    for (int64_t t = 0; t < s.num_tokens(); ++t) {
      for (int64_t q = 0; q < s.P; ++q) max_x = std::max(max_x, std::fabs(double(p.x[p.x_index(t, h, q)])));
    }
    for (int64_t q = 0; q < s.num_sequences(); ++q) {
      double state = max_h0;
      for (int64_t t = s.cu_seqlens[q]; t < s.cu_seqlens[q + 1]; ++t) {
        const double d = delta_of(p, t, h);
        state += d * max_b * max_x;
        worst = std::max({worst, max_b * d, double(s.N) * max_c * max_b * d, state});
      }
    }
  }
  int shift = 0;
  while (std::ldexp(worst, -shift) > 0x1p14) ++shift;
  if (shift == 0) return;
  for (float& v : p.B.writable()) v = to_format(p.formats.input, std::ldexp(double(v), -shift));
  for (float& v : p.initial_state) v = to_format(p.formats.state, std::ldexp(double(v), -shift));
}

// Sequence lengths: small, 1, or at a chunk boundary ± 1 (k·L − 1, k·L, k·L + 1), within
// `max_tokens` in all (a chunk-edge length that does not fit becomes a small one).
std::vector<int64_t> draw_lengths(const PrefillOptions& o, bool adversarial, int64_t max_tokens, bool& chunk_edge) {
  const int64_t S = *inRange<int64_t>(1, o.max_sequences + 1);
  std::vector<int64_t> len(S);
  chunk_edge = false;
  int64_t used = 0;
  for (int64_t s = 0; s < S; ++s) {
    const int kind = adversarial ? *choice(0, 1, 2) : *choice(0, 1);
    const int64_t small = *inRange<int64_t>(1, 9);
    const int64_t k = *choice<int64_t>(1, 2);
    const int64_t edge = std::max<int64_t>(1, k * o.chunk_size + *choice<int64_t>(0, -1, 1));
    int64_t n = kind == 2 ? 1 : small;
    if (kind == 1 && used + std::max(edge, o.min_len) + (S - s - 1) * o.min_len <= max_tokens) {
      n = edge;
      chunk_edge = true;
    }
    // Within the budget (binds only for production-shaped cases: small shapes leave room for
    // 3 sequences of 8 tokens).
    len[s] = std::max(std::min(n, max_tokens - used - (S - s - 1) * o.min_len), o.min_len);
    used += len[s];
  }
  return len;
}

// Every tensor of `p` (shape, formats and options set) in the family.
void draw_tensors(Problem& p, bool adversarial, const Features& ft, Target target, bool want_initial) {
  const Shape& s = p.shape;
  const int64_t T = s.num_tokens(), H = s.H, P = s.P, N = s.N, G = s.G, S = s.num_sequences();
  const Format in = p.formats.input;
  ShrinkLimits negative;
  negative.keep_sign = true;
  ShrinkLimits positive_nonzero;
  positive_nonzero.keep_sign = true;
  positive_nonzero.nonzero = true;

  if (!adversarial) {
    p.dt_softplus = true;
    p.A = draw_vector(H, log_uniform_value(Format::fp32, 1.0, 16.0, true, negative));
    const std::vector<float> dt0 = draw_vector(H, log_uniform_value(Format::fp32, 1e-3, 0.1, false, positive_nonzero));
    for (float d : dt0) p.dt_bias.push_back(to_format(Format::fp32, double(d) + std::log(-std::expm1(-double(d)))));
    p.dt = draw_vector(T * H, normal_value(in, 0, 0.5));
    p.x = draw_vector(T * H * P, normal_value(in, 0, 1));
    p.B = draw_vector(T * G * N, normal_value(in, 0, 1));
    p.C = draw_vector(T * G * N, normal_value(in, 0, 1));
    if (*rc::gen::arbitrary<bool>()) p.z = draw_vector(T * H * P, normal_value(in, 0, 1));
    const bool per_dim = *rc::gen::arbitrary<bool>();
    p.D = draw_vector(per_dim ? H * P : H, normal_value(Format::fp32, 1, 0.1));
    if (want_initial && *rc::gen::arbitrary<bool>()) {
      p.initial_state = draw_vector(S * H * P * N, normal_value(p.formats.state, 0, 0.1));
    }
    if (target == Target::chunk_scan) {
      fit_chunk_decay(p);
      fit_fp16_production_range(p);
    }
    return;
  }

  // A ≤ 0: the chunked bound refuses A > 0 (docs/bounds.md); decay → 1 draws A in [−2^-10, 0].
  EdgeRange ar;
  ar.keep_sign = true;
  ar.negative = true;
  ar.emin_exp = ft.decay_to_one ? -30 : -4;
  ar.emax_exp = ft.decay_to_one ? -11 : 3;
  p.A = draw_vector(H, edge_value(Format::fp32, ar));

  // δ ≥ 0 everywhere (a negative δ with A < 0 is a growth the chunked exp(min(·, 0)) guard
  // does not compute). With softplus any dt works; without it dt ≥ 0 and no bias.
  if (ft.no_softplus) {
    p.dt_softplus = false;
    EdgeRange dr;
    dr.keep_sign = true;
    dr.emin_exp = ft.decay_to_one ? -12 : -10;
    dr.emax_exp = 1;
    p.dt = draw_vector(T * H, edge_value(in, dr));
  } else if (ft.near_shortcut) {
    p.dt_softplus = true;
    // δ's softplus argument just below 20 (and, for SSU, just above): 20 is exact in every
    // input format (1.25·2^4); its neighbours are next_down / next_up in the format.
    const Bits twenty = round_nearest_even(in, 20.0);
    std::vector<float> around{20.0f, float(decode(in, next_down(in, twenty))), 19.5f};
    if (target == Target::ssu) {
      around.push_back(float(decode(in, next_up(in, twenty))));
      around.push_back(21.0f);
    }
    p.dt = draw_vector(T * H, choice_of(around));
  } else {
    p.dt_softplus = true;
    EdgeRange dr;
    dr.emin_exp = -12;
    dr.emax_exp = 4;  // |dt| < 32: softplus arguments inside [−104, 20] together with the bias
    p.dt = draw_vector(T * H, edge_value(in, dr));
    if (*rc::gen::arbitrary<bool>()) p.dt_bias = draw_vector(H, edge_value(Format::fp32, EdgeRange{-6, 1}));
    if (target == Target::chunk_scan) {
      // Keep softplus arguments ≤ 20 when dt and bias are both large.
      for (int64_t i = 0; i < T * H; ++i) {
        const double bias = p.has_dt_bias() ? double(p.dt_bias[i % H]) : 0.0;
        if (double(p.dt[i]) + bias > 20) p.dt.set(i, 16.0f);
      }
    }
  }
  if (ft.clamp) {
    p.dt_limit_lo = 0.0f;
    p.dt_limit_hi = *choice(0.0625f, 0.5f, 1.0f);
  }

  const rc::Gen<float> value = adversarial_input(in, ft);
  p.x = draw_vector(T * H * P, value);
  p.B = draw_vector(T * G * N, value);
  p.C = draw_vector(T * G * N, value);
  if (ft.cancellation && N >= 2) {
    // Columns n and n+1 (n even) receive the same δ·B·x, so their states are equal; opposite C
    // makes their contributions to y cancel exactly in real arithmetic.
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t g = 0; g < G; ++g) {
        for (int64_t n = 0; n + 1 < N; n += 2) {
          p.B.set(p.bc_index(t, g, n + 1), p.B[p.bc_index(t, g, n)]);
          p.C.set(p.bc_index(t, g, n + 1), -p.C[p.bc_index(t, g, n)]);
        }
      }
    }
  }
  if (*rc::gen::arbitrary<bool>()) {
    EdgeRange zr;
    zr.emin_exp = -8;
    zr.emax_exp = 5;  // |z| < 64: sigmoid's budget covers [−87.3, 104] in the chunked contract
    p.z = draw_vector(T * H * P, edge_value(in, zr));
  }
  const int d_mode = *choice(1, 0, 2);  // per head, none, per head dim
  EdgeRange dr;
  dr.emin_exp = -4;
  dr.emax_exp = 2;
  if (d_mode == 1) p.D = draw_vector(H, edge_value(Format::fp32, dr));
  if (d_mode == 2) p.D = draw_vector(H * P, edge_value(Format::fp32, dr));
  if (want_initial && *rc::gen::arbitrary<bool>()) {
    EdgeRange sr;
    sr.emin_exp = ft.tiny ? -30 : -6;
    sr.emax_exp = ft.huge ? 10 : 2;
    p.initial_state = draw_vector(S * H * P * N, edge_value(p.formats.state, sr));
  }
  if (target == Target::chunk_scan) {
    fit_chunk_decay(p);
    fit_fp16_production_range(p);
  }
}

// H = G·(heads per group), N and P with H·P·N ≤ max_hpn. Drawn before the lengths and
// independent of them, so shrinking the sequences keeps the dimensions (rapidcheck redraws
// every pick after a shrunk one).
void draw_dims(Shape& s, int64_t max_hpn) {
  s.G = *inRange<int64_t>(1, 3);
  s.H = s.G * *inRange<int64_t>(1, 3);
  std::vector<int64_t> ns;
  for (int64_t n : {1, 2, 3, 4, 8, 16, 32, 64}) {
    if (s.H * n <= max_hpn) ns.push_back(n);
  }
  s.N = *choice_of(ns);
  s.P = *inRange<int64_t>(1, std::clamp<int64_t>(max_hpn / (s.H * s.N), 1, 8) + 1);
}

// Production-shaped cases (problem_gen.h).
enum class Profile : uint8_t { wide, heads, long_sequences };
const char* profile_name(Profile p) {
  return p == Profile::wide ? "wide" : p == Profile::heads ? "heads" : "long";
}

// Uniform among `values` at any rapidcheck size, never shrinking (the pick after it shrinks).
rc::Gen<int64_t> drawn_among(std::vector<int64_t> values) {
  return rc::gen::noShrink(rc::gen::resize(kMaxSize, choice_of(std::move(values))));
}

// `value`, shrinking toward `toward` (rapidcheck's integral shrink: the target first, then
// halfway, ...).
rc::Gen<int64_t> shrinking_from(int64_t value, int64_t toward) {
  return rc::Gen<int64_t>([value, toward](const rc::Random&, int) {
    return rc::shrinkable::shrinkRecur(value, [toward](int64_t v) { return rc::shrink::towards<int64_t>(v, toward); });
  });
}

// A production dimension: drawn among `values`, shrinking toward 1.
int64_t production_dim(std::vector<int64_t> values) { return *shrinking_from(*drawn_among(std::move(values)), 1); }

// Whether this case is production-shaped: one in `share`, shrinking to no.
bool draw_production(int64_t share) {
  if (share <= 0) return false;
  return *rc::gen::resize(kMaxSize, inRange<int64_t>(0, share)) == share - 1;
}

// The production dimensions of `profile` (problem_gen.h): wide: N ∈ {128, 192, 256}, P ∈ {64, 128},
// H = G = 1; heads: N ∈ {128, 192, 256}, H = 8 in G ∈ {2, 4} groups, P ∈ {1, 2, 4}; long:
// N ∈ {16, 64, 128}, H, P ∈ {1, 2}.
void draw_production_dims(Shape& s, Profile profile) {
  s.N = production_dim(profile == Profile::long_sequences ? std::vector<int64_t>{16, 64, 128}
                                                          : std::vector<int64_t>{128, 192, 256});
  if (profile == Profile::heads) {
    const int64_t groups = *drawn_among({2, 4});
    s.G = *shrinking_from(groups, 1);
    s.H = s.G * *shrinking_from(8 / groups, 1);
    s.P = production_dim({1, 2, 4});
  } else {
    s.G = production_dim(profile == Profile::wide ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 2});
    s.H = s.G;
    s.P = production_dim(profile == Profile::wide ? std::vector<int64_t>{64, 128} : std::vector<int64_t>{1, 2});
  }
}

// Tokens that fit in `cap` work units with dimensions `s` and chunk L (production_work per
// token at full chunks), at least `least`.
int64_t tokens_within(const Shape& s, int64_t L, int64_t cap, int64_t least) {
  Shape one = s;
  one.cu_seqlens = {0, L};
  return std::max(least, cap * L / std::max<int64_t>(production_work(one, L), 1));
}

// Long sequences: 1 or 2, together about `max_tokens` (drawn in [max/2, max]), each shrinking
// toward 1 token; half the time a length sits at a chunk boundary (k·L − 1, k·L, k·L + 1).
std::vector<int64_t> draw_long_lengths(const PrefillOptions& o, int64_t max_tokens, bool& chunk_edge) {
  const int64_t S = *inRange<int64_t>(1, 3);
  std::vector<int64_t> len(S);
  chunk_edge = false;
  for (int64_t q = 0; q < S; ++q) {
    const int64_t each = std::max<int64_t>(max_tokens / S, o.min_len);
    int64_t n = *drawn_among({each / 2 + 1, each});
    if (*rc::gen::noShrink(rc::gen::arbitrary<bool>()) && n > o.chunk_size + 1) {
      n = (n / o.chunk_size) * o.chunk_size + *drawn_among({-1, 0, 1});
      chunk_edge = true;
    }
    len[q] = std::max(*shrinking_from(std::min(n, each), 1), o.min_len);
  }
  return len;
}

Formats draw_formats(const std::optional<Format>& state, const Features& ft) {
  Formats f;
  f.input = *choice(Format::bf16, Format::fp16, Format::fp32);
  f.state = state ? *state : *choice(Format::fp32, Format::bf16, Format::fp16);
  f.output = *choice(f.input, Format::fp32);
  if (ft.huge) f.output = Format::fp32;  // huge inputs: y beyond fp16/bf16 would be Inf
  if (ft.huge && !state) f.state = Format::fp32;
  return f;
}

}  // namespace

rc::Gen<GeneratedProblem> prefill_problem(const PrefillOptions& o) {
  return rc::gen::exec([o] {
    GeneratedProblem g;
    const bool adversarial = *choice(false, true);
    g.family = adversarial ? "adversarial" : "realistic";
    Features ft;
    if (adversarial) ft = draw_features();
    g.features = ft.names();
    Problem& p = g.problem;
    g.chunk_size = o.chunk_size;
    std::vector<int64_t> len;
    if (draw_production(o.production_share)) {
      const auto profile = Profile(*drawn_among({0, 1, 2}));
      g.profile = profile_name(profile);
      draw_production_dims(p.shape, profile);
      const int64_t max_tokens = tokens_within(p.shape, o.chunk_size, kPrefillProductionWork * o.max_updates,
                                               o.min_len * o.max_sequences);
      len = profile == Profile::long_sequences ? draw_long_lengths(o, max_tokens, g.chunk_edge_length)
                                               : draw_lengths(o, adversarial, max_tokens, g.chunk_edge_length);
    } else {
      draw_dims(p.shape, kMaxPrefillHPN);
      const int64_t hpn = p.shape.H * p.shape.P * p.shape.N;
      len = draw_lengths(o, adversarial, std::max<int64_t>(o.max_updates / hpn, o.min_len * o.max_sequences),
                         g.chunk_edge_length);
    }
    p.shape.cu_seqlens.assign(1, 0);
    for (int64_t n : len) p.shape.cu_seqlens.push_back(p.shape.cu_seqlens.back() + n);
    p.formats = draw_formats(o.state_format, ft);
    draw_tensors(p, adversarial, ft, o.target, o.initial_state);
    return g;
  });
}

rc::Gen<GeneratedDecode> decode_problem(const DecodeOptions& o) {
  return rc::gen::exec([o] {
    GeneratedDecode g;
    const bool adversarial = *choice(false, true);
    g.family = adversarial ? "adversarial" : "realistic";
    Features ft;
    if (adversarial) ft = draw_features();
    g.features = ft.names();
    DecodeProblem& d = g.decode;
    Problem& p = d.problem;
    int64_t max_updates = o.max_updates, max_per_request = o.max_tokens_per_request;
    bool long_requests = false;
    if (draw_production(o.production_share)) {
      const auto profile = Profile(*drawn_among({0, 1, 2}));
      g.profile = profile_name(profile);
      draw_production_dims(p.shape, profile);
      max_updates = kDecodeProductionWork * o.max_updates;
      // long: requests of about their whole share of the budget (hundreds of tokens at
      // H·P·N = 128), each shrinking toward 1 token.
      long_requests = profile == Profile::long_sequences;
      if (long_requests) max_per_request = max_updates;
    } else {
      draw_dims(p.shape, kMaxDecodeHPN);
    }
    const int64_t hpn = p.shape.H * p.shape.P * p.shape.N;
    // A production case's requests fit its budget with their tokens and up to two pool slots
    // each (the pool is drawn and judged too).
    const int64_t max_requests =
        g.profile.empty() ? o.max_requests : std::clamp<int64_t>(max_updates / (3 * hpn), 1, o.max_requests);
    const int64_t R = *inRange<int64_t>(1, max_requests + 1);
    const int64_t per_request = std::clamp<int64_t>(max_updates / (hpn * R), 1, max_per_request);
    p.shape.cu_seqlens.assign(1, 0);
    for (int64_t r = 0; r < R; ++r) {
      const int64_t n = long_requests ? *shrinking_from(*drawn_among({per_request / 2 + 1, per_request}), 1)
                                      : *inRange<int64_t>(1, per_request + 1);
      p.shape.cu_seqlens.push_back(p.shape.cu_seqlens.back() + n);
    }
    p.formats = draw_formats(o.state_format, ft);
    draw_tensors(p, adversarial, ft, Target::ssu, false);

    // Slots: request r reads slot r (or, repeated, the slot of an earlier request) and, when
    // reads repeat, writes a slot of its own that nobody reads (R + r); pads read and write
    // nothing. The pool also holds slots nobody touches (their bound is 0: unchanged).
    const bool pads = adversarial && *rc::gen::arbitrary<bool>();
    const bool repeated = adversarial && R > 1 && *rc::gen::arbitrary<bool>();
    if (pads) g.features.push_back("pad");
    if (repeated) g.features.push_back("repeated_read");
    const int64_t spare = *inRange<int64_t>(0, 2);
    d.slots = (repeated ? 2 * R : R) + spare;
    d.pad_slot_id = -1;
    for (int64_t r = 0; r < R; ++r) {
      const bool pad = pads && *rc::gen::arbitrary<bool>();
      int64_t in = r;
      if (repeated && r > 0 && *rc::gen::arbitrary<bool>()) in = *inRange<int64_t>(0, r);
      d.slot_in.push_back(pad ? d.pad_slot_id : in);
    }
    if (repeated) {
      for (int64_t r = 0; r < R; ++r) d.slot_out.push_back(d.is_pad(r) ? d.pad_slot_id : R + r);
    }
    const int64_t per = p.shape.H * p.shape.P * p.shape.N;
    if (adversarial) {
      EdgeRange sr;
      sr.emin_exp = ft.tiny ? -30 : -6;
      sr.emax_exp = ft.huge ? 10 : 2;
      d.state_pool = draw_vector(d.slots * per, edge_value(p.formats.state, sr));
    } else {
      d.state_pool = draw_vector(d.slots * per, normal_value(p.formats.state, 0, 0.5));
    }
    return g;
  });
}

ChunkCase draw_chunk_case(PrefillOptions o, std::optional<chunk_scan::ContractKind> kind) {
  ChunkCase c;
  const bool production = draw_production(o.production_share);
  // Chunk 256 for a production case, shrinking to 128 and 64 (the only supported sizes).
  c.L = production ? *rc::Gen<int64_t>([](const rc::Random&, int) {
          return rc::shrinkable::shrinkRecur(int64_t(256), [](int64_t v) {
            return v == 256 ? rc::seq::just<int64_t>(64, 128) : v == 128 ? rc::seq::just<int64_t>(64) : rc::Seq<int64_t>();
          });
        })
                   : *choice<int64_t>(64, 128, 256);
  c.kind = kind ? *kind : *choice(chunk_scan::ContractKind::production, chunk_scan::ContractKind::fp32);
  o.chunk_size = c.L;
  o.production_share = production ? 1 : 0;
  c.g = *prefill_problem(o);
  label_case(c.g);
  return c;
}

int64_t shortest_sequence(const Shape& s) {
  int64_t shortest = s.seq_len(0);
  for (int64_t q = 1; q < s.num_sequences(); ++q) shortest = std::min(shortest, s.seq_len(q));
  return shortest;
}

namespace {
// The production profile and the shape coverage of one case (feature counts).
void count_shape(const std::string& profile, const Shape& s, int64_t chunk_size) {
  if (!profile.empty()) count_label("production:" + profile);
  if (s.N >= 128) count_label("N>=128");
  if (s.P >= 64) count_label("P>=64");
  if (s.P > 64) count_label("P>64");
  if (s.H >= 8) count_label("H>=8");
  if (s.num_tokens() >= 256) count_label("T>=256");
  if (chunk_size == 256 && !profile.empty()) count_label("production:chunk=256");
}
}  // namespace

void label_case(const GeneratedProblem& g) {
  RC_TAG(g.family, std::string(format_name(g.problem.formats.input)));
  count_features(g.family, g.features, g.chunk_edge_length ? "chunk_edge_length" : "");
  const Shape& s = g.problem.shape;
  count_updates(s.num_tokens() * s.H * s.P * s.N);
  count_shape(g.profile, s, g.chunk_size);
}

void label_case(const GeneratedDecode& g) {
  RC_TAG(g.family, std::string(format_name(g.decode.problem.formats.input)));
  count_features(g.family, g.features, "");
  const Shape& s = g.decode.problem.shape;
  count_updates(s.num_tokens() * s.H * s.P * s.N);
  count_shape(g.profile, s, 0);
}

int64_t production_work(const Shape& s, int64_t chunk_size) {
  int64_t work = 0;
  for (int64_t q = 0; q < s.num_sequences(); ++q) {
    const int64_t len = s.seq_len(q);
    work += len * s.H * (s.P * s.N + std::min(chunk_size, len) * (s.N + s.P + 26) / 9);
  }
  return work;
}

std::string describe(const Problem& p) {
  std::ostringstream os;
  const Shape& s = p.shape;
  os << "S=" << s.num_sequences() << " T=" << s.num_tokens() << " lens=[";
  for (int64_t q = 0; q < s.num_sequences(); ++q) os << (q ? "," : "") << s.seq_len(q);
  os << "] H=" << s.H << " G=" << s.G << " P=" << s.P << " N=" << s.N
     << " input=" << format_name(p.formats.input) << " state=" << format_name(p.formats.state)
     << " output=" << format_name(p.formats.output) << " softplus=" << p.dt_softplus
     << " z=" << p.has_z() << " D=" << (!p.has_D() ? "none" : p.D.size() == size_t(s.H) ? "head" : "head,dim")
     << " bias=" << p.has_dt_bias() << " h0=" << p.has_initial_state();
  return os.str();
}

void showValue(const GeneratedProblem& g, std::ostream& os) {
  os << g.family << (g.profile.empty() ? "" : " production:" + g.profile) << " {" << describe(g.problem) << "}";
}

void showValue(const GeneratedDecode& g, std::ostream& os) {
  os << g.family << (g.profile.empty() ? "" : " production:" + g.profile) << " {" << describe(g.decode.problem)
     << " slots=" << g.decode.slots << " slot_in=[";
  for (size_t r = 0; r < g.decode.slot_in.size(); ++r) os << (r ? "," : "") << g.decode.slot_in[r];
  os << "]}";
}

}  // namespace ssmv::prop

namespace ssmv::chunk_scan {
void showValue(ContractKind kind, std::ostream& os) { os << contract_kind_name(kind); }
}  // namespace ssmv::chunk_scan
