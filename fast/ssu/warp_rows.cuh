// A warp's rows of one (request, head) in the SSU kernels (kernels.cu): where each lane
// sits, the loads of a token's inputs, the per-row arithmetic of arithmetic.h in the
// kernels' order, the row reductions and the finishing lanes. Device code for kernels.cu
// only (both of its kernels call these, so both compute the same bits as the twin).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "fast/ssu/arithmetic.h"
#include "fast/ssu/params.h"
#include "fast/ssu/state_bits.cuh"

namespace ssmv::ssu::warp {

using namespace state_bits;

// Groups of kRowsPerWarp rows a warp owns (arithmetic.h).
__host__ __device__ constexpr int kGroups(Format f) { return f == Format::fp32 ? 1 : kGroups16; }

// A lane's place in its warp: a row is split among the L lanes of lane_layout, so a warp
// instruction covers Q = 32/L rows (1 or 2) and a lane holds K = kRowsPerWarp/Q rows of a
// group of kRowsPerWarp rows. Lane q·L + u (q < Q, u < L) holds rows row0 + k·Q + q
// (k < K) at the elements lane_element(lay, u, j, v).
// Finishing: a lane's M partial sums (M = G·K: the K rows of each of G groups, value
// m = i·K + k for row k of group i) go through reduce_rows, after which lane q·L + u holds
// the full sum of value u / (L/M); the lanes with u % (L/M) == 0 finish those rows, one lane
// per row.
template <int L>
struct Place {
  static constexpr int Q = kWarp / L;
  static constexpr int K = kRowsPerWarp / Q;
  static_assert(kRowsPerWarp % Q == 0 && K <= L, "a lane finishes at most one of a group's rows");
  int q, u;
  __device__ __forceinline__ explicit Place(int lane) : q(lane / L), u(lane % L) {}
  __device__ __forceinline__ int row(int row0, int k) const { return row0 + k * Q + q; }
  // Row of value m = i·K + k: row k of the group starting at row0 + i·kRowsPerWarp.
  __device__ __forceinline__ int value_row(int row0, int m) const { return row(row0 + (m / K) * kRowsPerWarp, m % K); }
  template <int M>
  __device__ __forceinline__ bool finishes() const { return u % (L / M) == 0; }
  template <int M>
  __device__ __forceinline__ int finished_row(int row0) const { return value_row(row0, u / (L / M)); }
  // The lane finishing value m (it holds x of that row: load_finisher_xz).
  template <int M>
  __device__ __forceinline__ int finisher_lane(int m) const { return q * L + m * (L / M); }
};

// What every warp of one (request, head) reads once.
struct Head {
  int h, g;
  int32_t t0, t1, slot_in, slot_out;
  bool pad, has_bias;
  float dt_bias, A;
};

__device__ __forceinline__ Head load_head(const Params& p, int r, int h) {
  Head hd;
  hd.h = h;
  hd.g = h / (p.H / p.G);
  hd.t0 = p.cu_seqlens[r];
  hd.t1 = p.cu_seqlens[r + 1];
  hd.slot_in = p.slot_in[r];
  hd.slot_out = p.slot_out != nullptr ? p.slot_out[r] : hd.slot_in;
  hd.pad = hd.slot_in == p.pad_slot_id;
  hd.has_bias = p.dt_bias != nullptr;
  hd.dt_bias = hd.has_bias ? p.dt_bias[h] : 0.0f;
  hd.A = p.A[h];
  return hd;
}

// Stores the lane's rows (Place) ∩ [0, P) of head h into pool slot `slot`, rounded to the
// state format.
template <Format SF, int V, int J, int L>
__device__ __forceinline__ void store_rows(const Params& p, int32_t slot, int h, int row0, const Place<L>& pl,
                                           bool vector, const float (&s)[Place<L>::K][J * V]) {
  using E = typename StateBits<SF>::T;
  const LaneLayout lay{V, J, L};
  E* const base = static_cast<E*>(p.state) + int64_t(slot) * p.state_stride_slot + int64_t(h) * p.state_stride_head;
#pragma unroll
  for (int k = 0; k < Place<L>::K; ++k) {
    const int row = pl.row(row0, k);
#pragma unroll
    for (int j = 0; j < J; ++j) {
      const int n = lane_element(lay, pl.u, j, 0);
      if (row < p.P && n < p.N) {
        store_state<SF, V>(base + int64_t(row) * p.state_stride_p, n, p.N, vector, &s[k][j * V]);
      }
    }
  }
}

// The inputs of one token that a lane uses, as raw bits (load_raw): dt, B and C at the
// lane's n; x and z of the row the lane finishes in each of G groups, if it finishes one
// (the other lanes get x by shuffle: one register instead of K while loads are in flight).
template <int M, int G>
struct TokenInputs {
  uint32_t dt, b[M], c[M], x[G], z[G];
};

// x and z of token t at the row the lane finishes in each of G groups of rows starting at
// row0 + i·kRowsPerWarp, as raw bits (0 if it finishes none, or no z).
template <int L, int G>
__device__ __forceinline__ void load_finisher_xz(const Params& p, const Head& hd, int32_t t, const Place<L>& pl,
                                                 int row0, uint32_t (&x)[G], uint32_t (&z)[G]) {
#pragma unroll
  for (int i = 0; i < G; ++i) {
    const int my_row = pl.template finished_row<Place<L>::K>(row0 + i * kRowsPerWarp);
    const bool finisher = pl.template finishes<Place<L>::K>() && my_row < p.P;
    const int64_t xi = int64_t(t) * p.x_stride_token + int64_t(hd.h) * p.x_stride_head + my_row;
    const int64_t zi = int64_t(t) * p.z_stride_token + int64_t(hd.h) * p.z_stride_head + my_row;
    x[i] = finisher ? load_raw(p.input_format, p.x, xi) : 0;
    z[i] = finisher && p.z != nullptr ? load_raw(p.input_format, p.z, zi) : 0;
  }
}

// Issues every load of token t for the groups of rows starting at row0 + i·kRowsPerWarp
// (i < G) and waits on none: one memory round trip per token (the first token's loads
// travel with the state's) instead of one per dependent step.
template <int V, int J, int L, int G>
__device__ __forceinline__ TokenInputs<J * V, G> load_token(const Params& p, const Head& hd, int32_t t,
                                                            const Place<L>& pl, int row0) {
  const Format f = p.input_format;
  const LaneLayout lay{V, J, L};
  TokenInputs<J * V, G> in;
  in.dt = load_raw(f, p.dt, int64_t(t) * p.dt_stride_token + hd.h);
#pragma unroll
  for (int j = 0; j < J; ++j) {
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const int n = lane_element(lay, pl.u, j, v);
      const bool live = n < p.N;
      const int64_t bc = int64_t(t) * p.B_stride_token + int64_t(hd.g) * p.B_stride_group + n;
      const int64_t cc = int64_t(t) * p.C_stride_token + int64_t(hd.g) * p.C_stride_group + n;
      in.b[j * V + v] = live ? load_raw(f, p.B, bc) : 0;
      in.c[j * V + v] = live ? load_raw(f, p.C, cc) : 0;
    }
  }
  load_finisher_xz<L, G>(p, hd, t, pl, row0, in.x, in.z);
  return in;
}

