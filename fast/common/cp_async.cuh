// Asynchronous global-to-shared copies (cp.async, sm_80+), for every kernel that stages
// through shared memory (fast/ssu, fast/chunk_scan). Device code only.
#pragma once

#include <cstdint>

namespace ssmv::cuda {

// One aligned copy of 4, 8 or 16 bytes (16 bytes bypass L1: .cg). A thread's copies form a
// group at cp_async_commit; cp_async_wait<n>: all but its n most recent groups are
// complete and visible to it (to other threads only after a barrier).
template <int Bytes>
__device__ __forceinline__ void cp_async(void* smem, const void* gmem) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp.async copies 4, 8 or 16 bytes");
  const uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  if constexpr (Bytes == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(s), "l"(gmem), "n"(Bytes) : "memory");
  }
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int Pending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

}  // namespace ssmv::cuda
