// Soundness of the bounds against the bundled kernels: on random realistic problems no
// element of y or of a returned state may exceed its bound (a VIOLATION here is a finding
// about the bound, the contract or the kernel — never a tolerance to widen). Also prints how
// close the kernels come (bound usage) on fp32 outputs, where the final rounding does not
// dominate. CI runs the default counts on the host twins (soundness_test.cpp); the GPU runs
// the same cases (soundness_gpu_test.cpp). SSMV_SOUNDNESS_CASES sets the count of every
// family for a campaign.
#include "verify/tests/soundness_cases.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "spec/realistic_problem.h"

namespace ssmv::verify::soundness {
namespace {

int cases(int ci_default) {
  const char* env = std::getenv("SSMV_SOUNDNESS_CASES");
  return env ? std::max(1, std::atoi(env)) : ci_default;
}

struct Rng {  // splitmix64, for choosing configurations
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  int64_t pick(int64_t lo, int64_t hi) { return lo + int64_t(next() % uint64_t(hi - lo + 1)); }
  template <class T, size_t K>
  T one_of(const T (&v)[K]) { return v[next() % K]; }
};

// Bound usage per tensor name, and on fp32 outputs separately.
// Bound usage (max error ÷ bound of a tensor) per problem, kept per kind of tensor so the
// campaign can report its distribution: y with fp32 outputs (where the bound is not
// dominated by the final rounding, see docs/bounds.md), y with 16-bit outputs, and states.
struct Usage {
  std::vector<double> y_fp32, y_16bit, state;
  void add(const KernelCheck& kc, Format output) {
    for (const TensorReport& r : kc.tensors) {
      if (r.name == "y") (output == Format::fp32 ? y_fp32 : y_16bit).push_back(r.max_bound_usage);
      else state.push_back(r.max_bound_usage);
    }
  }
  static std::string distribution(std::vector<double> v) {
    if (v.empty()) return "none";
    std::sort(v.begin(), v.end());
    const auto q = [&](double f) { return v[size_t(f * double(v.size() - 1))]; };
    char buf[128];
    std::snprintf(buf, sizeof buf, "p10 %.3f p50 %.3f p90 %.3f max %.3f (%zu tensors)", q(0.1), q(0.5), q(0.9),
                  v.back(), v.size());
    return buf;
  }
  void print(const std::string& what, int n) const {
    std::printf("[soundness] %s: %d problems; bound usage per tensor:\n"
                "[soundness]   y, fp32 output:   %s\n"
                "[soundness]   y, 16-bit output: %s\n"
                "[soundness]   states:           %s\n",
                what.c_str(), n, distribution(y_fp32).c_str(), distribution(y_16bit).c_str(),
                distribution(state).c_str());
  }
};

std::string describe(const KernelCheck& kc) {
  std::string out;
  for (const TensorReport& r : kc.tensors) {
    if (r.ok()) continue;
    const WorstElement& w = r.worst;
    char buf[512];
    std::string coords;
    for (size_t i = 0; i < w.coords.size(); ++i) {
      if (i > 0) coords += ", ";
      coords += r.coord_names[i] + " " + std::to_string(w.coords[i]);
    }
    std::snprintf(buf, sizeof buf,
                  "\n  %s: %lld VIOLATION, %lld INVALID of %lld; worst at (%s): computed %s (%a), "
                  "exact %s, bound %a, usage %.3g",
                  r.name.c_str(), (long long)r.count(Verdict::violation),
                  (long long)r.count(Verdict::invalid), (long long)r.elements, coords.c_str(),
                  hex_bits(r.format, w.computed).c_str(), decode(r.format, w.computed),
                  w.exact_decimal.c_str(), w.bound, w.judgement.bound_usage);
    out += buf;
  }
  return kc.kernel + " / " + kc.contract + out;
}

Shape random_shape(Rng& rng, const std::vector<int64_t>& lengths, int64_t max_heads,
                   std::initializer_list<int64_t> Ps, std::initializer_list<int64_t> Ns) {
  Shape shape;
  shape.cu_seqlens = {0};
  for (int64_t len : lengths) shape.cu_seqlens.push_back(shape.cu_seqlens.back() + len);
  shape.G = rng.pick(1, 2);
  shape.H = shape.G * rng.pick(1, max_heads);
  shape.P = *(Ps.begin() + rng.pick(0, int64_t(Ps.size()) - 1));
  shape.N = *(Ns.begin() + rng.pick(0, int64_t(Ns.size()) - 1));
  return shape;
}

}  // namespace

void ssu(Device device) {
  Usage usage;
  const int n = cases(60);
  for (int c = 0; c < n; ++c) {
    Rng rng{0x5eed0000u + uint64_t(c)};
    const int64_t R = rng.pick(1, 3), tokens = rng.pick(1, 4);
    const Shape shape = random_shape(rng, std::vector<int64_t>(R, tokens), 2, {1, 3, 8}, {1, 5, 16, 33, 64});
    const Formats f{rng.one_of({Format::bf16, Format::fp16, Format::fp32}),
                    rng.one_of({Format::fp32, Format::bf16, Format::fp16}),
                    rng.one_of({Format::fp32, Format::bf16})};
    RealisticOptions o;
    o.z = rng.pick(0, 1) == 1;
    o.d_mode = rng.pick(0, 1) ? DMode::per_head : DMode::per_head_dim;
    const Problem drawn = realistic_problem(shape, f, 1000 + uint64_t(c), o);

    // Decode form: a pool of R+1 slots; request r reads slot R−r, which holds the initial
    // state drawn for it; one request in four is a pad request.
    DecodeProblem d;
    d.problem = drawn;
    d.problem.initial_state.clear();
    d.slots = R + 1;
    const int64_t per = shape.H * shape.P * shape.N;
    d.state_pool.assign(d.slots * per, 0.0f);
    for (int64_t r = 0; r < R; ++r) {
      d.slot_in.push_back(rng.pick(0, 3) == 0 ? d.pad_slot_id : R - r);
      std::copy(drawn.initial_state.begin() + r * per, drawn.initial_state.begin() + (r + 1) * per,
                d.state_pool.begin() + (R - r) * per);
    }
    const KernelCheck kc = check_ssu(d, device);
    EXPECT_TRUE(kc.ok()) << "case " << c << ": " << describe(kc);
    usage.add(kc, f.output);
  }
  usage.print("ssu (" + std::string(device_name(device)) + ")", n);
}

void chunk_scan(chunk_scan::ContractKind kind, Device device) {
  const uint64_t salt = kind == chunk_scan::ContractKind::production ? 0xc4a00000u : 0xc4b00000u;
  Usage usage;
  const int n = cases(12);
  for (int c = 0; c < n; ++c) {
    Rng rng{salt + uint64_t(c)};
    std::vector<int64_t> lengths;
    for (int64_t s = rng.pick(1, 2); s > 0; --s) lengths.push_back(rng.one_of({1, 17, 63, 64, 65, 130}));
    const Shape shape = random_shape(rng, lengths, 1, {1, 5, 16}, {8, 16, 32});
    const Formats f{rng.one_of({Format::bf16, Format::fp16}), Format::fp32,
                    rng.one_of({Format::fp32, Format::bf16})};
    RealisticOptions o;
    o.z = rng.pick(0, 1) == 1;
    const Problem p = realistic_problem(shape, f, salt + 5000 + uint64_t(c), o);
    const KernelCheck kc = check_chunk_scan(p, kind, 64, device, /*boundary_states=*/true);
    EXPECT_TRUE(kc.ok()) << "case " << c << ": " << describe(kc);
    usage.add(kc, f.output);
  }
  usage.print("chunk_scan." + std::string(chunk_scan::contract_kind_name(kind)) + " (" +
                  std::string(device_name(device)) + ")", n);
}

void handoff(Device device) {
  Usage usage;
  const int n = cases(12);
  for (int c = 0; c < n; ++c) {
    Rng rng{0x4a4d0000u + uint64_t(c)};
    const int64_t len = rng.one_of({1, 2, 40, 65, 70});
    const Shape shape = random_shape(rng, {len, len + rng.pick(0, 5)}, 1, {1, 4}, {8, 16});
    const Formats f{Format::bf16, rng.one_of({Format::fp32, Format::bf16}),
                    rng.one_of({Format::fp32, Format::bf16})};
    const Problem p = realistic_problem(shape, f, 9000 + uint64_t(c));
    const int64_t split = rng.one_of({int64_t{0}, int64_t{1}, len - 1, len, len / 2});
    const auto kind = rng.pick(0, 1) ? chunk_scan::ContractKind::production : chunk_scan::ContractKind::fp32;
    const KernelCheck kc = check_handoff(p, split, kind, 64, device);
    EXPECT_TRUE(kc.ok()) << "case " << c << " split " << split << ": " << describe(kc);
    usage.add(kc, f.output);
  }
  usage.print("hand-off chunk_scan+ssu (" + std::string(device_name(device)) + ")", n);
}

}  // namespace ssmv::verify::soundness
