#include "fast/chunk_scan/tests/wgmma_regimes.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "fast/chunk_scan/mma_model.h"

namespace ssmv::chunk_scan::testing {
namespace {

TileShape tile_of(const WgmmaShape& s) { return {64, s.n, s.k}; }

// Small integers: a, b in [−8, 8], c in [−1000, 1000]; every sum is exact in fp32 (below
// 2^24), so the model returns it and any difference is a layout error of the probe.
Operands integer_set(uint64_t seed, TileShape shape, int tiles) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> small(-8, 8), c(-1000, 1000);
  Operands o;
  o.a.resize(size_t(tiles) * shape.m * shape.k);
  o.b.resize(size_t(tiles) * shape.n * shape.k);
  o.c.resize(size_t(tiles) * shape.m * shape.n);
  for (auto& v : o.a) v = float(small(rng));
  for (auto& v : o.b) v = float(small(rng));
  for (auto& v : o.c) v = float(c(rng));
  return o;
}

// Cancellation (k = 16): a[m][k+8] = −a[m][k] and b[n][k+8] = b[n][k]·(1 + u·2^-7),
// u ∈ [−3, 3], so each pair of products cancels to ≤ 3·2^-7 of itself and the sum is
// ~2^-5 of its largest term: the result keeps fewer bits than the truncation grid set
// by the largest term would keep of a full-size result. a, b normal·2^e, e ∈ [−8, 8]; c 0
// for half of the outputs, else normal·2^e, e ∈ [−20, −8].
Operands cancel_set(uint64_t seed, TileShape shape, int tiles, Format f) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0, 1);
  std::uniform_int_distribution<int> e(-8, 8), u(-3, 3), ce(-20, -8);
  std::uniform_real_distribution<double> unit(0, 1);
  auto value = [&] { return float(round_value(f, std::ldexp(normal(rng), e(rng)))); };
  Operands o;
  o.a.resize(size_t(tiles) * shape.m * 16);
  o.b.resize(size_t(tiles) * shape.n * 16);
  o.c.resize(size_t(tiles) * shape.m * shape.n);
  for (size_t r = 0; r < o.a.size(); r += 16) {
    for (int k = 0; k < 8; ++k) {
      o.a[r + k] = value();
      o.a[r + k + 8] = -o.a[r + k];
    }
  }
  for (size_t r = 0; r < o.b.size(); r += 16) {
    for (int k = 0; k < 8; ++k) {
      o.b[r + k] = value();
      o.b[r + k + 8] = float(round_value(f, double(o.b[r + k]) * (1 + u(rng) * 0x1p-7)));
    }
  }
  for (auto& v : o.c) v = unit(rng) < 0.5 ? 0.0f : float(std::ldexp(normal(rng), ce(rng)));
  return o;
}

// Signed zeros: operands ±0 (60 %, either sign), ±1 (32 %), ±2^-100 (4 %: products of two
// are 2^-200, below fp32's subnormals), ±3 (4 %); c one of ±0, ±1, ±2^-140, ±2^-149. Many
// sums are exactly zero, reached with either sign of every term.
Operands zero_set(uint64_t seed, TileShape shape, int tiles) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0, 1);
  std::uniform_int_distribution<int> pick(0, 3);
  auto value = [&] {
    const double x = unit(rng);
    const float sign = unit(rng) < 0.5 ? -1.0f : 1.0f;
    return sign * (x < 0.6 ? 0.0f : x < 0.92 ? 1.0f : x < 0.96 ? 0x1p-100f : 3.0f);
  };
  Operands o;
  o.a.resize(size_t(tiles) * shape.m * shape.k);
  o.b.resize(size_t(tiles) * shape.n * shape.k);
  o.c.resize(size_t(tiles) * shape.m * shape.n);
  for (auto& v : o.a) v = value();
  for (auto& v : o.b) v = value();
  const float cs[4] = {0.0f, 1.0f, 0x1p-140f, 0x1p-149f};
  for (auto& v : o.c) v = (unit(rng) < 0.5 ? -1.0f : 1.0f) * cs[pick(rng)];
  return o;
}

// The hypothesis that a k16 instruction adds its products as two k8 halves, each one
// step of the model (E, truncation and rounding toward zero over 8 products and c).
float k8_chain(const float* a, const float* b, int len, float acc, MmaOperands ops) {
  for (int k0 = 0; k0 < len; k0 += 8) acc = mma_step(a + k0, b + k0, 8, acc, ops);
  return acc;
}

}  // namespace

