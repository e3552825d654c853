// The SSU (selective_state_update) CUDA kernel for sm_90.
//
// Grid (R·ceil(P/kRowsPerBlock), H), 128 threads (ssu_math.h: 4 warps of kRowsPerWarp
// = 8 rows, registers capped for 6 resident blocks per SM): block (r·tiles + tile, h) owns rows [kRowsPerBlock·tile, +kRowsPerBlock) of
// request r, head h; warp w owns kRowsPerWarp consecutive rows and keeps their state in
// registers, in fp32, across the request's tokens. Lane l owns the state
// elements n = (j·32 + l)·V + v (ssu_math.h lane_layout); it loads them with one
// vector access of V elements per chunk where the pool is aligned for it.
// Per token: δ and a = exp(δA) (every thread, identical), dB = δ·B[n] and C[n] for the
// lane's n, then per row S = fma(dB, x, a·S), a per-lane fma chain over n for Σ C·S and
// a 5-level xor-butterfly across the warp; lane i finishes and stores y[t, h, row0 + i].
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

__device__ __forceinline__ float load_any(Format f, const void* base, int64_t i) {
  if (f == Format::fp32) return static_cast<const float*>(base)[i];
  return decode16(f, static_cast<const uint16_t*>(base)[i]);
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

// Stores the warp's rows [row0, row0 + kRowsPerWarp) ∩ [0, P) of head h into pool slot
// `slot`, rounded to the state format.
template <Format SF, int V, int J>
__device__ __forceinline__ void store_rows(const Params& p, int32_t slot, int h, int row0, int lane, bool vector,
                                           const float (&s)[kRowsPerWarp][J * V]) {
  using E = typename StateBits<SF>::T;
  const LaneLayout lay{V, J};
  E* const base = static_cast<E*>(p.state) + int64_t(slot) * p.state_stride_slot + int64_t(h) * p.state_stride_head;
#pragma unroll
  for (int i = 0; i < kRowsPerWarp; ++i) {
    const int row = row0 + i;
#pragma unroll
    for (int j = 0; j < J; ++j) {
      const int n = lane_element(lay, lane, j, 0);
      if (row < p.P && n < p.N) store_state<SF, V>(base + int64_t(row) * p.state_stride_p, n, p.N, vector, &s[i][j * V]);
    }
  }
}

// J: the chunks per lane, ceil(N / (32·V)) (1 or 2), fixed at compile time so that a
// lane's arrays hold exactly J·V elements per row in registers.
template <Format SF, int V, int J>
__global__ void __launch_bounds__(kWarpsPerBlock* kWarp, SSMV_SSU_MIN_BLOCKS) ssu_kernel(const Params p, bool vector) {
  using E = typename StateBits<SF>::T;
  static_assert(J * V <= kMaxLaneElements);
  static_assert(kRowsPerWarp <= kWarp, "lane i finishes row i");
  const int tiles = (p.P + kRowsPerBlock - 1) / kRowsPerBlock;
  const int r = blockIdx.x / tiles;
  const int tile = blockIdx.x % tiles;
  const int h = blockIdx.y;
  const int warp = threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  const int row0 = tile * kRowsPerBlock + warp * kRowsPerWarp;
  if (row0 >= p.P) return;  // the whole warp: no row of this warp exists
  const int g = h / (p.H / p.G);
  const int32_t t0 = p.cu_seqlens[r], t1 = p.cu_seqlens[r + 1];
  const int32_t slot_in = p.slot_in[r];
  const bool pad = slot_in == p.pad_slot_id;
  const LaneLayout lay{V, (p.N + kWarp * V - 1) / (kWarp * V)};
  E* const pool = static_cast<E*>(p.state);
  const int64_t head_offset = int64_t(h) * p.state_stride_head;

  float s[kRowsPerWarp][J * V];
#pragma unroll
  for (int i = 0; i < kRowsPerWarp; ++i) {
    const int row = row0 + i;
#pragma unroll
    for (int j = 0; j < J; ++j) {
      const int n = lane_element(lay, lane, j, 0);
      if (!pad && row < p.P && n < p.N) {
        const E* src = pool + int64_t(slot_in) * p.state_stride_slot + head_offset + int64_t(row) * p.state_stride_p;
        load_state<SF, V>(src, n, p.N, vector, &s[i][j * V]);
      } else {
#pragma unroll
        for (int v = 0; v < V; ++v) s[i][j * V + v] = 0.0f;
      }
    }
  }

  const bool has_bias = p.dt_bias != nullptr;
  const float dt_bias = has_bias ? p.dt_bias[h] : 0.0f;
  const float A = p.A[h];
  for (int32_t t = t0; t < t1; ++t) {
    const float dt = load_any(p.input_format, p.dt, int64_t(t) * p.dt_stride_token + h);
    const TokenScalars ts = token_scalars(dt, has_bias, dt_bias, p.dt_softplus, p.dt_limit_lo, p.dt_limit_hi, A);
    float dB[J * V], c[J * V];
#pragma unroll
    for (int j = 0; j < J; ++j) {
#pragma unroll
      for (int v = 0; v < V; ++v) {
        const int n = lane_element(lay, lane, j, v);
        const bool live = n < p.N;
        const int64_t bi = int64_t(t) * p.B_stride_token + int64_t(g) * p.B_stride_group + n;
        const int64_t ci = int64_t(t) * p.C_stride_token + int64_t(g) * p.C_stride_group + n;
        dB[j * V + v] = live ? scaled_B(ts.delta, load_any(p.input_format, p.B, bi)) : 0.0f;
        c[j * V + v] = live ? load_any(p.input_format, p.C, ci) : 0.0f;
      }
    }
    // All rows' updates and lane partial sums first (independent chains), then their
    // butterflies interleaved, then lane i finishes row row0 + i: the rows' sigmoids and
    // stores run side by side on different lanes instead of one after another on lane 0.
    // Per row the operations and their order are the ones ssu_math.h states.
    float xs[kRowsPerWarp], sum[kRowsPerWarp];
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i) {
      const int row = row0 + i;
      xs[i] = row < p.P ? load_any(p.input_format, p.x, int64_t(t) * p.x_stride_token + int64_t(h) * p.x_stride_head + row)
                        : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i) {
      float acc = 0.0f;
      if (row0 + i < p.P) {  // warp-uniform
#pragma unroll
        for (int j = 0; j < J; ++j) {
          const int n0 = lane_element(lay, lane, j, 0);
          if (n0 + V <= p.N) {  // the whole chunk exists
#pragma unroll
            for (int v = 0; v < V; ++v) {
              s[i][j * V + v] = update_state(s[i][j * V + v], ts.decay, dB[j * V + v], xs[i]);
              acc = accumulate(acc, c[j * V + v], s[i][j * V + v]);
            }
          } else {
#pragma unroll
            for (int v = 0; v < V; ++v) {
              if (n0 + v < p.N) {
                s[i][j * V + v] = update_state(s[i][j * V + v], ts.decay, dB[j * V + v], xs[i]);
                acc = accumulate(acc, c[j * V + v], s[i][j * V + v]);
              }
            }
          }
        }
      }
      sum[i] = acc;
    }
#pragma unroll
    for (int offset = kWarp / 2; offset >= 1; offset /= 2) {
#pragma unroll
      for (int i = 0; i < kRowsPerWarp; ++i) sum[i] = sum[i] + __shfl_xor_sync(0xffffffffu, sum[i], offset);
    }
    float my_sum = 0.0f, my_x = 0.0f;
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i) {
      if (lane == i) {
        my_sum = sum[i];
        my_x = xs[i];
      }
    }
    const int my_row = row0 + lane;
    if (lane < kRowsPerWarp && my_row < p.P) {
      const bool has_D = p.d_mode != DMode::none;
      const float D = p.d_mode == DMode::per_head ? p.D[h]
                      : has_D                     ? p.D[int64_t(h) * p.D_stride_head + my_row]
                                                  : 0.0f;
      const bool has_z = p.z != nullptr;
      const float z = has_z ? load_any(p.input_format, p.z,
                                       int64_t(t) * p.z_stride_token + int64_t(h) * p.z_stride_head + my_row)
                            : 0.0f;
      const float y = finish_output(my_sum, has_D, D, my_x, has_z, z);
      store_any(p.output_format, p.y, int64_t(t) * p.y_stride_token + int64_t(h) * p.y_stride_head + my_row, y);
    }
    if (!pad && p.token_state_slots != nullptr && p.token_state_slots[t] != p.pad_slot_id) {
      store_rows<SF, V, J>(p, p.token_state_slots[t], h, row0, lane, vector, s);
    }
  }

  if (pad) return;  // a pad request writes no state
  store_rows<SF, V, J>(p, p.slot_out != nullptr ? p.slot_out[r] : slot_in, h, row0, lane, vector, s);
}

