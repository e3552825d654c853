#include "fast/ssu/check.h"

#include <cstdint>
#include <map>
#include <string>

#include "fast/ssu/arithmetic.h"

namespace ssmv::ssu {
namespace {

[[noreturn]] void fail(const std::string& msg) { throw ProblemError("ssu: " + msg); }

std::string field(const char* name, int64_t v) { return std::string("field '") + name + "' = " + std::to_string(v); }

void positive(const char* name, int64_t v, int64_t max) {
  if (v <= 0 || v > max) fail(field(name, v) + ": must lie in [1, " + std::to_string(max) + "]");
}

void pointer(const char* name, const void* ptr, Format f) {
  if (ptr == nullptr) fail(std::string("field '") + name + "' is null");
  if (reinterpret_cast<uintptr_t>(ptr) % storage_bytes(f) != 0) {
    fail(std::string("field '") + name + "' is not aligned to its " + std::string(format_name(f)) +
         " element size (" + std::to_string(storage_bytes(f)) + " bytes)");
  }
}

void stride(const char* name, int64_t v) {
  if (v < 0) fail(field(name, v) + ": strides must be non-negative (elements)");
}

}  // namespace

void check_params(const Params& p) {
  if (p.num_requests < 0) fail(field("num_requests", p.num_requests) + ": must be non-negative");
  if (p.num_tokens < 0) fail(field("num_tokens", p.num_tokens) + ": must be non-negative");
  positive("H", p.H, 65535);  // grid dimension y
  positive("P", p.P, kMaxP);
  positive("N", p.N, kMaxN);
  positive("G", p.G, p.H);
  if (p.H % p.G != 0) fail(field("G", p.G) + " does not divide H = " + std::to_string(p.H));
  positive("slots", p.slots, INT32_MAX);
  if (p.pad_slot_id >= 0 && p.pad_slot_id < p.slots) {
    fail(field("pad_slot_id", p.pad_slot_id) + " is a valid slot index (slots = " + std::to_string(p.slots) +
         "); it must lie outside [0, slots)");
  }
  if (!(p.dt_limit_lo <= p.dt_limit_hi)) {
    fail("field 'dt_limit' = (" + std::to_string(p.dt_limit_lo) + ", " + std::to_string(p.dt_limit_hi) +
         "): needs lo <= hi and no NaN");
  }
  const int64_t tiles = (p.P + kRowsPerBlock - 1) / kRowsPerBlock;
  if (int64_t(p.num_requests) * tiles > INT32_MAX) {
    fail(field("num_requests", p.num_requests) + ": too many blocks for one launch");
  }
  if (p.num_requests == 0) return;
  if (p.cu_seqlens == nullptr) fail("field 'cu_seqlens' is null");
  if (p.slot_in == nullptr) fail("field 'slot_in' is null");
  pointer("state", p.state, p.state_format);
  if (p.num_tokens > 0) {
    pointer("x", p.x, p.input_format);
    pointer("dt", p.dt, p.input_format);
    pointer("B", p.B, p.input_format);
    pointer("C", p.C, p.input_format);
    pointer("y", p.y, p.output_format);
    if (p.has_z()) pointer("z", p.z, p.input_format);
    pointer("A", p.A, Format::fp32);
    if (p.has_dt_bias()) pointer("dt_bias", p.dt_bias, Format::fp32);
  }
  if (p.d_mode == DMode::none && p.has_D()) fail("field 'D' is set but d_mode is none");
  if (p.d_mode != DMode::none) pointer("D", p.D, Format::fp32);
  stride("state_stride_slot", p.state_stride_slot);
  stride("state_stride_head", p.state_stride_head);
  stride("state_stride_p", p.state_stride_p);
  if (p.state_stride_p < p.N) {
    fail(field("state_stride_p", p.state_stride_p) + ": rows of N = " + std::to_string(p.N) +
         " state elements would overlap");
  }
  stride("x_stride_token", p.x_stride_token);
  stride("x_stride_head", p.x_stride_head);
  stride("dt_stride_token", p.dt_stride_token);
  stride("B_stride_token", p.B_stride_token);
  stride("B_stride_group", p.B_stride_group);
  stride("C_stride_token", p.C_stride_token);
  stride("C_stride_group", p.C_stride_group);
  stride("z_stride_token", p.z_stride_token);
  stride("z_stride_head", p.z_stride_head);
  stride("y_stride_token", p.y_stride_token);
  stride("y_stride_head", p.y_stride_head);
  stride("D_stride_head", p.D_stride_head);
}

void check_indices(const Params& p, const IndexArrays& idx) {
  const int64_t R = p.num_requests;
  if (int64_t(idx.cu_seqlens.size()) != R + 1) {
    fail("field 'cu_seqlens' has " + std::to_string(idx.cu_seqlens.size()) + " entries; R + 1 = " +
         std::to_string(R + 1) + " needed");
  }
  if (idx.cu_seqlens[0] != 0) fail(field("cu_seqlens[0]", idx.cu_seqlens[0]) + ": must be 0");
  for (int64_t r = 0; r < R; ++r) {
    if (idx.cu_seqlens[r + 1] < idx.cu_seqlens[r]) {
      fail("field 'cu_seqlens'[" + std::to_string(r + 1) + "] = " + std::to_string(idx.cu_seqlens[r + 1]) +
           " is below the previous entry " + std::to_string(idx.cu_seqlens[r]));
    }
  }
  if (idx.cu_seqlens[R] != p.num_tokens) {
    fail("field 'cu_seqlens'[R] = " + std::to_string(idx.cu_seqlens[R]) + " differs from num_tokens = " +
         std::to_string(p.num_tokens));
  }
  if (int64_t(idx.slot_in.size()) != R) fail("field 'slot_in' has " + std::to_string(idx.slot_in.size()) + " entries; R = " + std::to_string(R));
  if (!idx.slot_out.empty() && int64_t(idx.slot_out.size()) != R) {
    fail("field 'slot_out' has " + std::to_string(idx.slot_out.size()) + " entries; R = " + std::to_string(R));
  }
  if (!idx.token_state_slots.empty() && int64_t(idx.token_state_slots.size()) != p.num_tokens) {
    fail("field 'token_state_slots' has " + std::to_string(idx.token_state_slots.size()) +
         " entries; num_tokens = " + std::to_string(p.num_tokens));
  }
  auto in_range = [&](const char* name, int64_t i, int32_t v) {
    if (v != p.pad_slot_id && (v < 0 || v >= p.slots)) {
      fail(std::string("field '") + name + "'[" + std::to_string(i) + "] = " + std::to_string(v) +
           " is outside [0, " + std::to_string(p.slots) + ") and is not the pad slot id " +
           std::to_string(p.pad_slot_id));
    }
  };
  std::map<int32_t, int64_t> writer;  // slot -> the request writing it
  auto write = [&](int32_t slot, int64_t r, const std::string& what) {
    auto [it, inserted] = writer.emplace(slot, r);
    if (!inserted) {
      fail("slot " + std::to_string(slot) + " is written twice (" + what + " of request " + std::to_string(r) +
           ", and by request " + std::to_string(it->second) + ")");
    }
  };
  for (int64_t r = 0; r < R; ++r) {
    in_range("slot_in", r, idx.slot_in[r]);
    const bool pad = idx.slot_in[r] == p.pad_slot_id;
    if (!idx.slot_out.empty()) {
      in_range("slot_out", r, idx.slot_out[r]);
      if (!pad && idx.slot_out[r] == p.pad_slot_id) {
        fail("field 'slot_out'[" + std::to_string(r) + "] is the pad slot id but slot_in is not");
      }
    }
    for (int32_t q = idx.cu_seqlens[r]; q < idx.cu_seqlens[r + 1]; ++q) {
      if (idx.token_state_slots.empty()) break;
      in_range("token_state_slots", q, idx.token_state_slots[q]);
      if (!pad && idx.token_state_slots[q] != p.pad_slot_id) {
        write(idx.token_state_slots[q], r, "token state " + std::to_string(q));
      }
    }
    if (!pad) write(idx.slot_out.empty() ? idx.slot_in[r] : idx.slot_out[r], r, "final state");
  }
  for (int64_t r = 0; r < R; ++r) {
    if (idx.slot_in[r] == p.pad_slot_id) continue;
    auto it = writer.find(idx.slot_in[r]);
    if (it != writer.end() && it->second != r) {
      fail("request " + std::to_string(r) + " reads slot " + std::to_string(idx.slot_in[r]) + " that request " +
           std::to_string(it->second) + " writes; the result would depend on the order of requests");
    }
  }
}

}  // namespace ssmv::ssu