// δ·B[n] and C[n] at the lane's n (0 where n >= N), decoded.
template <int V, int J, int L, int G>
__device__ __forceinline__ void token_bc(const Params& p, const TokenInputs<J * V, G>& in, float delta,
                                         const Place<L>& pl, float (&dB)[J * V], float (&c)[J * V]) {
  const LaneLayout lay{V, J, L};
#pragma unroll
  for (int e = 0; e < J * V; ++e) {
    const bool live = lane_element(lay, pl.u, e / V, e % V) < p.N;
    dB[e] = live ? scaled_B(delta, decode_raw(p.input_format, in.b[e])) : 0.0f;
    c[e] = live ? decode_raw(p.input_format, in.c[e]) : 0.0f;
  }
}

// One row's update, S = fma(dB, x, a·S), and the lane's fma chain for Σ C·S over its
// elements in layout order (arithmetic.h), chunk j only where it exists (Whole: the caller
// knows every chunk of the lane exists, J·L·V = N).
template <int V, int J, int L, bool Whole = false>
__device__ __forceinline__ float advance_row(const Params& p, const Place<L>& pl, float decay, float x,
                                             const float (&dB)[J * V], const float (&c)[J * V], float (&s)[J * V]) {
  const LaneLayout lay{V, J, L};
  float acc = 0.0f;
#pragma unroll
  for (int j = 0; j < J; ++j) {
    const int n0 = lane_element(lay, pl.u, j, 0);
    if (Whole || n0 + V <= p.N) {  // the whole chunk exists
#pragma unroll
      for (int v = 0; v < V; ++v) {
        s[j * V + v] = update_state(s[j * V + v], decay, dB[j * V + v], x);
        acc = accumulate(acc, c[j * V + v], s[j * V + v]);
      }
    } else {
#pragma unroll
      for (int v = 0; v < V; ++v) {
        if (n0 + v < p.N) {
          s[j * V + v] = update_state(s[j * V + v], decay, dB[j * V + v], x);
          acc = accumulate(acc, c[j * V + v], s[j * V + v]);
        }
      }
    }
  }
  return acc;
}

