// Runs Hopper's warpgroup MMA, wgmma.mma_async.sync.aligned.m64nNk16.f32.{bf16,f16}, on the
// device for `tiles` independent tiles (one warpgroup of 128 threads each), for the
// measurement of its accumulation (wgmma_dump, wgmma_gpu_test; docs/design.md §4.1):
//   d = c + a·bᵀ as K/16 wgmma instructions of k16 each, in increasing k, chained on the
//   accumulator registers in one commit group; the first takes scale-d = `scale_d` (false:
//   d = a·bᵀ, c is not read), the others scale-d = 1.
// Layouts: a [tiles, 64, K] (m×k), b [tiles, N, K] (n×k), c and d [tiles, 64, N]; operands
// are exact bf16 (bf16 = true) or fp16 values held in float. A and B go to shared memory
// without swizzle, K-major (PTX's canonical layout: 8×8-element core matrices of 128
// contiguous bytes); A is read there through a matrix descriptor, or, with
// a_in_registers, loaded into the registers of the m64k16 A fragment. With b_mn_major, B
// goes to MN-major core matrices (8 k × 8 n, n contiguous; the layout the wgmma stage (e),
// removed since, kept x in) and the instruction transposes it (imm-trans-b = 1; with A from
// shared memory, imm-trans-a stays 0). Compiled for sm_90a only (wgmma needs the
// architecture-specific target).
#pragma once

#include <vector>

namespace ssmv::chunk_scan::testing {

struct WgmmaShape {
  int n = 8;                    // 8 or 64
  int k = 16;                   // 16, 32 or 64: 1, 2 or 4 chained wgmma instructions
  bool a_in_registers = false;  // A from registers instead of a shared-memory descriptor
  bool scale_d = true;          // false: the first instruction ignores c
  bool b_mn_major = false;      // B stored n-contiguous (MN-major) and read with imm-trans-b = 1
};

std::vector<float> run_wgmma_tiles(bool bf16, WgmmaShape shape, const std::vector<float>& a,
                                   const std::vector<float>& b, const std::vector<float>& c, int tiles);

}  // namespace ssmv::chunk_scan::testing
