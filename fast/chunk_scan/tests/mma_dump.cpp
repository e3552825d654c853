// Research tool for the tensor-core model (mma_model.h): generates bf16 mma.sync m16n8k16
// operand sets in several regimes (fixed seeds), runs them on the device and writes the
// results, so that rounding rules can be tested offline against exact sums.
//
//   mma_dump gen DIR   writes DIR/<regime>.{a,b,c} (float32, little endian) for analysis here
//   mma_dump run DIR   generates the same operands, runs them on the GPU, writes DIR/<regime>.d
//   mma_dump check DIR compares DIR/<regime>.d (from `run`) with mma_step, the host model;
//                      exit 1 if any output differs (0 of 7,168,000 on the H200, 2026-11-30)
//
// Layouts as in mma_probe.h: a [tiles,16,16] (m×k), b [tiles,8,16] (n×k), c and d [tiles,16,8].
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "fast/chunk_scan/mma_model.h"
#include "fast/chunk_scan/tests/mma_probe.h"
#include "fast/chunk_scan/tests/tensor_core_operands.h"
#include "spec/format.h"

namespace {

using ssmv::Format;

constexpr int kTiles = 8000;
constexpr ssmv::chunk_scan::testing::TileShape kShape{16, 8, 16};

using ssmv::chunk_scan::testing::Operands;

struct Regime {
  const char* name;
  std::function<Operands()> make;
};

std::vector<Regime> regimes() {
  namespace t = ssmv::chunk_scan::testing;
  auto set = [](uint64_t seed, int alo, int ahi, int blo, int bhi, double zeros, t::CValue c) {
    return [=] { return t::random_set(seed, kShape, kTiles, Format::bf16, alo, ahi, blo, bhi, zeros, c); };
  };
  return {
      {"probe", set(7, -70, -64, -72, -66, 0.3, t::zero_c)},
      {"sparse", set(8, -70, -64, -72, -66, 0.8, t::zero_c)},
      {"boundary", set(9, -64, -60, -66, -62, 0.5, t::zero_c)},
      {"deep", set(10, -76, -72, -76, -72, 0.5, t::zero_c)},
      {"c_sub", set(11, -70, -64, -72, -66, 0.5, t::subnormal_c)},
      {"targeted", [] { return t::targeted_set(12, kShape, kTiles); }},
      {"normal", set(13, -16, 16, -16, 16, 0.05, t::normal_c(-32, 32))},
  };
}

// Outputs of one regime where the dumped mma.sync result and mma_step differ (bit patterns).
int64_t mismatches(const Operands& o, const std::vector<float>& d, int64_t& subnormal) {
  using ssmv::chunk_scan::MmaOperands;
  int64_t differ = 0;
  for (int t = 0; t < kTiles; ++t) {
    for (int m = 0; m < 16; ++m) {
      for (int n = 0; n < 8; ++n) {
        const size_t i = size_t(t) * 128 + m * 8 + n;
        const float want = ssmv::chunk_scan::mma_step(&o.a[size_t(t) * 256 + m * 16], &o.b[size_t(t) * 128 + n * 16],
                                                      16, o.c[i], MmaOperands{Format::bf16});
        if (std::fabs(d[i]) < 0x1p-126f) ++subnormal;
        if (std::memcmp(&want, &d[i], 4) != 0) ++differ;
      }
    }
  }
  return differ;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc == 3 ? argv[1] : "";
  if (mode != "gen" && mode != "run" && mode != "check") {
    std::fprintf(stderr, "usage: mma_dump gen|run|check DIR\n");
    return 2;
  }
  namespace t = ssmv::chunk_scan::testing;
  const std::string dir = argv[2];
  int64_t total_differ = 0;
  for (const auto& r : regimes()) {
    const Operands o = r.make();
    const std::string base = dir + "/" + r.name;
    if (mode == "check") {
      std::vector<float> d(size_t(kTiles) * 128);
      if (!t::read_floats(base + ".d", d)) {
        std::fprintf(stderr, "mma_dump: %s.d is missing or not %d tiles of 16x8 floats\n", base.c_str(), kTiles);
        return 2;
      }
      int64_t subnormal = 0;
      const int64_t differ = mismatches(o, d, subnormal);
      total_differ += differ;
      std::printf("%s: %zu outputs, %lld in the subnormal range, %lld differ from mma_step\n", r.name, d.size(),
                  (long long)subnormal, (long long)differ);
      continue;
    }
    const bool ok = mode == "run"
                        ? t::write_floats(base + ".d", ssmv::chunk_scan::testing::run_mma_tiles(true, o.a, o.b, o.c, kTiles))
                        : t::write_floats(base + ".a", o.a) && t::write_floats(base + ".b", o.b) && t::write_floats(base + ".c", o.c);
    if (!ok) {
      std::fprintf(stderr, "mma_dump: cannot write %s.*\n", base.c_str());
      return 1;
    }
    std::printf("%s: %d tiles\n", r.name, kTiles);
  }
  return total_differ == 0 ? 0 : 1;
}
