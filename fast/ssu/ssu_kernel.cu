// The SSU (selective_state_update) CUDA kernel for sm_90.
//
// Grid (R·ceil(P/kRowsPerBlock), H), 128 threads (ssu_math.h: 4 warps of kRowsPerWarp
// = 8 rows, registers capped for 6 resident blocks per SM): block (r·tiles + tile, h)
// owns rows [kRowsPerBlock·tile, +kRowsPerBlock) of request r, head h; warp w owns
// kRowsPerWarp consecutive rows and keeps their state in registers, in fp32, across the
// request's tokens. A row is split among L lanes (ssu_math.h lane_layout: 32, or 16 so
// that a warp instruction covers two rows, e.g. a bf16 row of N = 128 as 16 lanes × one
// 16-byte access); lane u of a row owns n = (j·L + u)·V + v and loads them with one
// vector access of V elements per chunk where the pool is aligned for it (Place below).
// Per token: δ and a = exp(δA) (every thread, identical), dB = δ·B[n] and C[n] for the
// lane's n, then per row S = fma(dB, x, a·S), a per-lane fma chain over n for Σ C·S and
// an xor-butterfly over the row's L lanes; one lane per row finishes and stores y.
// Memory latency: a warp's only dependent loads are the request's indices (cu_seqlens,
// slots) before everything else; the per-head scalars, the first token's inputs and the
// state then go out together, as raw bits, before any arithmetic waits on one of them
// (each later token: one more round trip for its inputs), instead of dt, then B and C,
// then x, then z, each after the arithmetic before it.
// The state is rounded to the state format (cvt.rn) only when stored: per-token states
// after their token, the final state after the last token. No shared memory, no atomics:
// every output element is computed by one warp in a fixed order.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "fast/common/cuda_check.h"
#include "fast/ssu/ssu_check.h"
#include "fast/ssu/ssu_launch.h"
#include "fast/ssu/ssu_math.h"

