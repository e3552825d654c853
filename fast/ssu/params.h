// The device-side view of one SSU launch (selective_state_update, the decode step):
// raw pointers, explicit strides in elements, formats as runtime tags. The kernel, the
// host twin and the pre-launch checks all read this one struct.
//
// Notation: R requests, T_total packed tokens (request r owns [cu_seqlens[r],
// cu_seqlens[r+1])), H heads, P head dim, N state dim, G groups (g = h / (H/G)).
// The last dimension of every tensor is contiguous (stride 1); the other strides are
// given. All pointers refer to device memory for the kernel and host memory for the twin.
// An absent optional tensor (dt_bias, D, z, slot_out, token_state_slots) is a null
// pointer, asked by the has_…() queries (as fast/chunk_scan/params.h).
#pragma once

#include <cstdint>
#include <limits>

#include "fast/common/hd.h"
#include "spec/format.h"
#include "spec/problem.h"

namespace ssmv::ssu {

// Largest P and N the kernel supports (a lane holds at most 8 state elements of a row).
inline constexpr int kMaxP = 256;
inline constexpr int kMaxN = 256;

struct Params {
  int32_t num_requests = 0;  // R
  int32_t num_tokens = 0;    // T_total = cu_seqlens[R]
  int32_t H = 0, P = 0, N = 0, G = 0;
  int32_t slots = 0;         // pool slots
  int32_t pad_slot_id = -1;  // outside [0, slots): reads a zero state, writes no state

  Format input_format = Format::bf16;   // x, dt, B, C, z
  Format state_format = Format::fp32;   // the pool
  Format output_format = Format::bf16;  // y

  bool dt_softplus = false;
  float dt_limit_lo = -std::numeric_limits<float>::infinity();  // δ = clamp(δ, lo, hi)
  float dt_limit_hi = std::numeric_limits<float>::infinity();
  DMode d_mode = DMode::none;

  const int32_t* cu_seqlens = nullptr;  // [R+1] int32, cu_seqlens[0] = 0, non-decreasing
  const int32_t* slot_in = nullptr;     // [R] slot read by request r, or pad_slot_id
  const int32_t* slot_out = nullptr;    // [R] slot written with the final state; null: slot_in
  // [T_total] slot receiving the state after packed token q (speculative decoding), or
  // pad_slot_id for none; null: no per-token states. Never written for pad requests.
  const int32_t* token_state_slots = nullptr;

  void* state = nullptr;  // [slots, H, P, N] state format
  int64_t state_stride_slot = 0, state_stride_head = 0, state_stride_p = 0;

  const void* x = nullptr;  // [T_total, H, P] input format
  int64_t x_stride_token = 0, x_stride_head = 0;
  const void* dt = nullptr;  // [T_total, H] input format
  int64_t dt_stride_token = 0;
  const float* A = nullptr;        // [H] fp32
  const float* dt_bias = nullptr;  // [H] fp32, or null
  const float* D = nullptr;        // [H] (d_mode per_head) or [H, P] (per_head_dim) fp32, or null
  int64_t D_stride_head = 0;       // per_head_dim: stride of h (P for a dense [H, P])
  const void* B = nullptr;         // [T_total, G, N] input format
  int64_t B_stride_token = 0, B_stride_group = 0;
  const void* C = nullptr;  // [T_total, G, N] input format
  int64_t C_stride_token = 0, C_stride_group = 0;
  const void* z = nullptr;  // [T_total, H, P] input format, or null (no gate)
  int64_t z_stride_token = 0, z_stride_head = 0;
  void* y = nullptr;  // [T_total, H, P] output format
  int64_t y_stride_token = 0, y_stride_head = 0;

  SSMV_HD bool has_dt_bias() const { return dt_bias != nullptr; }
  SSMV_HD bool has_D() const { return D != nullptr; }  // check_params: d_mode none exactly when absent
  SSMV_HD bool has_z() const { return z != nullptr; }
  SSMV_HD bool has_slot_out() const { return slot_out != nullptr; }
  SSMV_HD bool has_token_states() const { return token_state_slots != nullptr; }
};

}  // namespace ssmv::ssu
