// Operand sets and dump files of the tensor-core measurements (mma_dump, wgmma_dump, the GPU tests):
// reproducible from a seed, so that a dumped result file can be checked, and analysed
// again, by regenerating its operands here instead of keeping them.
//
// Layout of a set of `tiles` tiles of shape (m, n, k): a [tiles, m, k] (row-major, m×k),
// b [tiles, n, k] (n×k: each column of B contiguous in k), c [tiles, m, n]. Operands are
// exact bf16 or fp16 values held in float; c is fp32.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "spec/format.h"

namespace ssmv::chunk_scan::testing {

struct TileShape {
  int m, n, k;
};

struct Operands {
  std::vector<float> a, b, c;
};

// Draws one accumulator value.
using CValue = std::function<float(std::mt19937_64&)>;

float zero_c(std::mt19937_64&);
// fp32 values normal·2^e, e uniform in [−149, −120], rounded to fp32: down into the
// subnormal range.
float subnormal_c(std::mt19937_64& rng);
// Values normal·2^e, e uniform in [lo, hi] (fp32, no rounding needed for |e| ≤ 100).
CValue normal_c(int lo, int hi);

// Operands `format` values normal·2^e: a with e uniform in [alo, ahi], b in [blo, bhi], a
// fraction `zeros` of them zero (drawn in this order: all of a, all of b, all of c).
Operands random_set(uint64_t seed, TileShape shape, int tiles, Format format, int alo, int ahi, int blo, int bhi,
                    double zeros, const CValue& c_value);

// bf16, k = 16, c = 0: every column of a tile equal; each row searched so that its
// truncated sum (the model before the E ≥ −132 clamp) lies within 64 units of a multiple
// of 2^-149 in the subnormal range, the informative cases for the rounding of tiny sums.
Operands targeted_set(uint64_t seed, TileShape shape, int tiles);

// Dump files: float32 values, little endian, nothing else. read_floats reads exactly
// v.size() values and fails on a shorter or longer file.
bool write_floats(const std::string& path, const std::vector<float>& v);
bool read_floats(const std::string& path, std::vector<float>& v);

}  // namespace ssmv::chunk_scan::testing
