#include "fast/chunk_scan/check.h"

#include <string>

#include "fast/chunk_scan/chunk_scan.h"
#include "spec/problem.h"

namespace ssmv::chunk_scan {
namespace {

[[noreturn]] void fail(const std::string& field, int64_t value, const std::string& why) {
  throw ProblemError("chunk_scan params field '" + field + "' = " + std::to_string(value) + ": " + why);
}

void need(bool ok, const std::string& field, int64_t value, const std::string& why) {
  if (!ok) fail(field, value, why);
}

// Rows of `inner` contiguous elements, `outer` of them at stride so, nested in `count`
// at stride st, must not overlap: either layout order is accepted.
void check_strides(const std::string& name, int64_t st, int64_t so, int64_t T, int64_t outer,
                   int64_t inner) {
  need(st > 0, name + "_st", st, "strides must be positive");
  need(so > 0, name + "_s" + (name == "b" || name == "c" ? "g" : "h"), so, "strides must be positive");
  const bool t_outer = so >= inner && st >= outer * so;
  const bool t_inner = st >= inner && so >= T * st;
  need(t_outer || t_inner, name + "_st", st, "rows of the tensor would overlap");
}

}  // namespace

void check_params(const Params& p) {
  need(p.L == 64 || p.L == 128 || p.L == 256, "L", p.L, "chunk size must be 64, 128 or 256");
  need(p.T > 0, "T", p.T, "must be positive");
  need(p.S > 0, "S", p.S, "must be positive");
  need(p.H > 0, "H", p.H, "must be positive");
  need(p.G > 0 && p.H % p.G == 0, "G", p.G, "must be positive and divide H");
  need(p.P > 0 && p.P <= kMaxHeadDim, "P", p.P, "must be in [1, 256]");
  need(p.N > 0 && p.N <= kMaxStateDim, "N", p.N, "must be in [1, 256]");
  need(p.NC >= p.S && int64_t(p.NC) <= int64_t(p.T), "NC", p.NC, "must lie in [S, T]");
  // Largest intermediate index: NC·H·P·N (chunk states) and NC·G·L·L (C·Bᵀ), int64 on
  // the device; cap them so that their allocation stays within one GPU (2^34 elements).
  need(int64_t(p.NC) * p.H * p.P * p.N <= kMaxStateElements, "NC", p.NC,
       "chunk states NC·H·P·N exceed 2^34 elements");
  need(!p.use_mma || p.input != Format::fp32, "use_mma", p.use_mma,
       "tensor cores need bf16 or fp16 inputs");
  check_strides("x", p.x_st, p.x_sh, p.T, p.H, p.P);
  check_strides("b", p.b_st, p.b_sg, p.T, p.G, p.N);
  check_strides("c", p.c_st, p.c_sg, p.T, p.G, p.N);
  check_strides("y", p.y_st, p.y_sh, p.T, p.H, p.P);
  if (p.has_z()) check_strides("z", p.z_st, p.z_sh, p.T, p.H, p.P);
  need(p.dt_st >= p.H, "dt_st", p.dt_st, "must be at least H");
  const void* required[] = {p.x, p.dt, p.A, p.B, p.C, p.chunk_start, p.chunk_len,
                            p.seq_first_chunk, p.delta, p.cumsum, p.chunk_decay,
                            p.chunk_state, p.state_in, p.cb, p.y, p.final_state};
  for (const void* ptr : required) need(ptr != nullptr, "pointer", 0, "a required buffer is null");
  need(p.has_D() == (p.d_mode != DMode::none), "d_mode", int64_t(p.d_mode),
       p.has_D() ? "D is set but d_mode is none" : "D is null but d_mode is not none");
}

}  // namespace ssmv::chunk_scan
