// Stage (e) on Hopper's warpgroup MMA (wgmma, sm_90a only: compiled in scan_wgmma.cu).
// The same arithmetic, order and operand values as scan_async_kernel (kernels_async.cuh)
// and the twin: every k16 wgmma is one mma_step of mma_model.h, as each m16n8k16 mma.sync
// is (docs/design.md §4.1), and the kernel issues for every row the same k16 steps in the
// same increasing k onto the same fp32 accumulator. Only the data movement differs: the
// block's 4 warps are one warpgroup whose m64n64k16 instructions take the 64 rows at once
// (no ldmatrix, no per-warp mma.sync), the inter term with both operands from shared
// memory, the intra term with the weights from registers.
#pragma once

#include "fast/chunk_scan/kernels_async.cuh"
#include "fast/chunk_scan/wgmma.cuh"

namespace ssmv::chunk_scan::gpu {

// The x rows of stage (e) for wgmma: B = x (k × p, p contiguous) in MN-major core matrices
// of 8 k × 8 p. Group k/8 of 8 rows at (k/8)·kXGroup elements, core matrix p/8 of it at
// +64·(p/8), row k%8 at +8·(k%8). kXGroup = 8·kRow64: 8 rows take the 1152 bytes they take
// in scan_async_kernel's [k][kRow64] rows, so scan_async_smem and scan_acc_offset (the
// staged accumulators beside the tile's own x rows) hold unchanged.
inline constexpr int kXGroup = 8 * kRow64;
__device__ __forceinline__ int x_core_offset(int k, int j0) {  // j0: a multiple of 8
  return (k >> 3) * kXGroup + (j0 >> 3) * 64 + (k & 7) * 8;
}

// (e) on wgmma: grid, shared memory (scan_async_smem) and results as scan_async_kernel.
// The region holds first the inter tiles C [64][NS] and R(h_in) [64][NS] (NS = N rounded
// up to 16) as K-major core matrices (group stride NS·8 elements), then the
// x rows in x_core_offset's layout (both through issue_tile's core-matrix destinations),
// last the accumulators at scan_acc_offset(m0).
//
// Steps past a warp's own diagonal. A warpgroup instruction takes all 64 rows, so every
// warp issues the block's steps J < ⌈min(m0 + 64, len)/16⌉, and warp w's rows have real
// steps only up to their diagonal step J = (m0 + 16w)/16; the later ones get all-zero A
// fragments (their weights are not computed). This leaves the bits of the twin's chain
// unchanged: in mma_model.cpp's step, all 16 products zero means present = 0, and the step
// returns c for c ≠ ±0 and +0 for c = ±0. Even without that branch the general rule gives c:
// the only term is c, E = e(c) + 1 ≥ −125 (a subnormal c reads e(c) = −126; the clamp
// E ≥ −132 never acts), the truncation grid 2^(E−26) = 2^(e(c)−25) lies below c's last
// bit 2^(e(c)−23) (2^-149 for a subnormal c), so the sum is c exactly and rounding toward
// zero keeps it. And c is never −0 here: every row whose result is stored (m < len) has had
// its first intra step (J = 0 is a real step of every warp with rows in the chunk), and
// every step's zero result is +0 (measured, docs/design.md §4.1). A ±Inf or NaN c (outside
// the measured model, as for every step) passes a step of zero products unchanged in the
// model's IEEE rule. Rows past the chunk are computed and never stored.
template <class Op>
__global__ void __launch_bounds__(kThreads, 5) scan_wgmma_kernel(const Params p) {
  extern __shared__ __align__(16) unsigned char smem[];  // 16-byte aligned: enough for unswizzled descriptors
  __shared__ __align__(16) float s_cs[256], s_delta[256], s_D[kTile];
  const int NS = (p.N + 15) & ~15;
  Op* sC = reinterpret_cast<Op*>(smem);  // inter: C_m, K-major core matrices
  Op* sS = sC + kTile * NS;              // inter: R(h_in)[p], K-major core matrices
  Op* sX = reinterpret_cast<Op*>(smem);  // intra: x_k[p0 + j] at x_core_offset(k, j)
  const ScanTile<Op> b(p);
  if (b.empty()) {
    wait_prior_stages();
    return;
  }
  const auto [c, h, g, m0, p0, t0, len, x, C, state_in] = b;
  const int warp = threadIdx.x >> 5, gl = (threadIdx.x & 31) >> 2, L = p.L;
  // C and D are inputs: loaded while stage (d) may still run; then h_in, cs and δ.
  issue_tile<Op, true>(sC, NS * 8, C, p.c_st, kTile, NS / 8, len - m0, p.N);
  issue_scan_d(p, s_D, h, p0);
  wait_prior_stages();
  issue_tile<Op, true>(sS, NS * 8, state_in + int64_t(p0) * p.N, p.N, kTile, NS / 8, p.P - p0, p.N);
  issue_scan_cs_delta(p, s_cs, s_delta, h, t0, len);
  cp_async_commit();
  const int mw = m0 + warp * 16, m_lo = mw + gl, m_hi = m_lo + 8;
  CausalWeights<Op> weights(p.cb + (int64_t(c) * p.G + g) * L * L, L, mw, len);
  cp_async_wait<0>();
  fence_proxy_async_shared();  // this thread's copies, visible to the wgmma after the barrier
  __syncthreads();

  // Inter-chunk term (twin: chain(C_m, h_in[p], N)): NS/16 k16 steps in increasing n, both
  // operands K-major (core matrices adjacent in n 128 bytes apart, 8-row groups NS·16
  // bytes apart); then ×exp(cs_m) per row (rows past the chunk: 0, not stored).
  float acc[8][4] = {};
  float(&d)[32] = reinterpret_cast<float(&)[32]>(acc);  // element i = acc[i/4][i%4]: wgmma.cuh's layout
  fence_registers(d);
  const uint64_t c_desc = wgmma_descriptor(sC, 128, NS * 16), s_desc = wgmma_descriptor(sS, 128, NS * 16);
#pragma unroll 1
  for (int s = 0; s < NS / 16; ++s) {
    wgmma_fence();  // in the loop: the accumulators are loop-carried registers (else ptxas inserts it)
    Wgmma<Op, 64>::ss(d, wgmma_descriptor_advance(c_desc, 256 * s), wgmma_descriptor_advance(s_desc, 256 * s), 1);
  }
  wgmma_commit();
  wgmma_wait<0>();
  fence_registers(d);
  const float cs_lo = m_lo < len ? s_cs[m_lo] : 0.0f, cs_hi = m_hi < len ? s_cs[m_hi] : 0.0f;
  scale_rows(acc, m_lo < len ? ssmv::fm::exp(cs_lo) : 0.0f, m_hi < len ? ssmv::fm::exp(cs_hi) : 0.0f);
  __syncthreads();  // the warpgroup is done with the inter tiles: the region takes x
  // x rows [0, m0 + 64), rows ≥ len zero.
  issue_tile<Op, true>(sX, kXGroup, x, p.x_st, m0 + kTile, kTile / 8, len, p.P - p0);
  cp_async_commit();

  // Intra-chunk term on the same accumulator: step J is one m64n64k16 with this warp's
  // weights from registers (CausalWeights, all-zero past the warp's diagonal) and B = x
  // rows 16J .. +16, MN-major (imm-trans-b = 1; core matrices adjacent in k kXGroup·2 bytes
  // apart, adjacent in p 128 bytes apart). The weights of step J + 1 are computed while
  // step J's wgmma runs; the A registers of step J stay untouched until its wait_group.
  const int j_block = (min(m0 + kTile, len) + 15) / 16;
  const uint64_t x_desc = wgmma_descriptor(sX, kXGroup * 2, 128);
  uint32_t a[4] = {0u, 0u, 0u, 0u};
  if (weights.j_end > 0) weights.fragment(0, s_cs, s_delta, cs_lo, cs_hi, a);
  cp_async_wait<0>();
  fence_proxy_async_shared();
  __syncthreads();  // x rows landed
#pragma unroll 1
  for (int J = 0; J < j_block; ++J) {
    wgmma_fence();  // a (and, at J = 0, the scaled accumulators) written by this thread
    Wgmma<Op, 64>::template rs<1>(d, a, wgmma_descriptor_advance(x_desc, J * 4 * kXGroup), 1);
    wgmma_commit();
    uint32_t next[4] = {0u, 0u, 0u, 0u};
    if (J + 1 < weights.j_end) weights.fragment(J + 1, s_cs, s_delta, cs_lo, cs_hi, next);
    wgmma_wait<0>();
    fence_registers(a);  // a stays live (and unchanged) until step J completed
#pragma unroll
    for (int i = 0; i < 4; ++i) a[i] = next[i];
  }
  fence_registers(d);
  // Epilogue by the whole block, as scan_async_kernel's: the accumulators through shared
  // memory at scan_acc_offset(m0), once the warpgroup is done with the x rows there (its
  // last wait_group), then 8 columns of a row per thread, 8 lanes down 8 rows.
  __syncthreads();
  float* s_acc = reinterpret_cast<float*>(smem + scan_acc_offset(m0));
  stage_accumulators(acc, s_acc);
  __syncthreads();
  store_outputs8<Op, true>(s_acc, [&](int m, int j0) { return sX + x_core_offset(m, j0); }, p, t0, h, m0, p0, len,
                           s_D);
}

}  // namespace ssmv::chunk_scan::gpu
