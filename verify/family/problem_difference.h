// What tells two dumps of different problems apart, for `ssmv compare` (which sets two
// kernels' outputs side by side only on the same inputs): the first tensor or shape that
// differs, named with its values. Every family's Dump::problem_difference is built from these.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "spec/format.h"
#include "spec/format_values.h"

namespace ssmv::family {

// "" when `a` and `b` hold the same bit patterns; else "tensor 'NAME': 12 vs 13 elements" or
// "tensor 'NAME' element 7: 0x1.8p-3 vs 0x1.9p-3".
// (Floats or FormatValues: a narrowed tensor's values compared as floats.)
std::string tensor_difference(const std::string& name, const std::vector<float>& a, const std::vector<float>& b);
std::string tensor_difference(const std::string& name, const FormatValues& a, const FormatValues& b);

// "" when every named dimension agrees; else "shapes differ: H, P, N = 4, 64, 128 vs 4, 32, 128"
// (the names joined as given).
std::string shape_difference(const std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>>& dims);

// "" when every named format agrees; else "formats differ: input, output = bf16, bf16 vs fp16, bf16".
std::string format_difference(const std::vector<std::pair<std::string, std::pair<Format, Format>>>& formats);

}  // namespace ssmv::family
