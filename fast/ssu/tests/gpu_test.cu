// The SSU kernels on the GPU equal their host twin bit for bit: y and the whole pool, over
// >= 1000 random problems (odd and edge P and N, every format, pads, repeated read slots
// with distinct destinations, per-token states) on the automatic choice, the tokens kernel
// and, where they apply, the octet, streamed and per-item kernels; windows of the tokens and
// octet kernels over requests of up to 21 tokens, the octet kernel's row splits and padded
// pool rows; repeated runs identical, the scalar
// (unaligned) state path equal to the vector path, and the hardware conversions equal
// spec/format.h. Skipped without a CUDA device. SSU_GPU_TEST_PROBLEMS overrides the
// problem count (compute-sanitizer runs use fewer).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "fast/common/cuda_check.h"
#include "fast/common/storage_bytes.h"
#include "fast/ssu/ssu.h"
#include "fast/ssu/device_launch.h"
#include "fast/ssu/gpu.h"
#include "fast/ssu/launch.h"
#include "fast/ssu/pack.h"
#include "fast/ssu/twin.h"
#include "fast/ssu/tests/problem_gen.h"
#include "spec/format.h"

namespace ssmv::ssu::testing {
namespace {

int problem_count() {
  const char* env = std::getenv("SSU_GPU_TEST_PROBLEMS");
  return env ? std::atoi(env) : 1200;
}

// First differing element, or -1.
int64_t first_difference(const std::vector<Bits>& a, const std::vector<Bits>& b) {
  if (a.size() != b.size()) return 0;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return int64_t(i);
  return -1;
}

void expect_equal(const Result& twin, const Result& gpu, const GeneratedProblem& g, const Formats& f) {
  const int64_t dy = first_difference(twin.y, gpu.y);
  ASSERT_EQ(dy, -1) << g.description << "\n y[" << dy << "] twin " << hex_bits(f.output, twin.y[dy]) << " gpu "
                    << hex_bits(f.output, gpu.y[dy]);
  const int64_t ds = first_difference(twin.state_pool, gpu.state_pool);
  ASSERT_EQ(ds, -1) << g.description << "\n pool[" << ds << "] twin " << hex_bits(f.state, twin.state_pool[ds])
                    << " gpu " << hex_bits(f.state, gpu.state_pool[ds]);
}

class SsuGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_F(SsuGpu, RandomProblemsEqualTwinBitForBit) {
  const int count = problem_count();
  int64_t y_elements = 0, nonzero = 0, pads = 0, repeated = 0, token_states = 0, odd = 0, streamed = 0, octet = 0;
  for (int i = 0; i < count; ++i) {
    const uint64_t seed = 1000 + i;
    const GeneratedProblem g = make_problem(random_config(seed), seed);
    const Formats& f = g.decode.problem.formats;
    const Result twin = run_twin(g.decode, g.config);
    HostLaunch host(g.decode, g.config);
    DeviceLaunch dev(host);
    dev.launch();
    const Result gpu = dev.download();
    expect_equal(twin, gpu, g, f);
    if (HasFatalFailure()) return;
    if (i % 8 == 0) {  // the same launch again, from the same pool: the same bits
      dev.reset_state(host);
      dev.launch();
      expect_equal(gpu, dev.download(), g, f);
      if (HasFatalFailure()) return;
    }
    dev.reset_state(host);  // the tokens kernel takes every launch
    launch(dev.params(), nullptr, {Variant::tokens, 0});
    expect_equal(twin, dev.download(), g, f);
    if (HasFatalFailure()) return;
    if (why_not_octet(dev.params()) == nullptr) {
      ++octet;
      dev.reset_state(host);
      launch(dev.params(), nullptr, {Variant::octet, 0});
      expect_equal(twin, dev.download(), g, f);
      if (HasFatalFailure()) return;
    }
    if (why_not_streamed(dev.params()) == nullptr) {
      ++streamed;  // both kernels, whichever automatic took; the streamed one on one block
      for (const LaunchOptions& o : {LaunchOptions{Variant::streamed, 1}, LaunchOptions{Variant::per_item, 0}}) {
        dev.reset_state(host);
        launch(dev.params(), nullptr, o);
        expect_equal(twin, dev.download(), g, f);
        if (HasFatalFailure()) return;
      }
    }
    y_elements += int64_t(twin.y.size());
    for (Bits b : twin.y) nonzero += !is_zero(f.output, b);
    const Shape& s = g.decode.problem.shape;
    for (int64_t r = 0; r < s.num_sequences(); ++r) pads += g.decode.is_pad(r);
    for (size_t a = 0; a < g.decode.slot_in.size(); ++a)
      for (size_t b = a + 1; b < g.decode.slot_in.size(); ++b)
        repeated += g.decode.slot_in[a] == g.decode.slot_in[b] && !g.decode.is_pad(a);
    token_states += !g.config.token_state_slots.empty();
    odd += (s.P % 2) && (s.N % 2);
  }
  // What the generator produced (not vacuous).
  std::printf("[ssu_gpu] %d problems, %lld y elements (%lld non-zero), %lld pad requests, %lld repeated reads, "
              "%lld with token states, %lld with odd P and N, %lld streamable (run on both kernels), %lld on the "
              "octet kernel\n",
              count, (long long)y_elements, (long long)nonzero, (long long)pads, (long long)repeated,
              (long long)token_states, (long long)odd, (long long)streamed, (long long)octet);
  EXPECT_GT(nonzero, y_elements / 2);
  if (count >= 1000) {
    EXPECT_GT(streamed, 50);
    // 35 of seeds 1000–2199 have N a whole number of the layout's chunks and aligned inputs
    // (counted on the host with why_not_octet); the octet tests below cover its paths.
    EXPECT_GE(octet, 30);
    EXPECT_GT(pads, 50);
    EXPECT_GT(repeated, 50);
    EXPECT_GT(token_states, 50);
    EXPECT_GT(odd, 50);
  }
}

TEST_F(SsuGpu, BenchmarkShapesEqualTwin) {
  for (Format state : {Format::fp32, Format::bf16, Format::fp16}) {
    ProblemConfig c;
    c.requests = 16;
    c.max_tokens = 2;
    c.H = 8;
    c.P = 64;
    c.N = 128;
    c.G = 2;
    c.formats = {Format::bf16, state, Format::bf16};
    c.pad_fraction = 0.1;
    c.separate_out = true;
    const GeneratedProblem g = make_problem(c, 4242);
    expect_equal(run_twin(g.decode, g.config), run_gpu(g.decode, g.config), g, c.formats);
  }
}

// The streamed kernel's test problems: `requests` requests of 1 or 2 tokens (about half
// single-token, streamed), a fifth of them pads, H = 4 heads in G = 2 groups, P = 64; 16-bit
// inputs and state of the same format.
ProblemConfig streamed_config(Format state, int64_t N, int64_t requests) {
  ProblemConfig c;
  c.requests = requests;
  c.max_tokens = 2;
  c.H = 4;
  c.P = 64;
  c.N = N;
  c.G = 2;
  c.formats = {state == Format::bf16 ? Format::bf16 : Format::fp16, state, Format::bf16};
  c.pad_fraction = 0.2;
  return c;
}

// The streamed kernel's loops (Variant::streamed): persistent grids of 1, 2 and 5 blocks (4 warps each) over
// 640 items, so each warp takes 32 to 160 items in 1 to 5 batches of 32, with single-token
// items streamed and the others (2 tokens, pads: about half and a fifth of the requests)
// on the general path in their turn; every lane layout of the streamed kernel (N = 128 and
// 64: half-warp rows of 8 and 4 elements; 256: whole-warp rows; 96: two chunks per lane,
// the second absent on some lanes). GPU = twin bit for bit.
TEST_F(SsuGpu, StreamedKernelLoopsEqualTwin) {
  int runs = 0;
  for (Format state : {Format::bf16, Format::fp16}) {
    for (int64_t N : {128, 64, 256, 96}) {
      ProblemConfig c = streamed_config(state, N, 40);
      c.separate_out = N != 64;
      const GeneratedProblem g = make_problem(c, 77 + N);
      const Result twin = run_twin(g.decode, g.config);
      HostLaunch host(g.decode, g.config);
      DeviceLaunch dev(host);
      ASSERT_EQ(why_not_streamed(dev.params()), nullptr) << g.description;
      for (int blocks : {1, 2, 5}) {
        dev.reset_state(host);
        launch(dev.params(), nullptr, {Variant::streamed, blocks});
        expect_equal(twin, dev.download(), g, c.formats);
        if (HasFatalFailure()) return;
        ++runs;
      }
    }
  }
  EXPECT_EQ(runs, 24);
}

// The tokens kernel (Variant::tokens) over requests of 1 to 21 tokens: one to three windows
// of kWindowTokens, pads, per-token states,
// a z gate; chunked staging (N = 128, 256 and P = 64 with aligned inputs: 16-byte
// cp.async) and element staging (N = 96 with fp32 inputs: chunks of 4 fit, but P = 33 does
// not; N = 33), every state format. GPU = twin bit for bit.
TEST_F(SsuGpu, TokensKernelWindowsEqualTwin) {
  int octet_runs = 0;
  struct Shape {
    int64_t P, N;
    Format input;
  };
  const Shape shapes[] = {{64, 128, Format::bf16}, {64, 256, Format::fp16}, {64, 128, Format::fp32},
                          {33, 96, Format::fp32}, {17, 33, Format::bf16}};
  int runs = 0;
  for (Format state : {Format::fp32, Format::bf16, Format::fp16}) {
    for (const Shape& sh : shapes) {
      ProblemConfig c;
      c.requests = 6;
      c.max_tokens = 21;
      c.H = 4;
      c.P = sh.P;
      c.N = sh.N;
      c.G = 2;
      c.formats = {sh.input, state, Format::bf16};
      c.z = true;
      c.d_mode = DMode::per_head_dim;
      c.dt_softplus = true;
      c.dt_bias = true;
      c.pad_fraction = 0.2;
      c.separate_out = true;
      c.token_states = state != Format::fp16;
      const GeneratedProblem g = make_problem(c, 500 + sh.N + int(state));
      const Result twin = run_twin(g.decode, g.config);
      HostLaunch host(g.decode, g.config);
      DeviceLaunch dev(host);
      launch(dev.params(), nullptr, {Variant::tokens, 0});
      expect_equal(twin, dev.download(), g, c.formats);
      if (HasFatalFailure()) return;
      ++runs;
      if (why_not_octet(dev.params()) == nullptr) {
        dev.reset_state(host);
        launch(dev.params(), nullptr, {Variant::octet, 0});
        expect_equal(twin, dev.download(), g, c.formats);
        if (HasFatalFailure()) return;
        ++octet_runs;
      }
    }
  }
  EXPECT_EQ(runs, 15);
  EXPECT_EQ(octet_runs, 9);  // N = 128 and 256 with P = 64 and aligned inputs, every state format
}

// `options` on the problem of config c (seed 5): ProblemError containing `why`, before any
// launch (the parameters point to host memory and are never dereferenced).
void expect_refused(const ProblemConfig& c, const LaunchOptions& options, const std::string& why) {
  const GeneratedProblem g = make_problem(c, 5);
  HostLaunch host(g.decode, g.config);
  try {
    launch(host.params(), nullptr, options);
    ADD_FAILURE() << "no error; expected: " << why;
  } catch (const ProblemError& e) {
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
  }
}

// Variant::streamed for an fp32 state, Variant::octet where N is not a whole number of the
// layout's chunks (N = 96, bf16 state: 32 lanes of 2 elements, two chunks each = 128).
TEST_F(SsuGpu, KernelsRefusedWhereTheyDoNotApply) {
  ProblemConfig c;
  c.formats = {Format::bf16, Format::fp32, Format::bf16};
  expect_refused(c, {Variant::streamed, 0}, "streamed kernel: the state format");
  c.N = 96;
  c.formats = {Format::bf16, Format::bf16, Format::bf16};
  expect_refused(c, {Variant::octet, 0}, "octet kernel: N is not a whole number");
}

// Runs g with its pool re-laid with a row stride of stride_p >= N elements (the pad
// elements 0) on the GPU with `options` and on the twin: the whole pools (pads included)
// and y equal bit for bit.
void expect_padded_rows_equal(const GeneratedProblem& g, const ProblemConfig& c, int64_t stride_p,
                              const LaunchOptions& options) {
  const Format state = c.formats.state;
  HostLaunch host(g.decode, g.config);
  const int64_t N = c.N, rows = g.decode.slots * c.H * c.P;
  const int bytes = storage_bytes(state);
  std::vector<uint8_t> padded(size_t(rows * stride_p * bytes), 0);
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(padded.data() + r * stride_p * bytes, host.state.data() + r * N * bytes, N * bytes);
  Params hp = host.params();
  hp.state = padded.data();
  hp.state_stride_p = stride_p;
  hp.state_stride_head = c.P * stride_p;
  hp.state_stride_slot = c.H * c.P * stride_p;
  DeviceLaunch dev(host);
  Params dp = dev.params();
  void* d_state = nullptr;
  SSMV_CUDA_CHECK(cudaMalloc(&d_state, padded.size()));
  SSMV_CUDA_CHECK(cudaMemcpy(d_state, padded.data(), padded.size(), cudaMemcpyHostToDevice));
  dp.state = d_state;
  dp.state_stride_p = hp.state_stride_p;
  dp.state_stride_head = hp.state_stride_head;
  dp.state_stride_slot = hp.state_stride_slot;
  launch(dp, nullptr, options);
  std::vector<uint8_t> gpu_state(padded.size());
  SSMV_CUDA_CHECK(cudaMemcpy(gpu_state.data(), d_state, padded.size(), cudaMemcpyDeviceToHost));
  SSMV_CUDA_CHECK(cudaFree(d_state));
  const Result gpu = dev.download();
  run_twin(hp);  // writes host.y and padded
  EXPECT_EQ(gpu_state, padded) << format_name(state) << ", row stride " << stride_p;
  EXPECT_EQ(gpu.y, host.result().y) << format_name(state) << ", row stride " << stride_p;
}

// The pool with a row stride of N + 1 elements: no vector access is aligned, so the
// kernel takes its element-by-element path; the arithmetic (and the bits) are the same.
TEST_F(SsuGpu, UnalignedStatePathEqualsTwin) {
  for (Format state : {Format::fp32, Format::bf16}) {
    ProblemConfig c;
    c.requests = 3;
    c.H = 2;
    c.P = 7;
    c.N = 128;
    c.formats = {Format::fp16, state, Format::fp32};
    expect_padded_rows_equal(make_problem(c, 31), c, c.N + 1, {});
  }
}

// Rows of N + 8 elements (16 bytes more: every chunk still aligned, the rows no longer one
// block): the streamed kernel on a persistent grid of 1 block (loops) and on the full one;
// the pads between the rows must stay as they were.
TEST_F(SsuGpu, StreamedKernelPaddedRowsEqualTwin) {
  for (Format state : {Format::bf16, Format::fp16}) {
    for (int64_t N : {128, 64}) {
      const ProblemConfig c = streamed_config(state, N, 24);
      const GeneratedProblem g = make_problem(c, 91 + N);
      for (int blocks : {1, 0}) {
        expect_padded_rows_equal(g, c, N + 8, {Variant::streamed, blocks});
        if (HasFatalFailure()) return;
      }
    }
  }
}

// The octet kernel over P = 16 … 256 with a head's rows in 1 block (up to 16 passes of 16
// rows, each with the next pass's state in flight), 3 blocks and the launcher's own split,
// 1 to 3 requests of 1 to 12 tokens (one and two windows), per-token states, pads, and rows
// of N + 8 elements in the pool (chunks still aligned): GPU = twin.
TEST_F(SsuGpu, OctetKernelSplitsEqualTwin) {
  int runs = 0;
  for (Format state : {Format::fp32, Format::bf16}) {
    for (int64_t P : {16, 24, 64, 200, 256}) {
      for (int64_t N : {64, 128}) {
        ProblemConfig c;
        c.requests = 1 + int(P % 3);
        c.max_tokens = 12;
        c.H = 3;
        c.P = P;
        c.N = N;
        c.formats = {Format::bf16, state, Format::bf16};
        c.z = P != 24;
        c.d_mode = DMode::per_head_dim;
        c.pad_fraction = 0.2;
        c.token_states = true;
        const GeneratedProblem g = make_problem(c, 700 + P + N);
        const Result twin = run_twin(g.decode, g.config);
        HostLaunch host(g.decode, g.config);
        DeviceLaunch dev(host);
        ASSERT_EQ(why_not_octet(dev.params()), nullptr) << g.description;
        for (int splits : {1, 3, 0}) {
          dev.reset_state(host);
          LaunchOptions o{Variant::octet, 0};
          o.octet_splits = splits;
          launch(dev.params(), nullptr, o);
          expect_equal(twin, dev.download(), g, c.formats);
          if (HasFatalFailure()) return;
          ++runs;
        }
        if (P == 64 && N == 128) {  // rows of N + 8 elements: the pads between them untouched
          expect_padded_rows_equal(g, c, N + 8, {Variant::octet, 0});
          if (HasFatalFailure()) return;
        }
      }
    }
  }
  EXPECT_EQ(runs, 60);
}

// fp32 -> bf16 / fp16 with round to nearest even: the hardware (what the kernel uses)
// against spec/format.h (what the twin uses), 2^24 random non-NaN patterns plus the
// neighbourhoods of every rounding boundary class (ties, overflow, subnormals).
__global__ void convert(const float* in, uint16_t* bf, uint16_t* hf, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  bf[i] = __bfloat16_as_ushort(__float2bfloat16_rn(in[i]));
  hf[i] = __half_as_ushort(__float2half_rn(in[i]));
}

TEST_F(SsuGpu, HardwareRoundingEqualsSpecFormat) {
  std::vector<float> v;
  std::mt19937 rng(99);
  while (v.size() < (1u << 24)) {
    const uint32_t b = rng();
    float f;
    std::memcpy(&f, &b, 4);
    if (f == f) v.push_back(f);
  }
  // Ties and their neighbours: values halfway between bf16 / fp16 neighbours, ± 1 fp32 ULP.
  for (uint32_t e = 0; e < 255; ++e)
    for (uint32_t low : {0x8000u, 0x7fffu, 0x8001u, 0x18000u, 0x0u, 0xffffu}) {
      const uint32_t b = (e << 23) | low;
      float f;
      std::memcpy(&f, &b, 4);
      v.push_back(f);
      v.push_back(-f);
    }
  for (float f : {65504.0f, 65519.99f, 65520.0f, 0x1p-25f, 0x1.8p-25f, 0x1p-24f, 3.3895314e38f, 0x1.fffffep127f})
    v.push_back(f);
  const int n = int(v.size());
  float* d_in;
  uint16_t *d_bf, *d_hf;
  SSMV_CUDA_CHECK(cudaMalloc(&d_in, n * 4));
  SSMV_CUDA_CHECK(cudaMalloc(&d_bf, n * 2));
  SSMV_CUDA_CHECK(cudaMalloc(&d_hf, n * 2));
  SSMV_CUDA_CHECK(cudaMemcpy(d_in, v.data(), n * 4, cudaMemcpyHostToDevice));
  convert<<<(n + 255) / 256, 256>>>(d_in, d_bf, d_hf, n);
  SSMV_CUDA_CHECK(cudaGetLastError());
  std::vector<uint16_t> bf(n), hf(n);
  SSMV_CUDA_CHECK(cudaMemcpy(bf.data(), d_bf, n * 2, cudaMemcpyDeviceToHost));
  SSMV_CUDA_CHECK(cudaMemcpy(hf.data(), d_hf, n * 2, cudaMemcpyDeviceToHost));
  SSMV_CUDA_CHECK(cudaFree(d_in));
  SSMV_CUDA_CHECK(cudaFree(d_bf));
  SSMV_CUDA_CHECK(cudaFree(d_hf));
  int64_t bad = 0;
  for (int i = 0; i < n && bad < 10; ++i) {
    const Bits want_bf = round_nearest_even(Format::bf16, v[i]);
    const Bits want_hf = round_nearest_even(Format::fp16, v[i]);
    if (bf[i] != want_bf || hf[i] != want_hf) {
      ++bad;
      ADD_FAILURE() << std::hexfloat << v[i] << ": bf16 gpu " << hex_bits(Format::bf16, bf[i]) << " spec "
                    << hex_bits(Format::bf16, want_bf) << ", fp16 gpu " << hex_bits(Format::fp16, hf[i]) << " spec "
                    << hex_bits(Format::fp16, want_hf);
    }
  }
  EXPECT_EQ(bad, 0);
}

}  // namespace
}  // namespace ssmv::ssu::testing
