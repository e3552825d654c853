// How SSU state and input elements travel between memory and the kernel's fp32
// arithmetic: raw bits (fp32 patterns, or 16-bit patterns zero-extended), hardware format
// conversions, and V consecutive state elements as one aligned access (Chunk). Device
// code for kernels.cu only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "fast/common/cp_async.cuh"
#include "spec/format.h"

namespace ssmv::ssu::state_bits {

using ssmv::cuda::cp_async;
using ssmv::cuda::cp_async_commit;
using ssmv::cuda::cp_async_wait;

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

// Whether a tensor at `base` (last dimension contiguous) with the element strides `strides`
// allows one aligned access of `elements` consecutive elements of `bytes` bytes at every
// multiple of `elements` along its rows: the base aligned to elements·bytes, every stride a
// multiple of elements. Host-side; used by the launchers to pick vector paths.
template <class... Strides>
inline bool aligned_for_chunks(const void* base, int elements, int bytes, Strides... strides) {
  return reinterpret_cast<uintptr_t>(base) % (uintptr_t(elements) * uintptr_t(bytes)) == 0 &&
         ((strides % elements == 0) && ...);
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

// V consecutive state elements as one aligned access (16 bytes at most).
template <Format SF, int V>
using Chunk = typename Raw<V * sizeof(typename StateBits<SF>::T)>::T;

// bf16 pairs decode from their 32-bit word, one instruction per element: the low element
// is word << 16 and the high one word & 0xffff0000 (decode16's value, without first moving
// the high half down and back up: 16 instructions for 8 elements in the SASS of the streamed
// kernel, bench/NOTES.md session 9).
template <Format SF, int V>
__device__ __forceinline__ void unpack(const Chunk<SF, V>& raw, float* out) {
  if constexpr (SF == Format::bf16 && V % 2 == 0) {
    union {
      Chunk<SF, V> raw;
      uint32_t w[V / 2];
    } u;
    u.raw = raw;
#pragma unroll
    for (int k = 0; k < V / 2; ++k) {
      out[2 * k] = __uint_as_float(u.w[k] << 16);
      out[2 * k + 1] = __uint_as_float(u.w[k] & 0xffff0000u);
    }
  } else {
    union {
      Chunk<SF, V> raw;
      typename StateBits<SF>::T e[V];
    } u;
    u.raw = raw;
#pragma unroll
    for (int v = 0; v < V; ++v) out[v] = state_to_float<SF>(u.e[v]);
  }
}

template <Format SF, int V>
__device__ __forceinline__ Chunk<SF, V> pack(const float* in) {
  union {
    Chunk<SF, V> raw;
    typename StateBits<SF>::T e[V];
  } u;
#pragma unroll
  for (int v = 0; v < V; ++v) u.e[v] = state_from_float<SF>(in[v]);
  return u.raw;
}

// Loads V elements [n, n+V) of a state row into out[0..V): one access when `vector`
// (the caller guarantees alignment and n + V <= N), element by element otherwise.
template <Format SF, int V>
__device__ __forceinline__ void load_state(const typename StateBits<SF>::T* row, int n, int N, bool vector,
                                           float* out) {
  if (vector && n + V <= N) {
    unpack<SF, V>(*reinterpret_cast<const Chunk<SF, V>*>(row + n), out);
  } else {
#pragma unroll
    for (int v = 0; v < V; ++v) out[v] = n + v < N ? state_to_float<SF>(row[n + v]) : 0.0f;
  }
}

template <Format SF, int V>
__device__ __forceinline__ void store_state(typename StateBits<SF>::T* row, int n, int N, bool vector,
                                            const float* in) {
  if (vector && n + V <= N) {
    *reinterpret_cast<Chunk<SF, V>*>(row + n) = pack<SF, V>(in);
  } else {
#pragma unroll
    for (int v = 0; v < V; ++v)
      if (n + v < N) row[n + v] = state_from_float<SF>(in[v]);
  }
}

}  // namespace ssmv::ssu::state_bits
