// Host/device qualifiers shared by the CUDA kernels and their host twins: one source of
// per-thread arithmetic, compiled by nvcc for the GPU and by the C++ compiler for the CPU.
#pragma once

#ifdef __CUDACC__
#define SSMV_HD __host__ __device__
#define SSMV_FORCEINLINE __forceinline__
#else
#define SSMV_HD
#define SSMV_FORCEINLINE inline __attribute__((always_inline))
#endif
