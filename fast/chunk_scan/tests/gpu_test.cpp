// GPU against the host twin (label gpu; skipped without a CUDA device):
//  * the docs/design.md §4 model (mma_model.h) against mma.sync on random tiles, bit for bit;
//  * ≥ 300 random varlen problems of both contracts (SSMV_CS_PROBLEMS overrides the count,
//    e.g. for compute-sanitizer runs): y, final and boundary states, and every stage's
//    intermediates bit for bit;
//  * repeated launches give identical bits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <future>
#include <array>
#include <random>

#include "fast/chunk_scan/device_launch.h"
#include "fast/chunk_scan/gpu.h"
#include "fast/chunk_scan/mma_model.h"
#include "fast/chunk_scan/tests/mma_probe.h"
#include "fast/chunk_scan/tests/problem_gen.h"
#include "fast/chunk_scan/twin.h"
#include "fast/common/cuda_check.h"

namespace ssmv::chunk_scan {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device"

// Random operands of one format: normal samples scaled by 2^e, e uniform in [lo, hi]
// (chosen so that no value overflows the format), a fraction `zeros` exact zeros.
std::vector<float> random_operands(std::mt19937_64& rng, size_t n, Format f, int lo, int hi, double zeros) {
  std::normal_distribution<double> normal(0, 1);
  std::uniform_int_distribution<int> expo(lo, hi);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<float> v(n);
  for (auto& e : v) e = unit(rng) < zeros ? 0.0f : float(round_value(f, std::ldexp(normal(rng), expo(rng))));
  return v;
}

// Counts outputs where mma.sync and mma_step (under `rule`) disagree, for each rule;
// prints the first few mismatches of the default rule.
std::array<int64_t, 3> mma_mismatches(bool bf16, int tiles, int lo, int hi, uint64_t seed) {
  const Format f = bf16 ? Format::bf16 : Format::fp16;
  std::mt19937_64 rng(seed);
  const auto a = random_operands(rng, size_t(tiles) * 256, f, lo, hi, 0.05);
  const auto b = random_operands(rng, size_t(tiles) * 128, f, lo, hi, 0.05);
  const auto c = random_operands(rng, size_t(tiles) * 128, Format::fp32, 2 * lo, 2 * hi, 0.05);
  const auto d = testing::run_mma_tiles(bf16, a, b, c, tiles);
  std::array<int64_t, 3> bad{};
  const SubnormalRule rules[3] = {SubnormalRule::exponent_field, SubnormalRule::true_exponent,
                                  SubnormalRule::flush};
  for (int t = 0; t < tiles; ++t) {
    for (int m = 0; m < 16; ++m) {
      for (int n = 0; n < 8; ++n) {
        const float got = d[t * 128 + m * 8 + n];
        for (int r = 0; r < 3; ++r) {
          const float want = mma_step(&a[t * 256 + m * 16], &b[t * 128 + n * 16], 16,
                                      c[t * 128 + m * 8 + n], MmaOperands{f, rules[r]});
          if (std::memcmp(&want, &got, 4) == 0) continue;
          if (r == 0 && bad[0] < 5) {
            ADD_FAILURE() << (bf16 ? "bf16" : "fp16") << " tile " << t << " (" << m << "," << n
                          << "): mma.sync " << std::hexfloat << got << " model " << want;
          }
          ++bad[r];
        }
      }
    }
  }
  std::printf("  mma.sync %s, operand exponents [%d, %d]: %d outputs; differing from the model "
              "with subnormal rule exponent_field %lld, true_exponent %lld, flush %lld\n",
              bf16 ? "bf16" : "fp16", lo, hi, tiles * 128, (long long)bad[0], (long long)bad[1],
              (long long)bad[2]);
  return bad;
}

TEST(ChunkScanGpu, MmaModelMatchesTensorCores) {
  SKIP_WITHOUT_GPU();
  // 40000 tiles × 128 outputs = 5.1 million per format; exponents over ±16 binades (bf16)
  // and ±6 (fp16: products and operands stay normal).
  EXPECT_EQ(mma_mismatches(true, 40000, -16, 16, 1)[0], 0);
  EXPECT_EQ(mma_mismatches(false, 40000, -6, 6, 2)[0], 0);
}

TEST(ChunkScanGpu, MmaModelWithSubnormalOperands) {
  SKIP_WITHOUT_GPU();
  // Beyond docs/design.md §4's measurement: fp16 operands down to 2^-24 (subnormal below
  // 2^-14; the production contract rounds decayed weights and scaled B to fp16, which can
  // be subnormal). bf16 subnormals (below 2^-126) are left out: their products lie far
  // below any fp32 accumulator this kernel sees.
  EXPECT_EQ(mma_mismatches(false, 20000, -22, 12, 3)[0], 0);
}

// Signed zeros and results below the subnormal range, which docs/design.md §4's measurement did
// not cover (a GPU-vs-twin sign-of-zero difference was found by the property suite on an
// adversarial chunk_scan case, 2026-11-30). One tile per case; output (0, 0) is compared.
TEST(ChunkScanGpu, MmaModelSignedZerosAndUnderflow) {
  SKIP_WITHOUT_GPU();
  struct Case {
    const char* what;
    std::vector<std::pair<float, float>> products;  // (a[0][k], b[0][k]) for k = 0, 1, ...
    float c;
  };
  const float tiny = 0x1p-100f;
  const std::vector<Case> cases = {
      {"c=-0, no products", {}, -0.0f},
      {"c=-0, products +0 (a=+0)", {{0.0f, 1.0f}}, -0.0f},
      {"c=-0, products -0 (a=-0)", {{-0.0f, 1.0f}}, -0.0f},
      {"c=+0, products -0 (a=-0)", {{-0.0f, 1.0f}}, 0.0f},
      {"c=-0, 1*1 + (-1)*1 = 0", {{1.0f, 1.0f}, {-1.0f, 1.0f}}, -0.0f},
      {"c=+0, 1*1 + (-1)*1 = 0", {{1.0f, 1.0f}, {-1.0f, 1.0f}}, 0.0f},
      {"c=+1, (-1)*1 = 0 exactly", {{-1.0f, 1.0f}}, 1.0f},
      {"c=-1, 1*1 = 0 exactly", {{1.0f, 1.0f}}, -1.0f},
      {"c=+0, -2^-200 (below subnormals)", {{-tiny, tiny}}, 0.0f},
      {"c=-0, -2^-200 (below subnormals)", {{-tiny, tiny}}, -0.0f},
      {"c=+0, +2^-200 (below subnormals)", {{tiny, tiny}}, 0.0f},
      {"c=-0, +2^-200 (below subnormals)", {{tiny, tiny}}, -0.0f},
      {"c=-2^-140, no products", {}, -0x1p-140f},
      {"c=-2^-140, products +0", {{0.0f, 1.0f}}, -0x1p-140f},
      {"c=+0, -2^-140 as product 2^-70*-2^-70", {{0x1p-70f, -0x1p-70f}}, 0.0f},
  };
  const int tiles = int(cases.size());
  std::vector<float> a(size_t(tiles) * 256, 0.0f), b(size_t(tiles) * 128, 0.0f), c(size_t(tiles) * 128, 0.0f);
  for (int t = 0; t < tiles; ++t) {
    for (size_t k = 0; k < cases[t].products.size(); ++k) {
      a[t * 256 + k] = cases[t].products[k].first;
      b[t * 128 + k] = cases[t].products[k].second;
    }
    c[t * 128] = cases[t].c;
  }
  const auto d = testing::run_mma_tiles(true, a, b, c, tiles);
  for (int t = 0; t < tiles; ++t) {
    const float got = d[t * 128];
    const float want = mma_step(&a[t * 256], &b[t * 128], 16, c[t * 128],
                                MmaOperands{Format::bf16, SubnormalRule::exponent_field});
    uint32_t gb, wb;
    std::memcpy(&gb, &got, 4);
    std::memcpy(&wb, &want, 4);
    std::printf("  mma zero/underflow: %-40s mma.sync 0x%08x model 0x%08x%s\n", cases[t].what, gb, wb,
                gb == wb ? "" : "  DIFFER");
    EXPECT_EQ(gb, wb) << cases[t].what;
  }
}

// Results in fp32's subnormal range (not covered by docs/design.md §4 nor by the model's
// measurement; the GPU = twin property found 0x80008000 on the GPU against 0x80007fff in the
// twin, 2026-11-30). Random bf16 products around 2^-135 with cancellation; counts the
// outputs where mma.sync differs from the model, and from the model with the final
// rounding to nearest-even instead of toward zero when the result is subnormal. Prints
// the first few differences. Measured on the H200 (2026-11-30, seed 7): 2,559,908
// subnormal outputs; the model (toward zero) differs in 313, round-to-nearest in 1,260,894.
// So toward zero is the rule, and the 313 are an open gap of the model: each exact
// truncated sum lies just below a multiple of 2^-149 (within ~2^-157) and the tensor core
// returns that multiple (bench/NOTES.md). The assertions pin what is established; the
// open gap is the GPU = twin finding in properties/findings/README.md §3.
// Tiny sums: products around 2^-135 (results mostly in fp32's subnormal range), products
// below 2^-140 (the −132 clamp of the alignment exponent decides), and subnormal
// accumulators c (their exponent field decides). Before those two rules of mma_model.h,
// 1–13 in 10^4 of the first two and one in eight of the third differed (bench/NOTES.md).
int64_t tiny_sum_mismatches(uint64_t seed, int alo, int ahi, int blo, int bhi, bool subnormal_c,
                            int64_t& subnormal_results) {
  std::mt19937_64 rng(seed);
  const int tiles = 8000;
  const auto a = random_operands(rng, size_t(tiles) * 256, Format::bf16, alo, ahi, 0.3);
  const auto b = random_operands(rng, size_t(tiles) * 128, Format::bf16, blo, bhi, 0.3);
  const auto c = subnormal_c ? random_operands(rng, size_t(tiles) * 128, Format::fp32, -149, -120, 0.05)
                             : std::vector<float>(size_t(tiles) * 128, 0.0f);
  const auto d = testing::run_mma_tiles(true, a, b, c, tiles);
  int64_t differ = 0;
  for (int t = 0; t < tiles; ++t) {
    for (int m = 0; m < 16; ++m) {
      for (int n = 0; n < 8; ++n) {
        const float got = d[t * 128 + m * 8 + n];
        const float want = mma_step(&a[t * 256 + m * 16], &b[t * 128 + n * 16], 16, c[t * 128 + m * 8 + n],
                                    MmaOperands{Format::bf16, SubnormalRule::exponent_field});
        if (std::fabs(got) < 0x1p-126f) ++subnormal_results;
        if (std::memcmp(&got, &want, 4) == 0) continue;
        if (differ++ < 5) {
          ADD_FAILURE() << "tile " << t << " (" << m << "," << n << "): mma.sync " << std::hexfloat << got
                        << " model " << want << " c " << c[t * 128 + m * 8 + n];
        }
      }
    }
  }
  return differ;
}

TEST(ChunkScanGpu, MmaModelTinySums) {
  SKIP_WITHOUT_GPU();
  int64_t subnormal = 0;
  EXPECT_EQ(tiny_sum_mismatches(7, -70, -64, -72, -66, false, subnormal), 0);
  EXPECT_EQ(tiny_sum_mismatches(10, -76, -72, -76, -72, false, subnormal), 0);
  EXPECT_EQ(tiny_sum_mismatches(11, -70, -64, -72, -66, true, subnormal), 0);
  std::printf("  mma.sync bf16 tiny sums: 3 x 1024000 outputs, %lld in the subnormal range\n",
              (long long)subnormal);
  EXPECT_GT(subnormal, 2000000) << "not vacuous: most outputs must land in the subnormal range";
}

struct Diff {
  int64_t compared = 0, differing = 0, max_ulps = 0;
  std::string first;
};

void compare(const char* what, Format f, const std::vector<float>& gpu, const std::vector<float>& twin,
             Diff& diff, const std::vector<char>* mask = nullptr) {
  if (gpu.size() != twin.size()) {
    diff.differing += 1;
    diff.first = std::string(what) + ": sizes differ";
    return;
  }
  for (size_t i = 0; i < gpu.size(); ++i) {
    if (mask && !(*mask)[i]) continue;
    ++diff.compared;
    if (std::memcmp(&gpu[i], &twin[i], 4) == 0) continue;
    ++diff.differing;
    const int64_t u = ulp_distance(f, round_nearest_even(f, gpu[i]), round_nearest_even(f, twin[i]));
    diff.max_ulps = std::max(diff.max_ulps, u);
    if (diff.first.empty()) {
      char buf[256];
      std::snprintf(buf, sizeof buf, "%s[%zu]: gpu %a twin %a (%lld ulp)", what, i, gpu[i], twin[i],
                    (long long)u);
      diff.first = buf;
    }
  }
}

struct Outcome {
  Diff outputs, stages;
  std::string config;
};

Outcome check_problem(uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int64_t L = std::array<int64_t, 3>{64, 128, 256}[rng() % 3];
  const auto opts = testing::random_options(rng, L, 600);
  const Problem p = testing::make_problem(opts, seed * 7 + 1);
  Config cfg;
  cfg.contract = rng() % 2 ? ContractKind::production : ContractKind::fp32;
  cfg.chunk_size = L;
  cfg.boundary_states = rng() % 2;
  cfg.keep_intermediates = true;
  Outcome o;
  o.config = "seed " + std::to_string(seed) + " contract " +
             std::string(contract_kind_name(cfg.contract)) + " L=" + std::to_string(L) + " " +
             testing::describe(p);
  const Result gpu = run_gpu(p, cfg);
  const Result twin = run_twin(p, cfg);
  compare("y", p.formats.output, gpu.y, twin.y, o.outputs);
  compare("final_state", p.formats.state, gpu.final_state, twin.final_state, o.outputs);
  compare("boundary_states", p.formats.state, gpu.boundary_states, twin.boundary_states, o.outputs);
  const Format op = uses_mma(cfg.contract, p.formats.input) ? p.formats.input : Format::fp32;
  compare("delta", Format::fp32, gpu.stages.delta, twin.stages.delta, o.stages);
  compare("cumsum", Format::fp32, gpu.stages.cumsum, twin.stages.cumsum, o.stages);
  compare("chunk_state", Format::fp32, gpu.stages.chunk_state, twin.stages.chunk_state, o.stages);
  compare("state_in", op, gpu.stages.state_in, twin.stages.state_in, o.stages);
  // C·Bᵀ entries k ≤ m < len only.
  const ChunkPlan plan = plan_chunks(p.shape.cu_seqlens, L);
  std::vector<char> mask(twin.stages.cb.size(), 0);
  for (int64_t c = 0; c < plan.num_chunks(); ++c) {
    for (int64_t g = 0; g < p.shape.G; ++g) {
      for (int64_t m = 0; m < plan.len[c]; ++m) {
        for (int64_t k = 0; k <= m; ++k) mask[((c * p.shape.G + g) * L + m) * L + k] = 1;
      }
    }
  }
  compare("cb", Format::fp32, gpu.stages.cb, twin.stages.cb, o.stages, &mask);
  return o;
}

TEST(ChunkScanGpu, MatchesTwinBitForBitOnRandomProblems) {
  SKIP_WITHOUT_GPU();
  int problems = 320;
  if (const char* env = std::getenv("SSMV_CS_PROBLEMS")) problems = std::atoi(env);
  Diff outputs, stages;
  int failing = 0;
  // Twins run on host threads, GPU launches serialised by the runtime.
  const int batch = 16;
  for (int first = 0; first < problems; first += batch) {
    std::vector<std::future<Outcome>> jobs;
    for (int i = first; i < std::min(problems, first + batch); ++i) {
      jobs.push_back(std::async(std::launch::async, check_problem, uint64_t(1000 + i)));
    }
    for (auto& j : jobs) {
      const Outcome o = j.get();
      outputs.compared += o.outputs.compared;
      outputs.differing += o.outputs.differing;
      outputs.max_ulps = std::max(outputs.max_ulps, o.outputs.max_ulps);
      stages.compared += o.stages.compared;
      stages.differing += o.stages.differing;
      stages.max_ulps = std::max(stages.max_ulps, o.stages.max_ulps);
      if (o.outputs.differing || o.stages.differing) {
        if (++failing <= 10) {
          ADD_FAILURE() << o.config << "\n  outputs: " << o.outputs.differing << " differ, first "
                        << o.outputs.first << "\n  stages: " << o.stages.differing << " differ, first "
                        << o.stages.first;
        }
      }
    }
  }
  std::printf("  %d problems: outputs %lld compared, %lld differ (max %lld ulp); intermediates %lld "
              "compared, %lld differ (max %lld ulp); %d problems with a difference\n",
              problems, (long long)outputs.compared, (long long)outputs.differing,
              (long long)outputs.max_ulps, (long long)stages.compared, (long long)stages.differing,
              (long long)stages.max_ulps, failing);
  EXPECT_GT(outputs.compared, 0);
  EXPECT_EQ(failing, 0);
}

TEST(ChunkScanGpu, RepeatedRunsAreIdentical) {
  SKIP_WITHOUT_GPU();
  testing::GenOptions o;
  o.H = 8, o.P = 64, o.N = 128, o.G = 2;
  o.seq_lens = {1000, 257, 3000};
  o.z = true;
  o.initial_state = true;
  const Problem p = testing::make_problem(o, 99);
  for (ContractKind kind : {ContractKind::production, ContractKind::fp32}) {
    DeviceLaunch gpu(p, Config{kind, 256, true, false});
    gpu.launch();
    const Result first = gpu.download();
    for (int rep = 0; rep < 5; ++rep) {
      gpu.launch();
      const Result again = gpu.download();
      ASSERT_EQ(std::memcmp(first.y.data(), again.y.data(), 4 * first.y.size()), 0) << rep;
      ASSERT_EQ(std::memcmp(first.final_state.data(), again.final_state.data(), 4 * first.final_state.size()), 0);
      ASSERT_EQ(std::memcmp(first.boundary_states.data(), again.boundary_states.data(),
                            4 * first.boundary_states.size()), 0);
    }
    // Non-vacuous: the outputs are finite and not all zero.
    bool nonzero = false;
    for (float v : first.y) {
      ASSERT_TRUE(std::isfinite(v));
      nonzero = nonzero || v != 0.0f;
    }
    EXPECT_TRUE(nonzero);
  }
}

TEST(ChunkScanGpu, BadInputRejectedBeforeLaunch) {
  SKIP_WITHOUT_GPU();
  testing::GenOptions o;
  o.seq_lens = {5};
  const Problem p = testing::make_problem(o, 1);
  EXPECT_THROW(DeviceLaunch(p, Config{ContractKind::production, 96, false, false}), ProblemError);
}

}  // namespace
}  // namespace ssmv::chunk_scan
