// The streamed SSU kernel (kernels.cu launches it for 16-bit states where it applies and
// launch.h Kernel picks it: by default for launches of at most one token per request):
// persistent warps that loop over work items with the next item's state in flight.
// Device code for kernels.cu only.
#pragma once

#include "fast/ssu/warp_rows.cuh"

namespace ssmv::ssu::warp {

// Work item: kRowsPerWarp·G rows of one (request, head), G = kStreamGroups (by default the
// G groups that ssu_kernel gives one warp), numbered with the row tile fastest, then the
// head, then the request; warp w of W takes items w, w + W, … (a persistent grid, W =
// resident warps), 32 at a time: lane l loads the indices of the batch's item l, so one
// round trip serves 32 items. In a batch the warp first streams its single-token items:
// while it computes item i, the raw state of the next one travels into the warp's other
// shared-memory stage by cp.async (each lane copies and reads back only its own chunks: no
// barrier) and that item's inputs travel into registers, so a warp's loads never wait on
// its arithmetic. Then the batch's other items (several tokens, or a pad slot) take the
// general path (advance_group). Per row the arithmetic is advance_single's, hence
// advance_group's: the same bits. 16-bit inputs only (B and C loaded as one aligned chunk
// per lane).

// Groups of kRowsPerWarp rows per item (arithmetic.h).
__host__ __device__ constexpr int kStreamGroups(Format f) {
  return f == Format::fp32 ? SSMV_SSU_STREAM_GROUPS_FP32 : SSMV_SSU_STREAM_GROUPS;
}

// The indices of one item, held by one lane of the warp for the batch.
struct ItemIndex {
  int h, tile;
  int32_t t0, t1, slot_in, slot_out;
  float dt_bias, A;
  __device__ __forceinline__ bool streamed(const Params& p) const { return t1 - t0 == 1 && slot_in != p.pad_slot_id; }
};

// Item `item`'s indices (load_head's loads; the fields head_from_lane cannot derive).
__device__ __forceinline__ ItemIndex load_index(const Params& p, int item, int tiles) {
  const int tile = item % tiles, h = (item / tiles) % p.H, r = item / tiles / p.H;
  const Head hd = load_head(p, r, h);
  return {h, tile, hd.t0, hd.t1, hd.slot_in, hd.slot_out, hd.dt_bias, hd.A};
}

// Lane k's item as a Head (every lane receives it), and its first row.
__device__ __forceinline__ Head head_from_lane(const Params& p, const ItemIndex& ix, int k, int& row0, int rows) {
  Head hd;
  hd.h = __shfl_sync(0xffffffffu, ix.h, k);
  row0 = __shfl_sync(0xffffffffu, ix.tile, k) * rows;
  hd.g = hd.h / (p.H / p.G);
  hd.t0 = __shfl_sync(0xffffffffu, ix.t0, k);
  hd.t1 = __shfl_sync(0xffffffffu, ix.t1, k);
  hd.slot_in = __shfl_sync(0xffffffffu, ix.slot_in, k);
  hd.slot_out = __shfl_sync(0xffffffffu, ix.slot_out, k);
  hd.pad = hd.slot_in == p.pad_slot_id;
  hd.has_bias = p.dt_bias != nullptr;
  hd.dt_bias = __shfl_sync(0xffffffffu, ix.dt_bias, k);
  hd.A = __shfl_sync(0xffffffffu, ix.A, k);
  return hd;
}

// One token's inputs for a lane, 16-bit formats, as raw bits: dt; the lane's J chunks of V
// elements of B and C (one aligned access each); x and z of the row it finishes in each of
// G groups (as TokenInputs).
template <int V, int J, int G>
struct TokenBits16 {
  using Ch = typename Raw<2 * V>::T;
  uint32_t dt;
  Ch b[J], c[J];
  uint32_t x[G], z[G];
};

template <int V>
__device__ __forceinline__ uint16_t element16(const typename Raw<2 * V>::T& chunk, int v) {
  union {
    typename Raw<2 * V>::T raw;
    uint16_t e[V];
  } u;
  u.raw = chunk;
  return u.e[v];
}

template <int V, int J, int L, int G>
__device__ __forceinline__ TokenBits16<V, J, G> load_token16(const Params& p, const Head& hd, int32_t t,
                                                             const Place<L>& pl, int row0) {
  using Ch = typename Raw<2 * V>::T;
  const LaneLayout lay{V, J, L};
  const uint16_t* const B =
      static_cast<const uint16_t*>(p.B) + int64_t(t) * p.B_stride_token + int64_t(hd.g) * p.B_stride_group;
  const uint16_t* const C =
      static_cast<const uint16_t*>(p.C) + int64_t(t) * p.C_stride_token + int64_t(hd.g) * p.C_stride_group;
  TokenBits16<V, J, G> in;
  in.dt = static_cast<const uint16_t*>(p.dt)[int64_t(t) * p.dt_stride_token + hd.h];
#pragma unroll
  for (int j = 0; j < J; ++j) {
    const int n = lane_element(lay, pl.u, j, 0);  // N % V == 0: the chunk is whole or absent
    in.b[j] = n < p.N ? *reinterpret_cast<const Ch*>(B + n) : Ch{};
    in.c[j] = n < p.N ? *reinterpret_cast<const Ch*>(C + n) : Ch{};
  }
  load_finisher_xz<L, G>(p, hd, t, pl, row0, in.x, in.z);
  return in;
}

// One item in a warp's hands: its indices, its D and its token's inputs.
template <int V, int J, int G>
struct StreamItem {
  Head hd;
  int row0;
  float D[G];
  TokenBits16<V, J, G> in;
};

// Issues every load of a single-token item: the raw state into `stage` by cp.async, the
// token's inputs and D into registers.
template <Format SF, int V, int J, int L, int G>
__device__ __forceinline__ StreamItem<V, J, G> begin_item(const Params& p, const Head& hd, int row0,
                                                          const Place<L>& pl, Chunk<SF, V> (*stage)[kWarp], int lane) {
  using E = typename StateBits<SF>::T;
  StreamItem<V, J, G> it;
  it.hd = hd;
  it.row0 = row0;
  const E* const src = static_cast<const E*>(p.state) + int64_t(hd.slot_in) * p.state_stride_slot +
                       int64_t(hd.h) * p.state_stride_head;
  for_each_chunk<V, J, L, G>(p, pl, row0, [&](int k, int j, int64_t offset) {
    cp_async<sizeof(Chunk<SF, V>)>(&stage[k * J + j][lane], src + offset);
  });
#pragma unroll
  for (int i = 0; i < G; ++i) it.D[i] = load_D(p, hd, pl, row0 + i * kRowsPerWarp);
  it.in = load_token16<V, J, L, G>(p, hd, hd.t0, pl, row0);
  return it;
}

// Computes a single-token item from its stage (its copies complete): its token's scalars,
// δ·B and C, then advance_raw_rows on the staged raw bits, as advance_single.
template <Format SF, int V, int J, int L, int G>
__device__ __forceinline__ void finish_streamed(const Params& p, const StreamItem<V, J, G>& it, const Place<L>& pl,
                                                const Chunk<SF, V> (*stage)[kWarp], int lane) {
  const LaneLayout lay{V, J, L};
  const Format f = p.input_format;
  const Head& hd = it.hd;
  const TokenScalars ts = token_scalars(decode16(f, uint16_t(it.in.dt)), hd.has_bias, hd.dt_bias, p.dt_softplus,
                                        p.dt_limit_lo, p.dt_limit_hi, hd.A);
  // δ·B[n] and C[n] at the lane's n (0 where n >= N), as token_bc.
  float dB[J * V], c[J * V];
#pragma unroll
  for (int j = 0; j < J; ++j) {
    const bool live = lane_element(lay, pl.u, j, 0) < p.N;
#pragma unroll
    for (int v = 0; v < V; ++v) {
      dB[j * V + v] = live ? scaled_B(ts.delta, decode16(f, element16<V>(it.in.b[j], v))) : 0.0f;
      c[j * V + v] = live ? decode16(f, element16<V>(it.in.c[j], v)) : 0.0f;
    }
  }
  advance_raw_rows<SF, V, J, L, G>(p, hd, pl, it.row0, ts, dB, c, it.in.x, it.in.z, it.D,
                                   [&](int k, int j) { return stage[k * J + j][lane]; });
}

// Launched only where launch_typed finds it eligible: 16-bit inputs with B and C aligned to V
// elements, an aligned pool with N a multiple of V, no per-token states.
template <Format SF, int V, int J, int L>
__global__ void __launch_bounds__(kWarpsPerBlock* kWarp, SSMV_SSU_STREAM_MIN_BLOCKS)
    ssu_stream_kernel(const __grid_constant__ Params p, int32_t items) {
  static_assert(J * V <= kMaxLaneElements);
  constexpr int G = kStreamGroups(SF), rows = kRowsPerWarp * G;
  using Ch = Chunk<SF, V>;
  // Dynamic shared memory, stream_smem_bytes: [warp][stage][chunk][lane], a lane's chunks
  // at consecutive addresses across lanes (conflict-free).
  extern __shared__ __align__(16) unsigned char smem[];
  using Stage = Ch[G * Place<L>::K * J][kWarp];
  Stage(*const stages)[2] = reinterpret_cast<Stage(*)[2]>(smem);
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  const Place<L> pl(lane);
  const int tiles = (p.P + rows - 1) / rows;
  const int W = gridDim.x * kWarpsPerBlock;
  const int w = blockIdx.x * kWarpsPerBlock + warp;
  int s = 0;  // the stage of the item being computed
  for (int base = w; base < items; base += kWarp * W) {
    // Batch: items base + l·W, l < 32; lane l holds item l's indices.
    const int mine = base + lane * W;
    const bool valid = mine < items;
    const ItemIndex ix = valid ? load_index(p, mine, tiles) : ItemIndex{};
    uint32_t todo = __ballot_sync(0xffffffffu, valid && ix.streamed(p));
    const uint32_t general = __ballot_sync(0xffffffffu, valid && !ix.streamed(p));
    if (todo != 0) {
      int row0 = 0;
      int k = __ffs(todo) - 1;
      todo &= todo - 1;
      StreamItem<V, J, G> cur = begin_item<SF, V, J, L, G>(p, head_from_lane(p, ix, k, row0, rows), row0, pl,
                                                            stages[warp][s], lane);
      cp_async_commit();
      for (;;) {
        const bool more = todo != 0;
        StreamItem<V, J, G> nxt{};
        if (more) {
          k = __ffs(todo) - 1;
          todo &= todo - 1;
          nxt = begin_item<SF, V, J, L, G>(p, head_from_lane(p, ix, k, row0, rows), row0, pl, stages[warp][s ^ 1],
                                           lane);
        }
        cp_async_commit();   // one group per item, empty after the batch's last
        cp_async_wait<1>();  // this lane's copies of cur landed (nxt's may fly)
        finish_streamed<SF, V, J, L, G>(p, cur, pl, stages[warp][s], lane);
        s ^= 1;
        if (!more) break;
        cur = nxt;
      }
    }
#pragma unroll 1
    for (uint32_t rest = general; rest != 0; rest &= rest - 1) {
      int row0 = 0;
      const Head hd = head_from_lane(p, ix, __ffs(rest) - 1, row0, rows);
      advance_groups_call<SF, V, J, L, G>(p, hd, pl, row0, true);
    }
  }
}

// The streamed kernel's dynamic shared memory, two stages per warp: 4 warps × 2 × 16 rows
// × 256 bytes = 32 KB for 16-bit states of N ≤ 128, 64 KB for N = 256.
template <Format SF, int V, int J, int L>
constexpr int stream_smem_bytes() {
  return kWarpsPerBlock * 2 * kStreamGroups(SF) * Place<L>::K * J * kWarp * int(sizeof(Chunk<SF, V>));
}

}  // namespace ssmv::ssu::warp