namespace ssmv::ssu {
namespace {

// Format conversions in hardware: decoding is exact; encoding is cvt.rn (round to
// nearest even), the same function as spec/format.h round_nearest_even for non-NaN values.
__device__ __forceinline__ float decode16(Format f, uint16_t b) {
  return f == Format::bf16 ? __uint_as_float(uint32_t(b) << 16) : __half2float(__ushort_as_half(b));
}

__device__ __forceinline__ uint16_t encode16(Format f, float v) {
  return f == Format::bf16 ? __bfloat16_as_ushort(__float2bfloat16_rn(v)) : __half_as_ushort(__float2half_rn(v));
}

// Raw bits of one input element (fp32 bits, or a 16-bit pattern zero-extended), decoded
// at first use: a token's loads are all issued before any arithmetic waits on one.
__device__ __forceinline__ uint32_t load_raw(Format f, const void* base, int64_t i) {
  if (f == Format::fp32) return static_cast<const uint32_t*>(base)[i];
  return static_cast<const uint16_t*>(base)[i];
}

__device__ __forceinline__ float decode_raw(Format f, uint32_t b) {
  return f == Format::fp32 ? __uint_as_float(b) : decode16(f, uint16_t(b));
}

__device__ __forceinline__ void store_any(Format f, void* base, int64_t i, float v) {
  if (f == Format::fp32) {
    static_cast<float*>(base)[i] = v;
  } else {
    static_cast<uint16_t*>(base)[i] = encode16(f, v);
  }
}

// Raw storage of one state element and of V of them in one aligned access.
template <Format SF>
struct StateBits {
  using T = uint16_t;
};
template <>
struct StateBits<Format::fp32> {
  using T = uint32_t;
};

template <int Bytes>
struct Raw;
template <>
struct Raw<2> {
  using T = uint16_t;
};
template <>
struct Raw<4> {
  using T = uint32_t;
};
template <>
struct Raw<8> {
  using T = uint2;
};
template <>
struct Raw<16> {
  using T = uint4;
};

template <Format SF>
__device__ __forceinline__ float state_to_float(typename StateBits<SF>::T b) {
  if constexpr (SF == Format::fp32) {
    return __uint_as_float(b);
  } else {
    return decode16(SF, b);
  }
}

template <Format SF>
__device__ __forceinline__ typename StateBits<SF>::T state_from_float(float v) {
  if constexpr (SF == Format::fp32) {
    return __float_as_uint(v);
  } else {
    return encode16(SF, v);
  }
}

// Loads V elements [n, n+V) of a state row into out[0..V): one access when `vector`
// (the caller guarantees alignment and n + V <= N), element by element otherwise.
template <Format SF, int V>
__device__ __forceinline__ void load_state(const typename StateBits<SF>::T* row, int n, int N, bool vector,
                                           float* out) {
  using E = typename StateBits<SF>::T;
  if (vector && n + V <= N) {
    union {
      typename Raw<V * sizeof(E)>::T raw;
      E e[V];
    } u;
    u.raw = *reinterpret_cast<const typename Raw<V * sizeof(E)>::T*>(row + n);
#pragma unroll
    for (int v = 0; v < V; ++v) out[v] = state_to_float<SF>(u.e[v]);
  } else {
#pragma unroll
    for (int v = 0; v < V; ++v) out[v] = n + v < N ? state_to_float<SF>(row[n + v]) : 0.0f;
  }
}

template <Format SF, int V>
__device__ __forceinline__ void store_state(typename StateBits<SF>::T* row, int n, int N, bool vector,
                                            const float* in) {
  using E = typename StateBits<SF>::T;
  if (vector && n + V <= N) {
    union {
      typename Raw<V * sizeof(E)>::T raw;
      E e[V];
    } u;
#pragma unroll
    for (int v = 0; v < V; ++v) u.e[v] = state_from_float<SF>(in[v]);
    *reinterpret_cast<typename Raw<V * sizeof(E)>::T*>(row + n) = u.raw;
  } else {
#pragma unroll
    for (int v = 0; v < V; ++v)
      if (n + v < N) row[n + v] = state_from_float<SF>(in[v]);
  }
}

// A lane's place in its warp: a row is split among the L lanes of lane_layout, so a warp
// instruction covers Q = 32/L rows (1 or 2) and a lane holds K = kRowsPerWarp/Q rows.
// Lane q·L + u (q < Q, u < L) holds rows row0 + k·Q + q (k < K) at the elements
// lane_element(lay, u, j, v), and lane q·L + k finishes row row0 + k·Q + q.
template <int L>
struct Place {
  static constexpr int Q = kWarp / L;
  static constexpr int K = kRowsPerWarp / Q;
  static_assert(kRowsPerWarp % Q == 0 && K <= L, "lane q·L + k finishes row k·Q + q");
  int q, u;
  __device__ __forceinline__ explicit Place(int lane) : q(lane / L), u(lane % L) {}
  __device__ __forceinline__ int row(int row0, int k) const { return row0 + k * Q + q; }
};

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
      if (row < p.P && n < p.N) store_state<SF, V>(base + int64_t(row) * p.state_stride_p, n, p.N, vector, &s[k][j * V]);
    }
  }
}

// The inputs of one token that a lane uses, as raw bits (load_raw): dt, B and C at the
// lane's n; x and z of the row the lane finishes, if it finishes one (the other lanes get
// x by shuffle: one register instead of K while the loads are in flight).
template <int M>
struct TokenInputs {
  uint32_t dt, b[M], c[M], x, z;
};

// Issues every load of token t and waits on none: one memory round trip per token (the
// first token's loads travel with the state's) instead of one per dependent step.
template <int V, int J, int L>
__device__ __forceinline__ TokenInputs<J * V> load_token(const Params& p, int32_t t, int h, int g, const Place<L>& pl,
                                                         bool finisher, int my_row) {
  const Format f = p.input_format;
  const LaneLayout lay{V, J, L};
  TokenInputs<J * V> in;
  in.dt = load_raw(f, p.dt, int64_t(t) * p.dt_stride_token + h);
#pragma unroll
  for (int j = 0; j < J; ++j) {
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const int n = lane_element(lay, pl.u, j, v);
      const bool live = n < p.N;
      in.b[j * V + v] = live ? load_raw(f, p.B, int64_t(t) * p.B_stride_token + int64_t(g) * p.B_stride_group + n) : 0;
      in.c[j * V + v] = live ? load_raw(f, p.C, int64_t(t) * p.C_stride_token + int64_t(g) * p.C_stride_group + n) : 0;
    }
  }
  in.x = finisher ? load_raw(f, p.x, int64_t(t) * p.x_stride_token + int64_t(h) * p.x_stride_head + my_row) : 0;
  in.z = finisher && p.z != nullptr
             ? load_raw(f, p.z, int64_t(t) * p.z_stride_token + int64_t(h) * p.z_stride_head + my_row)
             : 0;
  return in;
}

