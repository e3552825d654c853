// Soundness of the bounds against the bundled kernels' host twins: on random realistic
// problems no element of y or of a returned state may exceed its bound (a VIOLATION here
// is a finding about the bound, the contract or the kernel — never a tolerance to widen).
// Also reports how close the kernels come (bound usage), on fp32 outputs where the final
// rounding does not dominate. CI runs kCases problems per family; the campaign count is
// set by SSMV_SOUNDNESS_CASES.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fast/chunk_scan/contract.h"
#include "fast/chunk_scan/twin.h"
#include "fast/ssu/contract.h"
#include "fast/ssu/ssu.h"
#include "reference/reference.h"
#include "verify/bound/chunked_bound.h"
#include "verify/bound/sequential_bound.h"
#include "verify/realistic_problem.h"
#include "verify/tensor_report.h"

namespace ssmv::verify {
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

std::vector<Bits> to_bits(Format f, const std::vector<float>& v) {
  std::vector<Bits> b(v.size());
  for (size_t i = 0; i < v.size(); ++i) b[i] = round_nearest_even(f, v[i]);
  return b;
}

// Bound usage on realistic data, kept per (kernel, output format) for the summary line.
struct Usage {
  double max = 0;
  int64_t elements = 0, exact = 0;
  void add(const TensorReport& r) {
    max = std::max(max, r.max_bound_usage);
    elements += r.elements;
    exact += r.count(Verdict::exact);
  }
};

std::string describe(const TensorReport& r) {
  char buf[512];
  const WorstElement& w = r.worst;
  std::string coords;
  for (size_t i = 0; i < w.coords.size(); ++i) {
    coords += (i ? ", " : "") + r.coord_names[i] + " " + std::to_string(w.coords[i]);
  }
  std::snprintf(buf, sizeof buf,
                "%s: %lld VIOLATION, %lld INVALID of %lld; worst at (%s): computed %s (%a), "
                "exact %s, bound %a, usage %.3g",
                r.name.c_str(), (long long)r.count(Verdict::violation),
                (long long)r.count(Verdict::invalid), (long long)r.elements, coords.c_str(),
                hex_bits(r.format, w.computed).c_str(), decode(r.format, w.computed),
                w.exact_decimal.c_str(), w.bound, w.judgement.bound_usage);
  return buf;
}

TEST(Soundness, SsuTwinWithinSequentialBound) {
  const Contract contract = ssu::contract();
  Usage usage_fp32_out, usage_all;
  const int n = cases(60);
  for (int c = 0; c < n; ++c) {
    Rng rng{0x5eed0000u + uint64_t(c)};
    const int64_t R = rng.pick(1, 3), tokens = rng.pick(1, 4);
    Shape shape;
    shape.cu_seqlens = {0};
    for (int64_t r = 0; r < R; ++r) shape.cu_seqlens.push_back(shape.cu_seqlens.back() + tokens);
    shape.G = rng.pick(1, 2);
    shape.H = shape.G * rng.pick(1, 2);
    shape.P = rng.one_of({1, 3, 8});
    shape.N = rng.one_of({1, 5, 16, 33, 64});
    Formats f{rng.one_of({Format::bf16, Format::fp16, Format::fp32}),
              rng.one_of({Format::fp32, Format::bf16, Format::fp16}),
              rng.one_of({Format::fp32, Format::bf16})};
    RealisticOptions o;
    o.z = rng.pick(0, 1) == 1;
    o.d_mode = rng.pick(0, 1) ? DMode::per_head : DMode::per_head_dim;
    const Problem drawn = realistic_problem(shape, f, 1000 + uint64_t(c), o);

    // Decode form: pool of R+1 slots, request r reads slot R−r (the initial state drawn
    // for it), one request in four is a pad request.
    DecodeProblem d;
    d.problem = drawn;
    d.problem.initial_state.clear();
    d.slots = R + 1;
    const int64_t per = shape.H * shape.P * shape.N;
    d.state_pool.assign(d.slots * per, 0.0f);
    for (int64_t r = 0; r < R; ++r) {
      const bool pad = rng.pick(0, 3) == 0;
      d.slot_in.push_back(pad ? d.pad_slot_id : R - r);
      std::copy(drawn.initial_state.begin() + r * per, drawn.initial_state.begin() + (r + 1) * per,
                d.state_pool.begin() + (R - r) * per);
    }
    const ref::ExactDecodeResult exact = ref::compute_decode(d);
    const ssu::Result twin = ssu::run_twin(d);

    // The bound's view: the state each request starts from (zero for pads), stored once
    // at the end of the request (one launch holds all of a request's tokens).
    Problem view = d.problem;
    view.initial_state.assign(R * per, 0.0f);
    for (int64_t r = 0; r < R; ++r) {
      if (d.is_pad(r)) continue;
      std::copy(d.state_pool.begin() + d.slot_in[r] * per, d.state_pool.begin() + (d.slot_in[r] + 1) * per,
                view.initial_state.begin() + r * per);
    }
    bound::SequentialInput in;
    in.problem = &view;
    in.contract = &contract;
    in.delta = &exact.result.delta;
    in.decay = &exact.result.decay;
    const bound::SequentialBounds b = bound::sequential_bounds(in);

    // Pool bounds: written slots get the stored-state bound, the others must be untouched.
    std::vector<double> pool_bound(d.slots * per, 0.0);
    for (int64_t r = 0; r < R; ++r) {
      if (d.is_pad(r)) continue;
      std::copy(b.stored_state.begin() + r * per, b.stored_state.begin() + (r + 1) * per,
                pool_bound.begin() + d.out_slot(r) * per);
    }
    const TensorReport ry = judge_tensor("y", f.output, twin.y, exact.result.y, b.y, d.problem,
                                         y_coords, {"sequence", "token", "head", "dim"});
    DecodeProblem pool_view = d;  // state_coords over [slots, H, P, N]
    pool_view.problem.shape.cu_seqlens.assign(size_t(d.slots) + 1, 0);
    const TensorReport rs = judge_tensor("state_pool", f.state, twin.state_pool, exact.state_pool,
                                         pool_bound, pool_view.problem, state_coords,
                                         {"slot", "head", "dim", "state"});
    EXPECT_TRUE(ry.ok()) << "case " << c << ": " << describe(ry);
    EXPECT_TRUE(rs.ok()) << "case " << c << ": " << describe(rs);
    usage_all.add(ry);
    if (f.output == Format::fp32) usage_fp32_out.add(ry);
  }
  std::printf("[soundness] ssu: %d problems; max bound usage %.3f (fp32 outputs %.3f over %lld "
              "elements, %.1f%% exact)\n",
              n, usage_all.max, usage_fp32_out.max, (long long)usage_fp32_out.elements,
              100.0 * double(usage_fp32_out.exact) / double(std::max<int64_t>(1, usage_fp32_out.elements)));
}

void chunk_scan_soundness(chunk_scan::ContractKind kind) {
  Usage usage_fp32_out, usage_all, usage_state;
  const int n = cases(12);
  for (int c = 0; c < n; ++c) {
    Rng rng{0xc4a0000u + uint64_t(c) * 2 + (kind == chunk_scan::ContractKind::production)};
    const int64_t L = 64;
    Shape shape;
    shape.cu_seqlens = {0};
    const int64_t S = rng.pick(1, 2);
    for (int64_t s = 0; s < S; ++s) {
      const int64_t len = rng.one_of({1, 17, 63, 64, 65, 130});
      shape.cu_seqlens.push_back(shape.cu_seqlens.back() + len);
    }
    shape.G = 1;
    shape.H = rng.pick(1, 2);
    shape.P = rng.one_of({1, 5, 16});
    shape.N = rng.one_of({8, 16, 32});
    Formats f{rng.one_of({Format::bf16, Format::fp16}), Format::fp32,
              rng.one_of({Format::fp32, Format::bf16})};
    RealisticOptions o;
    o.z = rng.pick(0, 1) == 1;
    const Problem p = realistic_problem(shape, f, 5000 + uint64_t(c), o);
    const Contract contract = chunk_scan::contract(kind, L);

    ref::Options ro;
    const ref::ExactResult exact = ref::compute(p, ro);
    chunk_scan::Config cfg;
    cfg.contract = kind;
    cfg.chunk_size = L;
    const chunk_scan::Result twin = chunk_scan::run_twin(p, cfg);

    bound::ChunkedInput in;
    in.problem = &p;
    in.contract = &contract;
    in.delta = &exact.delta;
    in.y_exact = &exact.y.nearest;
    in.y_ungated = &exact.y_ungated;
    const bound::ChunkedBounds b = bound::chunked_bounds(in);
    const TensorReport ry = judge_tensor("y", f.output, to_bits(f.output, twin.y), exact.y, b.y, p,
                                         y_coords, {"sequence", "token", "head", "dim"});
    const TensorReport rs =
        judge_tensor("final_state", f.state, to_bits(f.state, twin.final_state), exact.final_state,
                     b.final_state, p, state_coords, {"sequence", "head", "dim", "state"});
    EXPECT_TRUE(ry.ok()) << "case " << c << " (" << contract.name << "): " << describe(ry);
    EXPECT_TRUE(rs.ok()) << "case " << c << " (" << contract.name << "): " << describe(rs);
    usage_all.add(ry);
    usage_state.add(rs);
    if (f.output == Format::fp32) usage_fp32_out.add(ry);
  }
  std::printf("[soundness] chunk_scan.%s: %d problems; max bound usage y %.3f (fp32 outputs %.3f), "
              "final state %.3f\n",
              std::string(chunk_scan::contract_kind_name(kind)).c_str(), n, usage_all.max,
              usage_fp32_out.max, usage_state.max);
}

TEST(Soundness, ChunkScanProductionTwinWithinChunkedBound) {
  chunk_scan_soundness(chunk_scan::ContractKind::production);
}

TEST(Soundness, ChunkScanFp32TwinWithinChunkedBound) {
  chunk_scan_soundness(chunk_scan::ContractKind::fp32);
}

}  // namespace
}  // namespace ssmv::verify
