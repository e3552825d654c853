// Stages (b) and (e) on tensor cores with asynchronous copies (cp.async, sm_80+), sized so
// that 4–5 blocks share a multiprocessor: stage (b) streams the chunk in 64-token slabs
// through two buffers; in stage (e) each warp computes the decayed, dt-scaled, rounded
// C·Bᵀ weights of its own A fragments in registers (no weight tile in shared memory, no
// barrier between the weights and their mma). Same arithmetic, order and operand values
// as kernels.cuh / kernels_mma.cuh (and the twin): only the data movement and the place
// where each weight is computed differ.
#pragma once

#include "fast/chunk_scan/kernels_mma.cuh"
#include "fast/common/cp_async.cuh"

namespace ssmv::chunk_scan::gpu {

using ssmv::cuda::cp_async;
using ssmv::cuda::cp_async_commit;
using ssmv::cuda::cp_async_wait;

// dst[0..8) = src[0..valid) and zeros: an asynchronous 16-byte copy when all 8 elements
// exist and src is 16-byte aligned, else plain loads and one 16-byte shared store.
template <class T>
__device__ __forceinline__ void copy8_async(T* dst, const T* src, int valid) {
  static_assert(sizeof(T) == 2, "16-bit operands only");
  if (valid >= 8 && (reinterpret_cast<uintptr_t>(src) & 15) == 0) {
    cp_async<16>(dst, src);
  } else {
    *reinterpret_cast<uint4*>(dst) = valid > 0 ? load8_raw(src, valid) : make_uint4(0, 0, 0, 0);
  }
}

// Rows [0, rows) of a tile of `vecs` 16-byte vectors (8 elements) per row: dst row r at
// dst + r·dst_stride from src row r at src + r·src_stride, whose first cols_valid elements
// exist for r < rows_valid; the rest of the tile is zero (Threads: the block's threads).
// Where vecs divides Threads, thread i takes vector i % vecs of rows i / vecs, i / vecs +
// Threads / vecs, …: its column is fixed and its pointers advance by constant steps, and
// when its vector exists whole and src rows are 16-byte aligned each row's copy is one
// cp.async with no further test; a warp reads whole rows. Else (N = 48: 6 vectors a row)
// thread i takes vectors i, i + Threads, … in row-major order, each through copy8_async.
template <class Op, int Threads = kThreads>
__device__ __forceinline__ void issue_tile(Op* dst, int dst_stride, const Op* src, int64_t src_stride, int rows,
                                           int vecs, int rows_valid, int cols_valid) {
  if (Threads % vecs == 0) {  // vecs a power of two (Threads is): shifts, not divisions
    const int shift = __ffs(vecs) - 1;
    const int step = Threads >> shift, v = int(threadIdx.x) & (vecs - 1), valid = cols_valid - 8 * v;
    int r = int(threadIdx.x) >> shift;
    Op* d = dst + (r * dst_stride + 8 * v);
    const Op* s = src + r * src_stride + 8 * v;
    const int64_t d_step = int64_t(step) * dst_stride, s_step = step * src_stride;
    if (valid >= 8 && src_stride % 8 == 0 && (reinterpret_cast<uintptr_t>(s) & 15) == 0) {
      for (const int r_end = min(rows, rows_valid); r < r_end; r += step, d += d_step, s += s_step) cp_async<16>(d, s);
    }
    for (; r < rows; r += step, d += d_step, s += s_step) copy8_async(d, s, r < rows_valid ? valid : 0);
  } else {
    for (int i = threadIdx.x; i < rows * vecs; i += Threads) {
      const int r = i / vecs, v = i - r * vecs;
      copy8_async(dst + (r * dst_stride + 8 * v), src + r * src_stride + 8 * v,
                  r < rows_valid ? cols_valid - 8 * v : 0);
    }
  }
}

// rows [0, 64) of a [64][padded_stride(N)] tile from src rows (row_stride apart, N valid
// columns, rows_valid valid rows); zero elsewhere up to N rounded to 16.
template <class Op>
__device__ __forceinline__ void issue_rows64(Op* dst, const Op* src, int64_t row_stride, int rows_valid, int N) {
  issue_tile(dst, padded_stride(N), src, row_stride, kTile, ((N + 15) & ~15) / 8, rows_valid, N);
}

// rows kk in [0, rows) of a [rows][kRow64] x tile: src row k0 + kk (rows row_stride
// apart), columns [0, 64) of which cols_valid exist; rows k0 + kk ≥ len zero.
template <class Op, int Threads = kThreads>
__device__ __forceinline__ void issue_x_rows(Op* dst, const Op* src, int64_t row_stride, int k0, int rows, int len,
                                             int cols_valid) {
  issue_tile<Op, Threads>(dst, kRow64, src + int64_t(k0) * row_stride, row_stride, rows, kTile / 8, len - k0,
                          cols_valid);
}

// (b) grid (⌈P/64⌉·⌈N/128⌉, H, NC), kStateThreads = 256 threads; block tile 64 p × 128 n,
// warp w of 8 holds p rows 32(w%2) .. +32 and n columns 32(w/2) .. +32 (two 16-row fragment
// groups: each B fragment feeds two mma; 32 accumulators a thread). Slabs of 64 tokens,
// two buffers (the next slab loads while the current one computes); each thread scales and
// rounds the B vectors it copied, R(B_k[n]·scale_k) (twin: bs). Dynamic shared memory
// chunk_state_async_smem(L): 2 × (x [64][72], B [64][136]), scales [L]:
// 54 KB at L = 256 and at most 64 registers (ptxas, sm_90: 64, no spill): 4 blocks, 32
// warps per multiprocessor. With 4 warps of 32 p × 64 n warp tiles (128 registers, spilling)
// the stage took 51 µs of a 1 × 8192-token H 32 chunk_scan, with 8 warps 43.5 µs (H100,
// bench/NOTES.md session 26); each output's mma steps are the same in the same order.
// k-steps in increasing k over [0, ⌈len/16⌉).
inline constexpr int kRow128 = 136;  // row stride (elements) of [rows][128] tiles: 272 bytes
// fp32 row stride of stage (b)'s staged accumulators [64][128]: 33.8 KB, inside the two
// slab buffers (53.2 KB); rows 4 banks apart, so a warp's 8-byte fragment stores take the
// two wavefronts their 256 bytes need.
inline constexpr int kOutRow = 132;
__host__ __device__ inline int chunk_state_async_smem(int L) {
  return 2 * (kTile * kRow64 + kTile * kRow128) * 2 + L * 4;
}

inline constexpr int kStateThreads = 256;
template <class Op>
__global__ void __launch_bounds__(kStateThreads, 4) chunk_state_async_kernel(const Params p) {
  constexpr int kWarps = kStateThreads / 32, kNGroups = kWarps / 2, kNF = 128 / kNGroups / 8;
  extern __shared__ __align__(16) unsigned char smem[];
  Op* const s_base = reinterpret_cast<Op*>(smem);
  constexpr int kBuf = kTile * kRow64 + kTile * kRow128;  // elements per buffer
  auto sX = [&](int b) { return s_base + b * kBuf; };
  auto sB = [&](int b) { return s_base + b * kBuf + kTile * kRow64; };
  float* s_scale = reinterpret_cast<float*>(s_base + 2 * kBuf);  // [L]
  const int c = blockIdx.z, h = blockIdx.y, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int n_tiles = (p.N + 127) / 128;
  const int p0 = (blockIdx.x / n_tiles) * kTile, n0 = (blockIdx.x % n_tiles) * 128;
  const int g = h / (p.H / p.G);
  const int t0 = p.chunk_start[c], len = p.chunk_len[c], steps = (len + 15) / 16;
  const int slabs = (len + kTile - 1) / kTile;
  const Op* x = static_cast<const Op*>(p.x) + int64_t(t0) * p.x_st + int64_t(h) * p.x_sh + p0;
  const Op* B = static_cast<const Op*>(p.B) + int64_t(t0) * p.b_st + int64_t(g) * p.b_sg + n0;
  auto issue = [&](int j) {
    if (j < slabs) {
      issue_x_rows<Op, kStateThreads>(sX(j & 1), x, p.x_st, kTile * j, kTile, len, p.P - p0);
      issue_tile<Op, kStateThreads>(sB(j & 1), kRow128, B + int64_t(kTile * j) * p.b_st, p.b_st, kTile, 16,
                                    len - kTile * j, p.N - n0);
    }
    cp_async_commit();  // one group per slab, empty past the chunk
  };
  allow_next_stage();
  issue(0);  // x and B are inputs: loaded while stage (a) may still run
  issue(1);
  wait_prior_stages();
  const int64_t hT = int64_t(h) * p.T;
  const float cs_last = p.cumsum[hT + t0 + len - 1];
  for (int j = threadIdx.x; j < len; j += kStateThreads) {
    s_scale[j] = state_scale(cs_last, p.cumsum[hT + t0 + j], p.delta[hT + t0 + j]);
  }
  __syncthreads();  // scales visible
  float acc[2][kNF][4] = {};
  const int i = lane >> 3, r = lane & 7;
  const int prow = 32 * (warp & 1), ncol = 8 * kNF * (warp >> 1);
  for (int j = 0; j < slabs; ++j) {
    cp_async_wait<1>();  // this thread's copies of slab j landed
    Op* db = sB(j & 1);
    for (int e = threadIdx.x; e < kTile * 16; e += kStateThreads) {
      const int kk = e >> 4, v = (e & 15) * 8, k = kTile * j + kk;
      if (k >= len) break;
      float bv[8];
      unpack8<Op>(*reinterpret_cast<const uint4*>(db + kk * kRow128 + v), bv);  // one 16-byte load
      const float scale = s_scale[k];
#pragma unroll
      for (int q = 0; q < 8; ++q) bv[q] = bv[q] * scale;
      store8(db + kk * kRow128 + v, bv);
    }
    __syncthreads();  // slab j scaled by every thread
    const Op* dx = sX(j & 1);
    const int s_end = min(4, steps - 4 * j);
    for (int s = 0; s < s_end; ++s) {
      uint32_t a0[4], a1[4];  // A = xᵀ, rows p: groups prow .. +16 and prow + 16 .. +32
      ldmatrix_x4_trans(a0, dx + (16 * s + r + 8 * (i >> 1)) * kRow64 + prow + 8 * (i & 1));
      ldmatrix_x4_trans(a1, dx + (16 * s + r + 8 * (i >> 1)) * kRow64 + prow + 16 + 8 * (i & 1));
#pragma unroll
      for (int f = 0; f < kNF; f += 2) {
        uint32_t b[4];
        ldmatrix_x4_trans(b, db + (16 * s + r + 8 * (i & 1)) * kRow128 + ncol + 8 * f + 8 * (i >> 1));
        mma16816<Op>(acc[0][f], a0[0], a0[1], a0[2], a0[3], b[0], b[1]);
        mma16816<Op>(acc[0][f + 1], a0[0], a0[1], a0[2], a0[3], b[2], b[3]);
        mma16816<Op>(acc[1][f], a1[0], a1[1], a1[2], a1[3], b[0], b[1]);
        mma16816<Op>(acc[1][f + 1], a1[0], a1[1], a1[2], a1[3], b[2], b[3]);
      }
    }
    __syncthreads();  // every warp is done with buffer j % 2
    issue(j + 2);
  }
  // Epilogue: the accumulators through shared memory (fp32 [64][kOutRow], over the slab
  // buffers: the loop's last barrier follows every warp's last read of them, and no copy
  // is in flight), then each row of 128 columns by one warp, 16 bytes a lane: four
  // 128-byte lines per store instead of 8 rows × 16 bytes from the fragment layout.
  static_assert(kTile * kOutRow * 4 <= 2 * kBuf * int(sizeof(Op)), "staged accumulators exceed the slab buffers");
  float* s_out = reinterpret_cast<float*>(smem);
#pragma unroll
  for (int t = 0; t < 2; ++t) {
    const int row = prow + 16 * t + (lane >> 2);
#pragma unroll
    for (int f = 0; f < kNF; ++f) {
      const int col = ncol + 8 * f + 2 * (lane & 3);
      *reinterpret_cast<float2*>(s_out + row * kOutRow + col) = make_float2(acc[t][f][0], acc[t][f][1]);
      *reinterpret_cast<float2*>(s_out + (row + 8) * kOutRow + col) = make_float2(acc[t][f][2], acc[t][f][3]);
    }
  }
  __syncthreads();
  float* out = p.chunk_state + (int64_t(c) * p.H + h) * p.P * p.N;
  const int N = p.N;
  const bool vec = N % 4 == 0;  // then every row and 4-column group is 16-byte aligned
  for (int e = threadIdx.x; e < kTile * 32; e += kStateThreads) {
    const int r = e >> 5, v = (e & 31) * 4, row = p0 + r, col = n0 + v;
    if (row >= p.P) break;  // rows grow with e
    if (col >= N) continue;
    const float4 val = *reinterpret_cast<const float4*>(s_out + r * kOutRow + v);
    float* dst = out + int64_t(row) * N + col;
    if (vec) {
      *reinterpret_cast<float4*>(dst) = val;
    } else {
      const float w[4] = {val.x, val.y, val.z, val.w};
      for (int j = 0; j < 4 && col + j < N; ++j) dst[j] = w[j];
    }
  }
}

// Stage (e) epilogue from a block's accumulators acc_tile (staged_acc; row r is m0 + r)
// (columns p0 + j): y = fm::output_epilogue(acc, D, x, z) (twin: the same, round_value), rounded to
// the output format. Thread i takes row i/8, columns 8(i%8) .. +8: the accumulators, x
// (x_at(m, j0): the 8 x values of the block's x rows in shared memory, k = m) and D by
// 16-byte shared loads, z and y 16 bytes at a time where all 8 columns exist and the
// address is aligned.
// The staged accumulators: fp32 [64][64] in pairs of floats (8-byte slots s = col / 2, 32 a
// row), slot s of row r stored at s ^ 4·(r % 4) ^ 2·(s / 16 % 2). stage_accumulators' 8-byte
// stores (a half warp: rows r .. r + 3, slots 4f .. 4f + 3) then fall in 16 distinct bank pairs,
// and so do store_outputs8's 16-byte loads (8 threads: one row, slots 4k, 4k + 1 or 4k + 2,
// 4k + 3, k < 8), whose slots 4k and 4k + 16 would share banks unswizzled; ncu counted 4-way
// conflicts on both with the [64][68] tile this replaces (bench/NOTES.md, session 32). XOR
// keeps the slot pairs of a 16-byte load together. Index of column col of row r:
__host__ __device__ __forceinline__ int staged_acc(int r, int col) {
  const int slot = col >> 1;
  return r * kTile + 2 * (slot ^ ((r & 3) << 2) ^ ((slot >> 3) & 2)) + (col & 1);
}
template <class Op, class XAt>
__device__ __forceinline__ void store_outputs8(const float* acc_tile, XAt x_at, const Params& p, int t0, int h,
                                               int m0, int p0, int len, const float* d_tile) {
  const Op* z = static_cast<const Op*>(p.z);
#pragma unroll 1
  for (int i = threadIdx.x; i < kTile * 8; i += kThreads) {
    const int r = i >> 3, j0 = (i & 7) * 8, m = m0 + r;
    const int valid = min(8, p.P - p0 - j0);
    if (m >= len || valid <= 0) continue;
    const int64_t t = t0 + m;
    const float4 a_lo = *reinterpret_cast<const float4*>(acc_tile + staged_acc(r, j0));
    const float4 a_hi = *reinterpret_cast<const float4*>(acc_tile + staged_acc(r, j0 + 4));
    const float4* d4 = reinterpret_cast<const float4*>(d_tile + j0);
    const float4 d_lo = d4[0], d_hi = d4[1];
    const float acc[8] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
    const float d[8] = {d_lo.x, d_lo.y, d_lo.z, d_lo.w, d_hi.x, d_hi.y, d_hi.z, d_hi.w};
    float xv[8], v[8];
    unpack8<Op>(*reinterpret_cast<const uint4*>(x_at(m, j0)), xv);
    if (p.has_z()) {  // the branch outside the element loop: without z no sigmoid code in it
      float zv[8];
      unpack8<Op>(load8_raw(z + t * p.z_st + int64_t(h) * p.z_sh + p0 + j0, valid), zv);
#pragma unroll
      for (int j = 0; j < 8; ++j) v[j] = fm::output_epilogue(acc[j], p.has_D(), d[j], xv[j], true, zv[j]);
    } else {
#pragma unroll
      for (int j = 0; j < 8; ++j) v[j] = fm::output_epilogue(acc[j], p.has_D(), d[j], xv[j], false, 0.0f);
    }
    const int64_t yi = t * p.y_st + int64_t(h) * p.y_sh + p0 + j0;
    if (p.output == Format::fp32) {
      float* y = static_cast<float*>(p.y) + yi;
      if (valid == 8 && (reinterpret_cast<uintptr_t>(y) & 15) == 0) {
        reinterpret_cast<float4*>(y)[0] = make_float4(v[0], v[1], v[2], v[3]);
        reinterpret_cast<float4*>(y)[1] = make_float4(v[4], v[5], v[6], v[7]);
        continue;
      }
    } else {
      void* y = static_cast<char*>(p.y) + yi * 2;
      if (valid == 8 && (reinterpret_cast<uintptr_t>(y) & 15) == 0) {
        if (p.output == Format::bf16) store8(static_cast<__nv_bfloat16*>(y), v);
        else store8(static_cast<__half*>(y), v);
        continue;
      }
    }
    for (int j = 0; j < valid; ++j) store_fmt(p.y, yi + j, p.output, v[j]);
  }
}

// A warp's accumulators (rows 16·warp .. +16 of the block's 64, the mma.m16n8k16 C
// fragments of 8 n8 tiles) into the block's staged fp32 tile s_acc (staged_acc).
__device__ __forceinline__ void stage_accumulators(const float (&acc)[8][4], float* s_acc) {
  const int warp = threadIdx.x >> 5, gl = (threadIdx.x & 31) >> 2, q = threadIdx.x & 3;
  const int lo = warp * 16 + gl, hi = lo + 8;
#pragma unroll
  for (int f = 0; f < 8; ++f) {
    const int col = 8 * f + 2 * q;
    *reinterpret_cast<float2*>(s_acc + staged_acc(lo, col)) = make_float2(acc[f][0], acc[f][1]);
    *reinterpret_cast<float2*>(s_acc + staged_acc(hi, col)) = make_float2(acc[f][2], acc[f][3]);
  }
}

// Stage (e)'s staged accumulators [64][64] fp32 (16 KB) go where the tile's own x rows
// [m0, m0 + 64), read by the epilogue, are not: after them for m0 < 128, else at the
// region's start (the x rows there, below m0·144 bytes ≥ 18 KB, are no longer needed).
__host__ __device__ inline int scan_acc_offset(int m0) { return m0 < 2 * kTile ? (m0 + kTile) * kRow64 * 2 : 0; }
static_assert(kTile * kTile * 4 <= 2 * kTile * kRow64 * 2, "accumulators at 0 must stay below x row 128");

// (e) grid (⌈L/64⌉·⌈P/64⌉, H, NC). One shared region, used three times: first the inter
// tiles C [64][CS] and R(h_in) [64][CS] (CS = padded_stride(N)), then the x rows [k][72]
// of k < m0 + 64 (rows ≥ len zero), last the accumulators [64][64] fp32 (staged_acc) at
// scan_acc_offset(m0) beside the x rows of the tile.
__host__ __device__ inline int scan_async_smem(int N, int L) {
  const int inter = 2 * kTile * padded_stride(N) * 2, xrows = L * kRow64 * 2;
  const int accs = scan_acc_offset((L < 2 * kTile ? L : 2 * kTile) - kTile) + kTile * kTile * 4;
  const int most = inter > xrows ? inter : xrows;
  return most > accs ? most : accs;
}

// A stage (e) block's place (grid (⌈L/64⌉·⌈P/64⌉, H, NC)): chunk c, head h of group g, rows
// m0 .. +64 of the chunk's len tokens (from t0), columns p0 .. +64; x at token t0, column p0;
// C at token t0 + m0; R(h_in) of (c, h). A block with m0 ≥ len has nothing to do (empty()).
template <class Op>
struct ScanTile {
  int c, h, g, m0, p0, t0, len;
  const Op *x, *C, *state_in;
  __device__ __forceinline__ explicit ScanTile(const Params& p) {
    c = blockIdx.z;
    h = blockIdx.y;
    g = h / (p.H / p.G);
    const int p_tiles = (p.P + kTile - 1) / kTile;
    m0 = (blockIdx.x / p_tiles) * kTile;
    p0 = (blockIdx.x % p_tiles) * kTile;
    t0 = p.chunk_start[c];
    len = p.chunk_len[c];
    x = static_cast<const Op*>(p.x) + int64_t(t0) * p.x_st + int64_t(h) * p.x_sh + p0;
    C = static_cast<const Op*>(p.C) + int64_t(t0 + m0) * p.c_st + int64_t(g) * p.c_sg;
    state_in = static_cast<const Op*>(p.state_in) + (int64_t(c) * p.H + h) * p.P * p.N;
  }
  __device__ __forceinline__ bool empty() const { return m0 >= len; }
};

// Stage (e)'s per-column and per-token vectors by 4-byte cp.async in the tiles' copy group
// (a chunk's start need not be 16-byte aligned): D of the tile's columns p0 + r (0 without
// D or past P; D is an input, loaded while stage (d) may still run), and the chunk's cs
// and δ (from stage a: after wait_prior_stages).
__device__ __forceinline__ void issue_scan_d(const Params& p, float* s_D, int h, int p0) {
  for (int r = threadIdx.x; r < kTile; r += kThreads) {
    if (p.has_D() && p0 + r < p.P) cp_async<4>(s_D + r, p.D + (p.D_per_dim() ? int64_t(h) * p.P + p0 + r : h));
    else s_D[r] = 0.0f;
  }
}
__device__ __forceinline__ void issue_scan_cs_delta(const Params& p, float* s_cs, float* s_delta, int h, int t0,
                                                    int len) {
  const int64_t base = int64_t(h) * p.T + t0;  // the chunk's first token in the [H, T] intermediates
  for (int j = threadIdx.x; j < len; j += kThreads) {
    cp_async<4>(s_cs + j, p.cumsum + base + j);
    cp_async<4>(s_delta + j, p.delta + base + j);
  }
}

// Stage (e)'s intra-chunk weights as a warp's A fragments (mma.m16n8k16's): k-step J of
// rows [mw, mw+16) holds R(w_mk), w_mk = cb_weight(CB[m,k], cs_m, cs_k, δ_k) for k ≤ m <
// len, else +0 (twin: steps 0..⌊m/16⌋ of chain(w_m, x, m+1)).
// Lane (gl, q) holds rows m_lo = mw + gl and m_hi = m_lo + 8, columns 16J + 2q (+1) and
// 16J + 2q + 8 (+9); its C·Bᵀ entries are fetched one step ahead (rows past the chunk are
// read, inside the buffer, and not used) into two buffers that the steps use in turn: the
// loop takes two steps an iteration, fragment<0> and fragment<1>, so no register copy of a
// fetched value waits for its load (with one buffer the compiler copied the next step's
// entries into the current ones at each step's end, which waited on the loads issued in that
// step: 922 of the stage's 11,573 stall samples, bench/NOTES.md session 32).
// Weights are kept by masks of the packed A words (low half: the lower k): below the
// diagonal step every k < m; in the diagonal step J = mw/16, column k = mw + c of row mw + r
// is kept for c ≤ r.
template <class Op>
struct CausalWeights {
  const float *cb_lo, *cb_hi;  // the entries of the next step to fetch
  uint32_t row_lo, row_hi, mask_diag[4];
  int j_diag, j_end;  // this warp's steps: [0, j_end), the diagonal one j_diag
  float2 buf[2][4];   // step J's entries in buf[J % 2]