std::vector<WgmmaRegime> wgmma_regimes() {
  const Format bf16 = Format::bf16, fp16 = Format::fp16;
  // A regime of random_set operands (tensor_core_operands.h).
  auto random = [](std::string name, Format f, WgmmaShape s, uint64_t seed, int alo, int ahi, int blo, int bhi,
                   double zeros, CValue c) {
    const int tiles = s.n == 64 ? 125 : 1000;  // 512,000 outputs
    return WgmmaRegime{name, f, s, tiles, [=](int t) {
                         return random_set(seed, tile_of(s), t, f, alo, ahi, blo, bhi, zeros, c);
                       }};
  };
  auto integers = [](std::string name, Format f, WgmmaShape s, uint64_t seed) {
    return WgmmaRegime{name, f, s, 64, [=](int t) { return integer_set(seed, tile_of(s), t); }};
  };
  const WgmmaShape ss{8, 16, false, true};        // m64n8k16, A from shared memory
  const WgmmaShape chain{8, 64, false, true};     // four k16 steps
  const WgmmaShape zero_d{8, 32, false, false};   // two k16 steps, the first with scale-d = 0
  const WgmmaShape regs{8, 16, true, true};       // A from registers
  const WgmmaShape regs_chain{8, 64, true, true};
  const WgmmaShape wide_n{64, 16, false, true};   // m64n64k16
  const WgmmaShape wide_n_regs{64, 32, true, true};
  // B MN-major (n contiguous, imm-trans-b = 1): x's form in the (removed) wgmma stage (e).
  const WgmmaShape mn_b_regs{64, 32, true, true, true};
  const WgmmaShape mn_b_regs_chain{64, 64, true, true, true};
  const WgmmaShape mn_b_ss{64, 32, false, true, true};
  return {
      integers("integers", bf16, ss, 101),
      integers("integers_chain", fp16, chain, 102),
      integers("integers_regs", bf16, regs_chain, 103),
      integers("integers_n64", fp16, wide_n, 104),
      random("normal", bf16, ss, 13, -16, 16, -16, 16, 0.05, normal_c(-32, 32)),
      random("probe", bf16, ss, 7, -70, -64, -72, -66, 0.3, zero_c),
      random("sparse", bf16, ss, 8, -70, -64, -72, -66, 0.8, zero_c),
      random("boundary", bf16, ss, 9, -64, -60, -66, -62, 0.5, zero_c),
      random("deep", bf16, ss, 10, -76, -72, -76, -72, 0.5, zero_c),
      random("c_sub", bf16, ss, 11, -70, -64, -72, -66, 0.5, subnormal_c),
      {"targeted", bf16, ss, 1000, [=](int t) { return targeted_set(12, tile_of(ss), t); }},
      random("fp16_normal", fp16, ss, 21, -6, 6, -6, 6, 0.05, normal_c(-12, 12)),
      random("fp16_subnormal", fp16, ss, 22, -22, 12, -22, 12, 0.05, normal_c(-44, 24)),
      // a down to bf16's subnormals (below 2^-126), b large: products 2^-38 .. 2^-6.
      random("bf16_subnormal", bf16, ss, 23, -134, -118, 96, 112, 0.1, normal_c(-40, -8)),
      random("wide", bf16, ss, 24, -56, 56, -56, 56, 0.05, normal_c(-112, 112)),
      {"cancel", bf16, ss, 1000, [=](int t) { return cancel_set(25, tile_of(ss), t, bf16); }},
      {"signed_zeros", bf16, ss, 1000, [=](int t) { return zero_set(26, tile_of(ss), t); }},
      random("chain_normal", bf16, chain, 27, -16, 16, -16, 16, 0.05, normal_c(-32, 32)),
      random("chain_tiny", bf16, chain, 28, -70, -64, -72, -66, 0.3, subnormal_c),
      random("chain_fp16_subnormal", fp16, chain, 29, -22, 12, -22, 12, 0.05, normal_c(-44, 24)),
      random("scale_d0", bf16, zero_d, 30, -16, 16, -16, 16, 0.05, normal_c(-32, 32)),
      {"scale_d0_zeros", bf16, WgmmaShape{8, 16, false, false}, 1000,
       [](int t) { return zero_set(31, TileShape{64, 8, 16}, t); }},
      random("regs_normal", bf16, regs, 32, -16, 16, -16, 16, 0.05, normal_c(-32, 32)),
      random("regs_tiny", bf16, regs_chain, 33, -70, -64, -72, -66, 0.3, subnormal_c),
      random("n64_normal", bf16, wide_n, 34, -16, 16, -16, 16, 0.05, normal_c(-32, 32)),
      random("n64_fp16_subnormal", fp16, wide_n_regs, 35, -22, 12, -22, 12, 0.05, normal_c(-44, 24)),
      integers("integers_mn_b", bf16, mn_b_regs, 105),
      random("mn_b_normal", bf16, mn_b_regs, 36, -16, 16, -16, 16, 0.05, normal_c(-32, 32)),
      random("mn_b_tiny", bf16, mn_b_regs_chain, 37, -70, -64, -72, -66, 0.3, subnormal_c),
      random("mn_b_fp16_subnormal", fp16, mn_b_ss, 38, -22, 12, -22, 12, 0.05, normal_c(-44, 24)),
  };
}

RegimeCount compare_with_model(const WgmmaRegime& r, const Operands& o, const std::vector<float>& d, int tiles) {
  const int N = r.shape.n, K = r.shape.k;
  const MmaOperands ops{r.format};
  RegimeCount count;
  for (int t = 0; t < tiles; ++t) {
    for (int m = 0; m < 64; ++m) {
      for (int n = 0; n < N; ++n) {
        const size_t i = (size_t(t) * 64 + m) * N + n;
        const float* a = &o.a[(size_t(t) * 64 + m) * K];
        const float* b = &o.b[(size_t(t) * N + n) * K];
        const float c = r.shape.scale_d ? o.c[i] : 0.0f;
        const float want = mma_chain(a, 1, b, 1, K, c, ops);
        const float k8 = k8_chain(a, b, K, c, ops);
        ++count.outputs;
        if (d[i] == 0.0f) ++count.zeros;
        if (d[i] != 0.0f && std::fabs(d[i]) < 0x1p-126f) ++count.subnormal;
        if (std::memcmp(&k8, &d[i], 4) != 0) ++count.differ_k8;
        if (std::memcmp(&want, &d[i], 4) == 0) continue;
        if (++count.differ <= 5) {
          char text[160];
          std::snprintf(text, sizeof text, "tile %d (%d, %d): wgmma %a model %a c %a", t, m, n, double(d[i]),
                        double(want), double(c));
          count.first.push_back(text);
        }
      }
    }
  }
  return count;
}

}  // namespace ssmv::chunk_scan::testing