// The sums of a lane's M values over the L lanes of its row (lane_layout), with the bits
// of an xor-butterfly (offsets L/2, ..., 2, 1) run on each value: at offset o lanes u and
// u ^ o both form the same fp32 sum of their two partials (addition commutes exactly), so
// each level may hand half of a lane's values to its partner and keep the other half —
// lanes with u & o keep the upper half — instead of summing all of them on both lanes
// (reduce-scatter). After log2 M such levels a lane holds one value, m = u / (L/M), and
// the remaining levels are plain butterflies: M − 1 + log2(L/M) shuffles instead of
// M·log2 L (8 rows over 32 lanes: 9 instead of 40).
template <int L, int M>
__device__ __forceinline__ float reduce_rows(const Place<L>& pl, float (&sum)[M]) {
  static_assert(M >= 1 && (M & (M - 1)) == 0 && M <= L, "M a power of two, at most one value per lane");
  int offset = L / 2;
#pragma unroll
  for (int m = M; m > 1; m /= 2, offset /= 2) {
    const bool upper = (pl.u & offset) != 0;
#pragma unroll
    for (int i = 0; i < m / 2; ++i) {
      const float keep = upper ? sum[i + m / 2] : sum[i];
      const float send = upper ? sum[i] : sum[i + m / 2];
      sum[i] = keep + __shfl_xor_sync(0xffffffffu, send, offset);
    }
  }
#pragma unroll
  for (; offset >= 1; offset /= 2) sum[0] = sum[0] + __shfl_xor_sync(0xffffffffu, sum[0], offset);
  return sum[0];
}

// The finishing lane of row my_row: y = fma(D, x, Σ), gated by z (if any), stored
// (arithmetic.h).
__device__ __forceinline__ void finish_row(const Params& p, const Head& hd, int32_t t, int my_row, float sum, float D,
                                           float x, float z) {
  const float y = fm::output_epilogue(sum, p.d_mode != DMode::none, D, x, p.z != nullptr, z);
  store_any(p.output_format, p.y, int64_t(t) * p.y_stride_token + int64_t(hd.h) * p.y_stride_head + my_row, y);
}

