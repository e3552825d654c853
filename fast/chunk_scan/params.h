// The one parameter block of the chunk_scan kernels: device pointers with their shapes
// and strides (in elements), the chunk table and the stage intermediates. Built by
// DeviceLaunch (device_launch.h) from a Problem; check_params (check.h) checks it before
// any launch. An absent optional tensor (dt_bias, D, z, initial_state, boundary_states) is
// a null pointer, asked by the has_…() queries (as fast/ssu/params.h).
#pragma once

#include <cstdint>

#include "fast/common/hd.h"
#include "spec/format.h"
#include "spec/problem.h"

namespace ssmv::chunk_scan {

struct Params {
  // Shapes: T packed tokens, S sequences, H heads, P head dim, N state dim, G groups,
  // L chunk size, NC chunks.
  int32_t T = 0, S = 0, H = 0, P = 0, N = 0, G = 0, L = 0, NC = 0;
  Format input = Format::bf16, state = Format::fp32, output = Format::bf16;
  bool use_mma = false;  // reductions on tensor cores (operands in the input format)
  bool dt_softplus = false;
  DMode d_mode = DMode::none;  // none exactly when D is null (check_params)
  float dt_lo = 0, dt_hi = 0;

  // Inputs. Innermost dims (p, n) are contiguous.
  const void* x = nullptr;   // [T, H, P] input format; strides x_st (t), x_sh (h)
  int64_t x_st = 0, x_sh = 0;
  const void* dt = nullptr;  // [T, H] input format; stride dt_st (t), heads contiguous
  int64_t dt_st = 0;
  const float* A = nullptr;        // [H]
  const float* dt_bias = nullptr;  // [H] or null
  const float* D = nullptr;        // [H] or [H, P], or null
  const void* B = nullptr;   // [T, G, N] input format; strides b_st (t), b_sg (g)
  int64_t b_st = 0, b_sg = 0;
  const void* C = nullptr;   // [T, G, N] input format; strides c_st (t), c_sg (g)
  int64_t c_st = 0, c_sg = 0;
  const void* z = nullptr;   // [T, H, P] input format, or null; strides z_st, z_sh
  int64_t z_st = 0, z_sh = 0;
  const void* initial_state = nullptr;  // [S, H, P, N] state format, contiguous, or null

  // Chunk table (plan_chunks): chunk c covers packed tokens [chunk_start[c], +chunk_len[c]).
  const int32_t* chunk_start = nullptr;  // [NC]
  const int32_t* chunk_len = nullptr;    // [NC]
  const int32_t* seq_first_chunk = nullptr;  // [S + 1]

  // Intermediates (device, contiguous).
  float* delta = nullptr;        // [H, T]   (a) δ
  float* cumsum = nullptr;       // [H, T]   (a) within-chunk Σ δ·A
  float* chunk_decay = nullptr;  // [NC, H]  (a) exp(cumsum at the chunk's last token)
  float* chunk_state = nullptr;  // [NC, H, P, N] (b)
  void* state_in = nullptr;      // [NC, H, P, N] (c) operand format: input if use_mma, fp32 else
  float* cb = nullptr;           // [NC, G, L, L] (d), entries k ≤ m < len written

  // Outputs.
  void* y = nullptr;  // [T, H, P] output format; strides y_st, y_sh
  int64_t y_st = 0, y_sh = 0;
  void* final_state = nullptr;      // [S, H, P, N] state format, contiguous
  void* boundary_states = nullptr;  // [NC, H, P, N] state format, or null

  SSMV_HD bool has_dt_bias() const { return dt_bias != nullptr; }
  SSMV_HD bool has_D() const { return D != nullptr; }
  SSMV_HD bool D_per_dim() const { return d_mode == DMode::per_head_dim; }
  SSMV_HD bool has_z() const { return z != nullptr; }
  SSMV_HD bool has_initial_state() const { return initial_state != nullptr; }
  SSMV_HD bool want_boundary() const { return boundary_states != nullptr; }
};

}  // namespace ssmv::chunk_scan