// J: the chunks per lane (1 or 2) and L: the lanes per row (32 or 16), from lane_layout,
// fixed at compile time so that a lane's arrays hold exactly J·V elements per row in
// registers.
template <Format SF, int V, int J, int L>
__global__ void __launch_bounds__(kWarpsPerBlock* kWarp, SSMV_SSU_MIN_BLOCKS) ssu_kernel(const Params p, bool vector) {
  using E = typename StateBits<SF>::T;
  constexpr int K = Place<L>::K;
  static_assert(J * V <= kMaxLaneElements);
  const int tiles = (p.P + kRowsPerBlock - 1) / kRowsPerBlock;
  const int r = blockIdx.x / tiles;
  const int tile = blockIdx.x % tiles;
  const int h = blockIdx.y;
  const int warp = threadIdx.x / kWarp;
  const Place<L> pl(threadIdx.x % kWarp);
  const int row0 = tile * kRowsPerBlock + warp * kRowsPerWarp;
  if (row0 >= p.P) return;  // the whole warp: no row of this warp exists
  const int g = h / (p.H / p.G);
  const int32_t t0 = p.cu_seqlens[r], t1 = p.cu_seqlens[r + 1];
  const int32_t slot_in = p.slot_in[r];
  const int32_t slot_out = p.slot_out != nullptr ? p.slot_out[r] : slot_in;
  const bool pad = slot_in == p.pad_slot_id;
  const LaneLayout lay{V, J, L};
  E* const pool = static_cast<E*>(p.state);
  const int64_t head_offset = int64_t(h) * p.state_stride_head;

  // Every load the first token needs goes out before the state's loads and before any
  // arithmetic: the per-head scalars, the lane's D, the token's inputs.
  const bool has_bias = p.dt_bias != nullptr;
  const float dt_bias = has_bias ? p.dt_bias[h] : 0.0f;
  const float A = p.A[h];
  const int my_row = pl.row(row0, pl.u);  // the row this lane finishes if u < K
  const bool finisher = pl.u < K && my_row < p.P;
  const bool has_D = p.d_mode != DMode::none;
  const float D = !finisher || !has_D            ? 0.0f
                  : p.d_mode == DMode::per_head ? p.D[h]
                                                : p.D[int64_t(h) * p.D_stride_head + my_row];
  TokenInputs<J * V> in{};
  if (t0 < t1) in = load_token<V, J, L>(p, t0, h, g, pl, finisher, my_row);

  float s[K][J * V];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int row = pl.row(row0, k);
#pragma unroll
    for (int j = 0; j < J; ++j) {
      const int n = lane_element(lay, pl.u, j, 0);
      if (!pad && row < p.P && n < p.N) {
        const E* src = pool + int64_t(slot_in) * p.state_stride_slot + head_offset + int64_t(row) * p.state_stride_p;
        load_state<SF, V>(src, n, p.N, vector, &s[k][j * V]);
      } else {
#pragma unroll
        for (int v = 0; v < V; ++v) s[k][j * V + v] = 0.0f;
      }
    }
  }

  const Format f = p.input_format;
  for (int32_t t = t0; t < t1; ++t) {
    if (t != t0) in = load_token<V, J, L>(p, t, h, g, pl, finisher, my_row);
    const TokenScalars ts =
        token_scalars(decode_raw(f, in.dt), has_bias, dt_bias, p.dt_softplus, p.dt_limit_lo, p.dt_limit_hi, A);
    float dB[J * V], c[J * V];
#pragma unroll
    for (int e = 0; e < J * V; ++e) {
      const bool live = lane_element(lay, pl.u, e / V, e % V) < p.N;
      dB[e] = live ? scaled_B(ts.delta, decode_raw(f, in.b[e])) : 0.0f;
      c[e] = live ? decode_raw(f, in.c[e]) : 0.0f;
    }
    // All rows' updates and lane partial sums first (independent chains), then their
    // butterflies interleaved, then lane q·L + k finishes row k·Q + q: the rows' sigmoids
    // and stores run side by side on different lanes instead of one after another.
    // Per row the operations and their order are the ones ssu_math.h states.
    const float my_x = decode_raw(f, in.x);  // +0 for rows >= P
    float xs[K], sum[K];
#pragma unroll
    for (int k = 0; k < K; ++k) xs[k] = __shfl_sync(0xffffffffu, my_x, pl.q * L + k);
#pragma unroll
    for (int k = 0; k < K; ++k) {
      float acc = 0.0f;
      if (pl.row(row0, k) < p.P) {  // uniform over the row's L lanes
#pragma unroll
        for (int j = 0; j < J; ++j) {
          const int n0 = lane_element(lay, pl.u, j, 0);
          if (n0 + V <= p.N) {  // the whole chunk exists
#pragma unroll
            for (int v = 0; v < V; ++v) {
              s[k][j * V + v] = update_state(s[k][j * V + v], ts.decay, dB[j * V + v], xs[k]);
              acc = accumulate(acc, c[j * V + v], s[k][j * V + v]);
            }
          } else {
#pragma unroll
            for (int v = 0; v < V; ++v) {
              if (n0 + v < p.N) {
                s[k][j * V + v] = update_state(s[k][j * V + v], ts.decay, dB[j * V + v], xs[k]);
                acc = accumulate(acc, c[j * V + v], s[k][j * V + v]);
              }
            }
          }
        }
      }
      sum[k] = acc;
    }
    // Offsets below L stay inside the row's L lanes.
#pragma unroll
    for (int offset = L / 2; offset >= 1; offset /= 2) {
#pragma unroll
      for (int k = 0; k < K; ++k) sum[k] = sum[k] + __shfl_xor_sync(0xffffffffu, sum[k], offset);
    }
    float my_sum = 0.0f;
#pragma unroll
    for (int k = 0; k < K; ++k) my_sum = pl.u == k ? sum[k] : my_sum;
    if (finisher) {
      const float y = finish_output(my_sum, has_D, D, my_x, p.z != nullptr, decode_raw(f, in.z));
      store_any(p.output_format, p.y, int64_t(t) * p.y_stride_token + int64_t(h) * p.y_stride_head + my_row, y);
    }
    if (!pad && p.token_state_slots != nullptr && p.token_state_slots[t] != p.pad_slot_id) {
      store_rows<SF, V, J, L>(p, p.token_state_slots[t], h, row0, pl, vector, s);
    }
  }

  if (pad) return;  // a pad request writes no state
  store_rows<SF, V, J, L>(p, slot_out, h, row0, pl, vector, s);
}