// D of head h, row `row` < P (0 without D).
__device__ __forceinline__ float D_of(const Params& p, int h, int row) {
  if (p.d_mode == DMode::none) return 0.0f;
  return p.d_mode == DMode::per_head ? p.D[h] : p.D[int64_t(h) * p.D_stride_head + row];
}

// D of the row a lane finishes in the group starting at row0 (Place; 0 if none or no D).
template <int L>
__device__ __forceinline__ float load_D(const Params& p, const Head& hd, const Place<L>& pl, int row0) {
  constexpr int K = Place<L>::K;
  const int my_row = pl.template finished_row<K>(row0);
  return pl.template finishes<K>() && my_row < p.P ? D_of(p, hd.h, my_row) : 0.0f;
}

// Loads the lane's rows (Place) of the group starting at row0 from slot_in into fp32
// registers (zeros for a pad and outside [0, P) × [0, N)).
template <Format SF, int V, int J, int L>
__device__ __forceinline__ void load_rows(const Params& p, const Head& hd, const Place<L>& pl, int row0, bool vector,
                                          float (&s)[Place<L>::K][J * V]) {
  using E = typename StateBits<SF>::T;
  const LaneLayout lay{V, J, L};
  const E* const src = static_cast<const E*>(p.state) + int64_t(hd.slot_in) * p.state_stride_slot +
                       int64_t(hd.h) * p.state_stride_head;
#pragma unroll
  for (int k = 0; k < Place<L>::K; ++k) {
    const int row = pl.row(row0, k);
#pragma unroll
    for (int j = 0; j < J; ++j) {
      const int n = lane_element(lay, pl.u, j, 0);
      if (!hd.pad && row < p.P && n < p.N) {
        load_state<SF, V>(src + int64_t(row) * p.state_stride_p, n, p.N, vector, &s[k][j * V]);
      } else {
#pragma unroll
        for (int v = 0; v < V; ++v) s[k][j * V + v] = 0.0f;
      }
    }
  }
}

// The general path, for the group of kRowsPerWarp rows starting at row0: the state in
// fp32 registers across the request's tokens, per-token states, pads, unaligned pools.
template <Format SF, int V, int J, int L>
__device__ __forceinline__ void advance_group(const Params& p, const Head& hd, const Place<L>& pl, int row0,
                                              bool vector) {
  constexpr int K = Place<L>::K;
  // Every load the first token needs goes out before the state's loads and before any
  // arithmetic: the lane's D, the token's inputs.
  const float D = load_D(p, hd, pl, row0);
  TokenInputs<J * V, 1> in{};
  if (hd.t0 < hd.t1) in = load_token<V, J, L, 1>(p, hd, hd.t0, pl, row0);

  float s[K][J * V];
  load_rows<SF, V, J, L>(p, hd, pl, row0, vector, s);

  const int my_row = pl.template finished_row<K>(row0);
  const bool finisher = pl.template finishes<K>() && my_row < p.P;
  for (int32_t t = hd.t0; t < hd.t1; ++t) {
    if (t != hd.t0) in = load_token<V, J, L, 1>(p, hd, t, pl, row0);
    const TokenScalars ts =
        token_scalars(decode_raw(p.input_format, in.dt), hd.has_bias, hd.dt_bias, p.dt_softplus, p.dt_limit_lo,
                      p.dt_limit_hi, hd.A);
    float dB[J * V], c[J * V];
    token_bc<V, J, L, 1>(p, in, ts.delta, pl, dB, c);
    // All rows' updates and lane partial sums first (independent chains), then their
    // reduction, after which each row's finishing lane (Place) holds its sum: the rows'
    // sigmoids and stores run side by side on different lanes instead of one after another.
    const float my_x = decode_raw(p.input_format, in.x[0]);  // +0 for rows >= P
    float sum[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const float x = __shfl_sync(0xffffffffu, my_x, pl.template finisher_lane<K>(k));
      sum[k] = pl.row(row0, k) < p.P ? advance_row<V, J, L>(p, pl, ts.decay, x, dB, c, s[k]) : 0.0f;
    }
    const float my_sum = reduce_rows<L, K>(pl, sum);
    if (finisher) finish_row(p, hd, t, my_row, my_sum, D, my_x, decode_raw(p.input_format, in.z[0]));
    if (!hd.pad && p.token_state_slots != nullptr && p.token_state_slots[t] != p.pad_slot_id) {
      store_rows<SF, V, J, L>(p, p.token_state_slots[t], hd.h, row0, pl, vector, s);
    }
  }
  if (!hd.pad) store_rows<SF, V, J, L>(p, hd.slot_out, hd.h, row0, pl, vector, s);  // a pad writes no state
}

