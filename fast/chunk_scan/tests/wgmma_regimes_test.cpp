// The wgmma measurement's regimes on the host (label unit): the layout regimes are exact
// under the model (so a device difference there is a probe layout error, not rounding),
// the comparison counts what it should, and every regime's operands are pinned by a hash,
// so that a dump made on the device (bench/NOTES.md) stays checkable: a change of a
// generator or a seed fails here first.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "fast/chunk_scan/tests/wgmma_regimes.h"

namespace ssmv::chunk_scan::testing {
namespace {

uint64_t fnv1a(uint64_t h, const std::vector<float>& v) {
  for (float x : v) {
    uint32_t bits;
    std::memcpy(&bits, &x, 4);
    for (int i = 0; i < 4; ++i) h = (h ^ ((bits >> (8 * i)) & 0xffu)) * 0x100000001b3ull;
  }
  return h;
}

uint64_t hash_of(const Operands& o) {
  return fnv1a(fnv1a(fnv1a(0xcbf29ce484222325ull, o.a), o.b), o.c);
}

// The exact sums c + Σ a·b of every output (doubles hold these small integers exactly).
std::vector<float> exact_sums(const WgmmaRegime& r, const Operands& o, int tiles) {
  const int N = r.shape.n, K = r.shape.k;
  std::vector<float> d(o.c.size());
  for (int t = 0; t < tiles; ++t) {
    for (int m = 0; m < 64; ++m) {
      for (int n = 0; n < N; ++n) {
        double s = r.shape.scale_d ? o.c[(size_t(t) * 64 + m) * N + n] : 0.0;
        for (int k = 0; k < K; ++k) s += double(o.a[(size_t(t) * 64 + m) * K + k]) * o.b[(size_t(t) * N + n) * K + k];
        d[(size_t(t) * 64 + m) * N + n] = float(s);
      }
    }
  }
  return d;
}

TEST(WgmmaRegimes, NamesAreUniqueAndShapesValid) {
  std::set<std::string> names;
  for (const auto& r : wgmma_regimes()) {
    EXPECT_TRUE(names.insert(r.name).second) << r.name;
    EXPECT_TRUE(r.shape.n == 8 || r.shape.n == 64) << r.name;
    EXPECT_TRUE(r.shape.k == 16 || r.shape.k == 32 || r.shape.k == 64) << r.name;
    EXPECT_TRUE(r.format == Format::bf16 || r.format == Format::fp16) << r.name;
  }
  EXPECT_EQ(names.size(), 30u);
}

TEST(WgmmaRegimes, IntegerRegimesAreExactUnderTheModel) {
  for (const auto& r : wgmma_regimes()) {
    if (r.name.rfind("integers", 0) != 0) continue;
    const Operands o = r.make(r.tiles);
    const RegimeCount n = compare_with_model(r, o, exact_sums(r, o, r.tiles), r.tiles);
    EXPECT_EQ(n.outputs, int64_t(r.tiles) * 64 * r.shape.n) << r.name;
    EXPECT_EQ(n.differ, 0) << r.name;
    EXPECT_EQ(n.differ_k8, 0) << r.name;
  }
}

TEST(WgmmaRegimes, ComparisonCountsDifferences) {
  // The exact sums rounded to nearest differ from the model (truncation, rounding toward
  // zero) in a good share of the normal regime's outputs; the count must see them.
  for (const auto& r : wgmma_regimes()) {
    if (r.name != "normal") continue;
    const Operands o = r.make(8);
    std::vector<float> d(o.c.size());
    for (int t = 0; t < 8; ++t) {
      for (int m = 0; m < 64; ++m) {
        for (int n = 0; n < 8; ++n) {
          double s = o.c[(t * 64 + m) * 8 + n];
          for (int k = 0; k < 16; ++k) s += double(o.a[(t * 64 + m) * 16 + k]) * o.b[(t * 8 + n) * 16 + k];
          d[(t * 64 + m) * 8 + n] = float(s);
        }
      }
    }
    const RegimeCount n = compare_with_model(r, o, d, 8);
    EXPECT_EQ(n.outputs, 8 * 512);
    EXPECT_GT(n.differ, 8 * 512 / 10);
    EXPECT_EQ(n.first.size(), 5u);
  }
}

// Operand hashes of the dumped sets (FNV-1a over the bits of a, b, c at each regime's dump
// size); the dump of 2026-12-02 (bench/NOTES.md) was made from exactly these operands (the
// four MN-major B regimes were added after it, for stage (e) on wgmma).
TEST(WgmmaRegimes, OperandsArePinned) {
  const std::map<std::string, uint64_t> pinned = {
      {"integers", 0xcf9bb7120f0a0714ull},
      {"integers_chain", 0x764e0419d46da1fbull},
      {"integers_regs", 0x080d44e39f76cfc2ull},
      {"integers_n64", 0xde8b3a58f5ab58a5ull},
      {"normal", 0x20c9d29a2df9cf17ull},
      {"probe", 0x789c1cee184a6a7cull},
      {"sparse", 0xc105f93bc66e6b7full},
      {"boundary", 0xcbcad1df0317f0f0ull},
      {"deep", 0xf62498a083af06a8ull},
      {"c_sub", 0x461580f7ecddc24dull},
      {"targeted", 0x38fc09cdc08d28ddull},
      {"fp16_normal", 0xa0a7c340ea552463ull},
      {"fp16_subnormal", 0xb3be56380546fb7bull},
      {"bf16_subnormal", 0x287628dd25dbd198ull},
      {"wide", 0xef566b3baa0a32baull},
      {"cancel", 0x50d20575519c867aull},
      {"signed_zeros", 0x0f97ef362959c13cull},
      {"chain_normal", 0xb8552dfd7f7b052eull},
      {"chain_tiny", 0x1585f266ec49fc1aull},
      {"chain_fp16_subnormal", 0x506dc317109e9579ull},
      {"scale_d0", 0xd25795081ca5a69dull},
      {"scale_d0_zeros", 0xea9dc706799e968bull},
      {"regs_normal", 0x2e9dcdce80a7d4edull},
      {"regs_tiny", 0x658a1226c6d6f5c8ull},
      {"n64_normal", 0x30f7d9900abdb901ull},
      {"n64_fp16_subnormal", 0x99e3c361782107ddull},
      {"integers_mn_b", 0x6a90621a2a3c45e4ull},
      {"mn_b_normal", 0xa7c2d54d67a86070ull},
      {"mn_b_tiny", 0x7e0425b5921d1750ull},
      {"mn_b_fp16_subnormal", 0xb9cb56e9d60e1287ull}
  };
  for (const auto& r : wgmma_regimes()) {
    const auto it = pinned.find(r.name);
    ASSERT_NE(it, pinned.end()) << r.name;
    EXPECT_EQ(hash_of(r.make(r.tiles)), it->second) << r.name << ": operands changed, the dump no longer matches";
  }
}

}  // namespace
}  // namespace ssmv::chunk_scan::testing