template <Format SF, int V, int J, int L>
void launch_typed(const Params& p, cudaStream_t stream) {
  const int bytes = SF == Format::fp32 ? 4 : 2;
  // One access of V elements needs the pool, its strides and hence every chunk start
  // (a multiple of V) aligned to V elements.
  const bool vector = reinterpret_cast<uintptr_t>(p.state) % (V * bytes) == 0 && p.state_stride_slot % V == 0 &&
                      p.state_stride_head % V == 0 && p.state_stride_p % V == 0;
  const int tiles = (p.P + kRowsPerBlock - 1) / kRowsPerBlock;
  const dim3 grid(static_cast<unsigned>(p.num_requests * tiles), static_cast<unsigned>(p.H));
  ssu_kernel<SF, V, J, L><<<grid, kWarpsPerBlock * kWarp, 0, stream>>>(p, vector);
  SSMV_CUDA_CHECK(cudaGetLastError());
}

template <Format SF, int V>
void launch_vector(const Params& p, const LaneLayout& l, cudaStream_t stream) {
  if constexpr (V >= 2) {
    if (l.L == 16) return launch_typed<SF, V, 1, 16>(p, stream);  // N = 16·V exactly
  }
  if constexpr (V == 8) {
    return launch_typed<SF, V, 1, kWarp>(p, stream);  // N = 256 exactly
  } else {
    return l.J == 1 ? launch_typed<SF, V, 1, kWarp>(p, stream) : launch_typed<SF, V, 2, kWarp>(p, stream);
  }
}

template <Format SF>
void launch_format(const Params& p, cudaStream_t stream) {
  const LaneLayout l = lane_layout(p.N, SF == Format::fp32 ? 4 : 2);
  switch (l.V) {
    case 1: return launch_vector<SF, 1>(p, l, stream);
    case 2: return launch_vector<SF, 2>(p, l, stream);
    case 4: return launch_vector<SF, 4>(p, l, stream);
    default:
      if constexpr (SF != Format::fp32) return launch_vector<SF, 8>(p, l, stream);
  }
}

}  // namespace

void launch(const Params& p, cudaStream_t stream) {
  check_params(p);
  if (p.num_requests == 0) return;
  switch (p.state_format) {
    case Format::fp32: return launch_format<Format::fp32>(p, stream);
    case Format::bf16: return launch_format<Format::bf16>(p, stream);
    case Format::fp16: return launch_format<Format::fp16>(p, stream);
  }
}

}  // namespace ssmv::ssu