// advance_group out of line: beside advance_single's registers, the inlined general path
// spilled (268 bytes per thread at 80 registers for bf16, N = 128); called, it keeps its
// own registers and spills only in calls the single-token path does not take.
template <Format SF, int V, int J, int L>
__device__ __noinline__ void advance_group_call(const Params& p, const Head& hd, const Place<L>& pl, int row0,
                                                bool vector) {
  advance_group<SF, V, J, L>(p, hd, pl, row0, vector);
}

// The G groups of kRowsPerWarp rows starting at row0 on the general path, one after the
// other (the groups that exist: row < P).
template <Format SF, int V, int J, int L, int G>
__device__ __forceinline__ void advance_groups_call(const Params& p, const Head& hd, const Place<L>& pl, int row0,
                                                    bool vector) {
#pragma unroll 1
  for (int i = 0; i < G; ++i) {
    if (row0 + i * kRowsPerWarp < p.P) advance_group_call<SF, V, J, L>(p, hd, pl, row0 + i * kRowsPerWarp, vector);
  }
}

// f(k, j, offset) for each state chunk of the lane's rows k < G·K (Place order) of the G
// groups starting at row0 + i·kRowsPerWarp that exist (row < P, n < N): chunk j of row
// `row` at offset row·state_stride_p + n from the start of a (slot, head) block.
template <int V, int J, int L, int G, class F>
__device__ __forceinline__ void for_each_chunk(const Params& p, const Place<L>& pl, int row0, F f) {
  constexpr int K = Place<L>::K;
  const LaneLayout lay{V, J, L};
#pragma unroll
  for (int k = 0; k < G * K; ++k) {
    const int row = pl.row(row0 + (k / K) * kRowsPerWarp, k % K);
#pragma unroll
    for (int j = 0; j < J; ++j) {
      const int n = lane_element(lay, pl.u, j, 0);
      if (row < p.P && n < p.N) f(k, j, int64_t(row) * p.state_stride_p + n);
    }
  }
}