  // cb_chunk: the chunk's [L][L] C·Bᵀ; fetches step 0's entries.
  __device__ __forceinline__ CausalWeights(const float* cb_chunk, int L, int mw, int len) {
    const int gl = (threadIdx.x & 31) >> 2, q = threadIdx.x & 3, m_lo = mw + gl, m_hi = m_lo + 8;
    j_end = mw < len ? mw / 16 + 1 : 0;
    j_diag = mw / 16;
    cb_lo = cb_chunk + int64_t(m_lo) * L + 2 * q;
    cb_hi = cb_chunk + int64_t(m_hi) * L + 2 * q;
    row_lo = m_lo < len ? 0xffffffffu : 0u;
    row_hi = m_hi < len ? 0xffffffffu : 0u;
    auto diag = [&](int c, int r) { return (c <= r ? 0x0000ffffu : 0u) | (c + 1 <= r ? 0xffff0000u : 0u); };
    mask_diag[0] = row_lo & diag(2 * q, gl);
    mask_diag[1] = row_hi & diag(2 * q, gl + 8);
    mask_diag[2] = row_lo & diag(2 * q + 8, gl);
    mask_diag[3] = row_hi & diag(2 * q + 8, gl + 8);
    if (j_end > 0) fetch<0>();
  }
  template <int B>
  __device__ __forceinline__ void fetch() {
    buf[B][0] = __ldg(reinterpret_cast<const float2*>(cb_lo));
    buf[B][1] = __ldg(reinterpret_cast<const float2*>(cb_hi));
    buf[B][2] = __ldg(reinterpret_cast<const float2*>(cb_lo + 8));
    buf[B][3] = __ldg(reinterpret_cast<const float2*>(cb_hi + 8));
    cb_lo += 16;
    cb_hi += 16;
  }
  // The fragment of step J < j_end with B = J % 2 (steps in increasing J; fetches step J + 1's
  // entries). cs_lo, cs_hi: cs of rows m_lo and m_hi (any value for rows past the chunk).
  template <int B>
  __device__ __forceinline__ void fragment(int J, const float* s_cs, const float* s_delta, float cs_lo, float cs_hi,
                                           uint32_t (&a)[4]) {
    const int q = threadIdx.x & 3;
    if (J + 1 < j_end) fetch<B ^ 1>();
#pragma unroll
    for (int half = 0; half < 2; ++half) {  // columns k, k+1 with k = 16J + 2q + 8·half
      const int k = 16 * J + 2 * q + 8 * half;
      const float2 csk = *reinterpret_cast<const float2*>(s_cs + k);
      const float2 dk = *reinterpret_cast<const float2*>(s_delta + k);
      const float2 lo = buf[B][2 * half], hi = buf[B][2 * half + 1];
      // All four weights computed unconditionally (independent chains the scheduler can
      // interleave; entries past the diagonal or the chunk are masked below).
      const float w00 = cb_weight(lo.x, cs_lo, csk.x, dk.x), w01 = cb_weight(lo.y, cs_lo, csk.y, dk.y);
      const float w10 = cb_weight(hi.x, cs_hi, csk.x, dk.x), w11 = cb_weight(hi.y, cs_hi, csk.y, dk.y);
      a[2 * half] = pack2_rn<Op>(w00, w01);      // a0 / a2: row m_lo
      a[2 * half + 1] = pack2_rn<Op>(w10, w11);  // a1 / a3: row m_hi
    }
    const bool on_diag = J == j_diag;
    a[0] = and_b32(a[0], on_diag ? mask_diag[0] : row_lo);
    a[1] = and_b32(a[1], on_diag ? mask_diag[1] : row_hi);
    a[2] = and_b32(a[2], on_diag ? mask_diag[2] : row_lo);
    a[3] = and_b32(a[3], on_diag ? mask_diag[3] : row_hi);
  }
};

// 36 KB of dynamic and 2.3 KB of static shared memory at N = 128, L = 256, and at most 102
// registers: 5 blocks per multiprocessor.
template <class Op>
__global__ void __launch_bounds__(kThreads, 5) scan_async_kernel(const Params p) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ __align__(16) float s_cs[256], s_delta[256], s_D[kTile];
  const int CS = padded_stride(p.N);
  Op* sC = reinterpret_cast<Op*>(smem);  // inter: [64][CS] C_m
  Op* sS = sC + kTile * CS;              // inter: [64][CS] R(h_in)[p]
  Op* sX = reinterpret_cast<Op*>(smem);  // intra: [m0 + 64][72] x_k[p0 + j]
  const ScanTile<Op> b(p);
  if (b.empty()) {
    wait_prior_stages();
    return;
  }
  const auto [c, h, g, m0, p0, t0, len, x, C, state_in] = b;
  const int warp = threadIdx.x >> 5, gl = (threadIdx.x & 31) >> 2, L = p.L;
  // C and D are inputs: loaded while stage (d) may still run; then h_in, cs and δ.
  issue_rows64(sC, C, p.c_st, len - m0, p.N);
  issue_scan_d(p, s_D, h, p0);
  wait_prior_stages();
  issue_rows64(sS, state_in + int64_t(p0) * p.N, p.N, p.P - p0, p.N);
  issue_scan_cs_delta(p, s_cs, s_delta, h, t0, len);
  cp_async_commit();
  const int mw = m0 + warp * 16, m_lo = mw + gl, m_hi = m_lo + 8;
  CausalWeights<Op> weights(p.cb + (int64_t(c) * p.G + g) * L * L, L, mw, len);
  cp_async_wait<0>();
  __syncthreads();

