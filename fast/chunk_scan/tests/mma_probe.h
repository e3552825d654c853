// Runs mma.sync m16n8k16 (f32 accumulate) on the device for `tiles` independent tiles:
// a [tiles,16,16] (row-major, m×k), b [tiles,8,16] (n×k), c [tiles,16,8]; returns d
// [tiles,16,8]. Operands are bf16 (bf16 = true) or fp16 values held in float.
#pragma once

#include <vector>

namespace ssmv::chunk_scan::testing {

std::vector<float> run_mma_tiles(bool bf16, const std::vector<float>& a, const std::vector<float>& b,
                                 const std::vector<float>& c, int tiles);

}  // namespace ssmv::chunk_scan::testing
