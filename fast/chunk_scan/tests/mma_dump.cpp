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
#include "spec/format.h"

namespace {

using ssmv::Format;
using ssmv::round_value;

constexpr int kTiles = 8000;

struct Operands {
  std::vector<float> a, b, c;
};

float bf16(double v) { return float(round_value(Format::bf16, v)); }

// Random bf16 values normal·2^e, e uniform in [lo, hi], a fraction `zeros` of them zero.
Operands random_set(uint64_t seed, int alo, int ahi, int blo, int bhi, double zeros,
                    std::function<float(std::mt19937_64&)> c_value) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0, 1);
  std::uniform_real_distribution<double> unit(0, 1);
  auto draw = [&](int lo, int hi) {
    std::uniform_int_distribution<int> e(lo, hi);
    return unit(rng) < zeros ? 0.0f : bf16(std::ldexp(normal(rng), e(rng)));
  };
  Operands o;
  o.a.resize(size_t(kTiles) * 256);
  o.b.resize(size_t(kTiles) * 128);
  o.c.resize(size_t(kTiles) * 128);
  for (auto& v : o.a) v = draw(alo, ahi);
  for (auto& v : o.b) v = draw(blo, bhi);
  for (auto& v : o.c) v = c_value(rng);
  return o;
}

// The model's truncated sum of row·column (no c) as it stood before the E ≥ −132 clamp:
// units of 2^(E−26); false if all zero. Kept as it was so that `gen` and `check` regenerate
// the operands that were run and analysed (it only selects rows; mma_step is the model).
bool truncated_sum(const float* a, const float* b, int64_t& sum, int& E) {
  E = INT32_MIN;
  for (int k = 0; k < 16; ++k) {
    if (double(a[k]) * b[k] == 0.0) continue;
    const int ea = std::max(std::ilogb(a[k]), -126), eb = std::max(std::ilogb(b[k]), -126);
    E = std::max(E, ea + eb + 1);
  }
  if (E == INT32_MIN) return false;
  sum = 0;
  for (int k = 0; k < 16; ++k) {
    const double p = double(a[k]) * b[k];
    if (p != 0.0) sum += int64_t(std::trunc(std::ldexp(p, 26 - E)));
  }
  return true;
}

// Every column of a tile equal; each row searched so that the truncated sum lies within 64
// units of a multiple of 2^-149 (below or above) in the subnormal range: the informative cases.
Operands targeted_set(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0, 1);
  std::uniform_int_distribution<int> ea(-70, -64), eb(-72, -66), terms(2, 5), slot(0, 15);
  Operands o;
  o.a.assign(size_t(kTiles) * 256, 0.0f);
  o.b.assign(size_t(kTiles) * 128, 0.0f);
  o.c.assign(size_t(kTiles) * 128, 0.0f);
  for (int t = 0; t < kTiles; ++t) {
    float beta[16];
    for (auto& v : beta) v = bf16(std::ldexp(normal(rng), eb(rng)));
    for (int n = 0; n < 8; ++n) std::memcpy(&o.b[size_t(t) * 128 + n * 16], beta, sizeof beta);
    for (int m = 0; m < 16; ++m) {
      float* row = &o.a[size_t(t) * 256 + m * 16];
      for (int tries = 0; tries < 200000; ++tries) {
        std::fill(row, row + 16, 0.0f);
        const int n_terms = terms(rng);
        for (int i = 0; i < n_terms; ++i) row[slot(rng)] = bf16(std::ldexp(normal(rng), ea(rng)));
        int64_t s;
        int E;
        if (!truncated_sum(row, beta, s, E)) continue;
        const int q = -149 - (E - 26);  // bits of the truncation grid below 2^-149
        if (q < 2 || q > 40) continue;
        const uint64_t mag = uint64_t(s < 0 ? -s : s);
        if (mag == 0 || std::ldexp(double(mag), E - 26) >= 0x1p-126) continue;
        const uint64_t r = mag & ((uint64_t(1) << q) - 1);
        if (r <= 64 || (uint64_t(1) << q) - r <= 64) break;
      }
    }
  }
  return o;
}

struct Regime {
  const char* name;
  std::function<Operands()> make;
};

std::vector<Regime> regimes() {
  auto zero = [](std::mt19937_64&) { return 0.0f; };
  return {
      {"probe", [=] { return random_set(7, -70, -64, -72, -66, 0.3, zero); }},
      {"sparse", [=] { return random_set(8, -70, -64, -72, -66, 0.8, zero); }},
      {"boundary", [=] { return random_set(9, -64, -60, -66, -62, 0.5, zero); }},
      {"deep", [=] { return random_set(10, -76, -72, -76, -72, 0.5, zero); }},
      {"c_sub", [=] {
         return random_set(11, -70, -64, -72, -66, 0.5, [](std::mt19937_64& rng) {
           std::uniform_int_distribution<int> e(-149, -120);
           std::normal_distribution<double> normal(0, 1);
           // Random fp32 values down to the subnormal range (rounding to fp32 keeps the
           // subnormal quantum).
           return float(round_value(Format::fp32, std::ldexp(normal(rng), e(rng))));
         });
       }},
      {"targeted", [] { return targeted_set(12); }},
      {"normal", [=] {
         return random_set(13, -16, 16, -16, 16, 0.05, [](std::mt19937_64& rng) {
           std::uniform_int_distribution<int> e(-32, 32);
           std::normal_distribution<double> normal(0, 1);
           return float(std::ldexp(normal(rng), e(rng)));
         });
       }},
  };
}

bool write(const std::string& path, const std::vector<float>& v) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  const bool ok = std::fwrite(v.data(), 4, v.size(), f) == v.size();
  return std::fclose(f) == 0 && ok;
}

bool read(const std::string& path, std::vector<float>& v) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  const bool ok = std::fread(v.data(), 4, v.size(), f) == v.size() && std::fgetc(f) == EOF;
  std::fclose(f);
  return ok;
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
  const std::string dir = argv[2];
  int64_t total_differ = 0;
  for (const auto& r : regimes()) {
    const Operands o = r.make();
    const std::string base = dir + "/" + r.name;
    if (mode == "check") {
      std::vector<float> d(size_t(kTiles) * 128);
      if (!read(base + ".d", d)) {
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
                        ? write(base + ".d", ssmv::chunk_scan::testing::run_mma_tiles(true, o.a, o.b, o.c, kTiles))
                        : write(base + ".a", o.a) && write(base + ".b", o.b) && write(base + ".c", o.c);
    if (!ok) {
      std::fprintf(stderr, "mma_dump: cannot write %s.*\n", base.c_str());
      return 1;
    }
    std::printf("%s: %d tiles\n", r.name, kTiles);
  }
  return total_differ == 0 ? 0 : 1;
}