template <Format SF, int V, int J>
void launch_typed(const Params& p, cudaStream_t stream) {
  const int bytes = SF == Format::fp32 ? 4 : 2;
  // One access of V elements needs the pool, its strides and hence every chunk start
  // (a multiple of V) aligned to V elements.
  const bool vector = reinterpret_cast<uintptr_t>(p.state) % (V * bytes) == 0 && p.state_stride_slot % V == 0 &&
                      p.state_stride_head % V == 0 && p.state_stride_p % V == 0;
  const int tiles = (p.P + kRowsPerBlock - 1) / kRowsPerBlock;
  const dim3 grid(static_cast<unsigned>(p.num_requests * tiles), static_cast<unsigned>(p.H));
  ssu_kernel<SF, V, J><<<grid, kWarpsPerBlock * kWarp, 0, stream>>>(p, vector);
  SSMV_CUDA_CHECK(cudaGetLastError());
}

template <Format SF, int V>
void launch_vector(const Params& p, int J, cudaStream_t stream) {
  if constexpr (V == 8) {
    return launch_typed<SF, V, 1>(p, stream);  // N = 256 exactly
  } else {
    return J == 1 ? launch_typed<SF, V, 1>(p, stream) : launch_typed<SF, V, 2>(p, stream);
  }
}

template <Format SF>
void launch_format(const Params& p, cudaStream_t stream) {
  const LaneLayout l = lane_layout(p.N, SF == Format::fp32 ? 4 : 2);
  switch (l.V) {
    case 1: return launch_vector<SF, 1>(p, l.J, stream);
    case 2: return launch_vector<SF, 2>(p, l.J, stream);
    case 4: return launch_vector<SF, 4>(p, l.J, stream);
    default:
      if constexpr (SF != Format::fp32) return launch_vector<SF, 8>(p, l.J, stream);
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