  // Inter-chunk term (twin: chain(C_m, h_in[p], N)), then ×exp(cs_m) per row (rows past
  // the chunk: 0, not stored).
  float acc[8][4] = {};
  mma_rows_cols<Op>(sC + warp * 16 * CS, sS, CS, (p.N + 15) / 16, acc);
  const float cs_lo = m_lo < len ? s_cs[m_lo] : 0.0f, cs_hi = m_hi < len ? s_cs[m_hi] : 0.0f;
  scale_rows(acc, m_lo < len ? ssmv::fm::exp(cs_lo) : 0.0f, m_hi < len ? ssmv::fm::exp(cs_hi) : 0.0f);
  __syncthreads();  // every warp is done with the inter tiles: the region takes x
  // x rows [0, m0 + 64), rows ≥ len zero.
  issue_x_rows(sX, x, p.x_st, 0, m0 + kTile, len, p.P - p0);
  cp_async_commit();

  // Intra-chunk term on the same accumulator: this warp's steps of CausalWeights.
  cp_async_wait<0>();
  __syncthreads();  // x rows landed
#pragma unroll 1
  for (int J = 0; J < weights.j_end; J += 2) {  // steps J and J + 1 from buffers 0 and 1
    uint32_t a[4];
    weights.template fragment<0>(J, s_cs, s_delta, cs_lo, cs_hi, a);
    mma_b_trans<Op>(a, sX, J, acc);
    if (J + 1 < weights.j_end) {
      weights.template fragment<1>(J + 1, s_cs, s_delta, cs_lo, cs_hi, a);
      mma_b_trans<Op>(a, sX, J + 1, acc);
    }
  }
  // Epilogue by the whole block: the accumulators through shared memory (fp32 [64][64] at
  // scan_acc_offset(m0), once every warp is done with the x rows there), then 8
  // consecutive columns per thread with 16-byte loads and stores where aligned.
  __syncthreads();
  float* s_acc = reinterpret_cast<float*>(smem + scan_acc_offset(m0));
  stage_accumulators(acc, s_acc);
  __syncthreads();
  store_outputs8<Op>(s_acc, [&](int m, int j0) { return sX + m * kRow64 + j0; }, p, t0, h, m0, p0, len, s_D);
}

}  // namespace ssmv::chunk_scan::gpu
