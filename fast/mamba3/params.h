// The view of one launch of the bundled Mamba-3 SISO decode step (one token for each sequence
// of a batch): raw pointers to dense row-major tensors, formats as runtime tags. The kernel
// (kernels.cu), the host twin (twin.cpp) and the checks (check.cpp) read this one struct.
//
// Notation as spec/mamba3/problem.h: T packed tokens, H heads, P head dim, N state dim (even),
// G groups of B and C (g = h / (H/G)), R rotary angles per head (1 <= R <= N/2). The launch
// covers `batch` sequences; sequence b reads packed token token[b] of the input tensors, or
// nothing and writes nothing when token[b] < 0 (its sequence has ended). Pointers refer to
// device memory for the kernel and host memory for the twin.
#pragma once

#include <cstdint>

#include "fast/common/hd.h"
#include "spec/format.h"

namespace ssmv::mamba3_step {

// Largest N (the block keeps the turned c and b and the previous b, 3N floats, in shared memory).
inline constexpr int64_t kMaxN = 2048;

struct Params {
  int64_t batch = 0;  // sequences of this launch
  int64_t H = 0, P = 0, N = 0, G = 0, R = 0;
  Format input = Format::bf16;   // x, B, C, z, trap: bf16 (uint16 bits) or fp32
  Format angles_format = Format::bf16;  // angles: bf16 or fp32
  Format output = Format::bf16;  // y: bf16 or fp32

  const int64_t* token = nullptr;  // [batch] packed token of sequence b, or < 0: skipped

  const void* x = nullptr;       // [T, H, P] input format
  const void* B = nullptr;       // [T, G, N] input format
  const void* C = nullptr;       // [T, G, N] input format
  const float* dt = nullptr;     // [T, H] fp32 (softplus applied)
  const float* adt = nullptr;    // [T, H] fp32, the log-decay A·dt
  const void* trap = nullptr;    // [T, H] input format
  const void* angles = nullptr;  // [T, H, R] angles format
  const float* B_bias = nullptr;  // [H, N] fp32
  const float* C_bias = nullptr;  // [H, N] fp32
  const float* D = nullptr;       // [H] fp32, or null
  const void* z = nullptr;        // [T, H, P] input format, or null
  void* y = nullptr;              // [T, H, P] output format

  // The four-part state, fp32, read and written in place.
  float* angle_state = nullptr;  // [batch, H, R]
  float* S = nullptr;            // [batch, H, P, N]
  float* B_prev = nullptr;       // [batch, H, N]
  float* x_prev = nullptr;       // [batch, H, P]

  SSMV_HD bool has_D() const { return D != nullptr; }
  SSMV_HD bool has_z() const { return z != nullptr; }
};

}  // namespace ssmv::mamba3_step
