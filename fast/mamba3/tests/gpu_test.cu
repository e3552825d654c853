// The bundled Mamba-3 step kernel on the GPU equals its host twin bit for bit: y and the four-part
// state (angle, S, B_prev, x_prev) over >= 1000 random problems (tests/problem_gen.h: P and N not
// multiples of 32, P = 16, R from 1 to N/2, 1 to 4 sequences of 1 to 12 tokens, one launch per
// token; bf16 and fp32 inputs, angles and outputs; D, z, initial states, adt > 0); repeated runs
// identical and the block size (1 to 1024 threads) changing no bit. Skipped without a CUDA device.
// MAMBA3_STEP_GPU_TEST_PROBLEMS overrides the problem count.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fast/common/cuda_check.h"
#include "fast/common/fast_math.h"
#include "fast/mamba3/gpu.h"
#include "fast/mamba3/tests/problem_gen.h"
#include "fast/mamba3/twin.h"
#include "spec/mamba3/random_problem.h"

namespace ssmv::mamba3_step::testing {
namespace {

int problem_count() {
  const char* env = std::getenv("MAMBA3_STEP_GPU_TEST_PROBLEMS");
  return env ? std::atoi(env) : 1200;
}

// First element whose bits differ (NaN payloads included), or -1.
int64_t first_difference(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (fm::bits_of(a[i]) != fm::bits_of(b[i])) return int64_t(i);
  }
  return -1;
}

void expect_equal(const Result& twin, const Result& gpu, const std::string& what) {
  const std::pair<const char*, std::pair<const std::vector<float>*, const std::vector<float>*>> parts[] = {
      {"y", {&twin.y, &gpu.y}},
      {"angle", {&twin.state.angle, &gpu.state.angle}},
      {"S", {&twin.state.S, &gpu.state.S}},
      {"B_prev", {&twin.state.B_prev, &gpu.state.B_prev}},
      {"x_prev", {&twin.state.x_prev, &gpu.state.x_prev}},
  };
  for (const auto& [name, ab] : parts) {
    const int64_t d = first_difference(*ab.first, *ab.second);
    ASSERT_EQ(d, -1) << what << "\n " << name << "[" << d << "] twin " << std::hexfloat << (*ab.first)[size_t(d)]
                     << " gpu " << (*ab.second)[size_t(d)];
  }
}

class Mamba3StepGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_F(Mamba3StepGpu, RandomProblemsEqualTwinBitForBit) {
  const int count = problem_count();
  int64_t tokens = 0, y_elements = 0, nonzero = 0, odd = 0, small_p = 0, fp32_in = 0, with_z = 0, repeated = 0;
  for (int i = 0; i < count; ++i) {
    const GeneratedProblem g = random_step_problem(uint64_t(7000 + i));
    const Result twin = run_twin(g.problem, 1);
    const Result gpu = run_gpu(g.problem);
    expect_equal(twin, gpu, g.description);
    if (HasFatalFailure()) return;
    if (i % 10 == 0) {  // the same problem again, on another block size: the same bits
      const int threads[] = {1, 32, 7, 1024};
      expect_equal(gpu, run_gpu(g.problem, threads[(i / 10) % 4]), g.description + " (again)");
      if (HasFatalFailure()) return;
      ++repeated;
    }
    const auto& sh = g.problem.shape;
    tokens += sh.num_tokens();
    y_elements += int64_t(twin.y.size());
    for (float v : twin.y) nonzero += v != 0.0f;
    odd += sh.P % 32 != 0 && sh.N % 32 != 0;
    small_p += sh.P <= 16;
    fp32_in += g.problem.formats.input == Format::fp32;
    with_z += g.problem.has_z();
  }
  std::printf("[mamba3_step_gpu] %d problems, %lld tokens (one launch each per batch), %lld y elements (%lld "
              "non-zero), %lld with P and N not multiples of 32, %lld with P <= 16, %lld fp32 inputs, %lld with z, "
              "%lld rerun on another block size\n",
              count, (long long)tokens, (long long)y_elements, (long long)nonzero, (long long)odd,
              (long long)small_p, (long long)fp32_in, (long long)with_z, (long long)repeated);
  EXPECT_GT(nonzero, y_elements / 2);
  if (count >= 1000) {
    EXPECT_GT(tokens, 5000);
    EXPECT_GT(odd, 300);
    EXPECT_GT(small_p, 200);
    EXPECT_GT(fp32_in, 300);
    EXPECT_GT(with_z, 300);
  }
}

// A serving-like shape (64 sequences, H = 8, P = 64, N = 128, 16 tokens each): GPU = twin, twice.
TEST_F(Mamba3StepGpu, ServingShapeEqualsTwinAndRepeats) {
  std::vector<int64_t> cu{0};
  for (int s = 0; s < 64; ++s) cu.push_back(cu.back() + 16);
  ssmv::mamba3::Problem pr = ssmv::mamba3::random_problem(cu, 8, 64, 128, 1, 32, 99, true);
  const Result twin = run_twin(pr);
  const Result gpu = run_gpu(pr);
  expect_equal(twin, gpu, "serving shape");
  expect_equal(gpu, run_gpu(pr), "serving shape, again");
  expect_equal(gpu, run_gpu(pr, 256), "serving shape, 256 threads");
}

}  // namespace
}  // namespace ssmv::mamba3_step::testing
