#include "fast/chunk_scan/tests/tensor_core_operands.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace ssmv::chunk_scan::testing {
namespace {

float bf16(double v) { return float(round_value(Format::bf16, v)); }

// The model's truncated sum of row·column (no c) as it stood before the E ≥ −132 clamp:
// units of 2^(E−26); false if all zero. Kept as it was so that the targeted operands that
// were run and analysed are regenerated (it only selects rows; mma_step is the model).
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

}  // namespace

float zero_c(std::mt19937_64&) { return 0.0f; }

float subnormal_c(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> e(-149, -120);
  std::normal_distribution<double> normal(0, 1);
  // Rounding to fp32 keeps the subnormal quantum.
  return float(round_value(Format::fp32, std::ldexp(normal(rng), e(rng))));
}

CValue normal_c(int lo, int hi) {
  return [lo, hi](std::mt19937_64& rng) {
    std::uniform_int_distribution<int> e(lo, hi);
    std::normal_distribution<double> normal(0, 1);
    return float(std::ldexp(normal(rng), e(rng)));
  };
}

Operands random_set(uint64_t seed, TileShape shape, int tiles, Format format, int alo, int ahi, int blo, int bhi,
                    double zeros, const CValue& c_value) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0, 1);
  std::uniform_real_distribution<double> unit(0, 1);
  auto draw = [&](int lo, int hi) {
    std::uniform_int_distribution<int> e(lo, hi);
    return unit(rng) < zeros ? 0.0f : float(round_value(format, std::ldexp(normal(rng), e(rng))));
  };
  Operands o;
  o.a.resize(size_t(tiles) * shape.m * shape.k);
  o.b.resize(size_t(tiles) * shape.n * shape.k);
  o.c.resize(size_t(tiles) * shape.m * shape.n);
  for (auto& v : o.a) v = draw(alo, ahi);
  for (auto& v : o.b) v = draw(blo, bhi);
  for (auto& v : o.c) v = c_value(rng);
  return o;
}

Operands targeted_set(uint64_t seed, TileShape shape, int tiles) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0, 1);
  std::uniform_int_distribution<int> ea(-70, -64), eb(-72, -66), terms(2, 5), slot(0, 15);
  const size_t a_tile = size_t(shape.m) * 16, b_tile = size_t(shape.n) * 16;
  Operands o;
  o.a.assign(size_t(tiles) * a_tile, 0.0f);
  o.b.assign(size_t(tiles) * b_tile, 0.0f);
  o.c.assign(size_t(tiles) * shape.m * shape.n, 0.0f);
  for (int t = 0; t < tiles; ++t) {
    float beta[16];
    for (auto& v : beta) v = bf16(std::ldexp(normal(rng), eb(rng)));
    for (int n = 0; n < shape.n; ++n) std::memcpy(&o.b[t * b_tile + n * 16], beta, sizeof beta);
    for (int m = 0; m < shape.m; ++m) {
      float* row = &o.a[t * a_tile + m * 16];
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

bool write_floats(const std::string& path, const std::vector<float>& v) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  const bool ok = std::fwrite(v.data(), 4, v.size(), f) == v.size();
  return std::fclose(f) == 0 && ok;
}

bool read_floats(const std::string& path, std::vector<float>& v) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  const bool ok = std::fread(v.data(), 4, v.size(), f) == v.size() && std::fgetc(f) == EOF;
  std::fclose(f);
  return ok;
}

}  // namespace ssmv::chunk_scan::testing