// G groups of rows starting at row0 + i·kRowsPerWarp, from raw state chunks (raw(k, j):
// chunk j of the lane's row k < G·K, in Place order): per group, each row decoded,
// advanced (advance_row), re-encoded and stored to slot_out, then the group's
// reduction (reduce_rows) and its finishing lanes (x, z: the raw bits of the row a lane finishes,
// as load_finisher_xz). Per row the arithmetic is advance_group's: the same bits.
// Whole (whole_rows): every row of the G groups is below P and every chunk of the lane below
// N, so no row or chunk is checked, and the lane's rows are stored through one pointer that
// steps by Q rows (rows row0 + q + m·Q, m = i·K + k) instead of a 64-bit product per row.
// Callers use advance_raw_rows, which picks Whole.
template <Format SF, int V, int J, int L, int G, bool Whole, class RawChunk>
__device__ __forceinline__ void advance_raw_rows_as(const Params& p, const Head& hd, const Place<L>& pl, int row0,
                                                 const TokenScalars& ts, const float (&dB)[J * V],
                                                 const float (&c)[J * V], const uint32_t (&x)[G],
                                                 const uint32_t (&z)[G], const float (&D)[G], RawChunk raw) {
  using E = typename StateBits<SF>::T;
  constexpr int K = Place<L>::K;
  const LaneLayout lay{V, J, L};
  E* const dst = static_cast<E*>(p.state) + int64_t(hd.slot_out) * p.state_stride_slot +
                 int64_t(hd.h) * p.state_stride_head;
  E* lane_row = dst + int64_t(pl.row(row0, 0)) * p.state_stride_p + lane_element(lay, pl.u, 0, 0);  // Whole
  const int64_t row_step = int64_t(Place<L>::Q) * p.state_stride_p;
  // Group by group: its rows' updates and lane chains, their reduction, its finishing
  // lanes (the reduction of one group overlaps the next group's arithmetic).
#pragma unroll
  for (int i = 0; i < G; ++i) {
    const int gi_row0 = row0 + i * kRowsPerWarp;
    const float my_x = decode_raw(p.input_format, x[i]);  // +0 for rows >= P
    float sum[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const float xk = __shfl_sync(0xffffffffu, my_x, pl.template finisher_lane<K>(k));
      sum[k] = 0.0f;
      const int row = pl.row(gi_row0, k);
      if (Whole || row < p.P) {
        float s[J * V];
#pragma unroll
        for (int j = 0; j < J; ++j) {
          if (Whole || lane_element(lay, pl.u, j, 0) < p.N) {
            unpack<SF, V>(raw(i * K + k, j), &s[j * V]);
          } else {
#pragma unroll
            for (int v = 0; v < V; ++v) s[j * V + v] = 0.0f;
          }
        }
        sum[k] = advance_row<V, J, L, Whole>(p, pl, ts.decay, xk, dB, c, s);
#pragma unroll
        for (int j = 0; j < J; ++j) {
          const int n = lane_element(lay, pl.u, j, 0);
          if constexpr (Whole) {
            *reinterpret_cast<Chunk<SF, V>*>(lane_row + j * L * V) = pack<SF, V>(&s[j * V]);
          } else if (n < p.N) {
            *reinterpret_cast<Chunk<SF, V>*>(dst + int64_t(row) * p.state_stride_p + n) = pack<SF, V>(&s[j * V]);
          }
        }
      }
      lane_row += row_step;
    }
    const float my_sum = reduce_rows<L, K>(pl, sum);
    const int my_row = pl.template finished_row<K>(gi_row0);
    if (pl.template finishes<K>() && (Whole || my_row < p.P)) {
      finish_row(p, hd, hd.t0, my_row, my_sum, D[i], my_x, decode_raw(p.input_format, z[i]));
    }
  }
}

// Whether advance_raw_rows_as may take its Whole path for the G groups from row0.
template <int V, int J, int L, int G>
__device__ __forceinline__ bool whole_rows(const Params& p, int row0) {
  return row0 + G * kRowsPerWarp <= p.P && J * L * V == p.N;
}

// advance_raw_rows_as, on its Whole path where whole_rows holds (every production head).
template <Format SF, int V, int J, int L, int G, class RawChunk>
__device__ __forceinline__ void advance_raw_rows(const Params& p, const Head& hd, const Place<L>& pl, int row0,
                                                 const TokenScalars& ts, const float (&dB)[J * V],
                                                 const float (&c)[J * V], const uint32_t (&x)[G],
                                                 const uint32_t (&z)[G], const float (&D)[G], RawChunk raw) {
  if (whole_rows<V, J, L, G>(p, row0)) {
    advance_raw_rows_as<SF, V, J, L, G, true>(p, hd, pl, row0, ts, dB, c, x, z, D, raw);
  } else {
    advance_raw_rows_as<SF, V, J, L, G, false>(p, hd, pl, row0, ts, dB, c, x, z, D, raw);
  }
}

}  // namespace ssmv::ssu::warp
