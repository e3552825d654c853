// Mamba-3 SISO dumps (docs/tensor-files.md, "Mamba-3 dumps"): the problem (spec/mamba3/problem.h)
// of mamba_ssm's Mamba-3 step kernel, one call per token (kernel mamba3_step), or of its chunked
// prefill mamba3_siso_combined over all tokens (kernel mamba3_prefill, option chunk_size), and its
// outputs, read from a dump's tensors under the options merged from the command line and its
// metadata. Kernel mamba3_handoff: the first prefill_tokens of every sequence through the prefill,
// the rest through the step kernel from the state it returned (y of every token, the state after
// the last).
//
// Tensors (ssmv's names; mamba_ssm's in brackets), packed over the tokens of S sequences:
//   x [T, H, P] [V], B [T, G, N] [K], C [T, G, N] [Q]         input format
//   dt [T, H] [DT], adt [T, H] [ADT]                             fp32
//   trap [T, H] [Trap]                                           input format
//   angles [T, H, R] [Angles]                                    bf16 or fp32: the format of its dtype
//   B_bias [H, N] [K_bias], C_bias [H, N] [Q_bias]               fp32
//   D [H], z [T, H, P] [Z]                                       optional; fp32, input format
//   cu_seqlens [S + 1]                                           optional (default: one sequence)
//   initial_angle_state [S, H, R] (fp32), initial_states [S, H, P, N], initial_B_prev [S, H, N],
//   initial_x_prev [S, H, P] (state format): the four-part state, all or none
// Outputs: y [T, H, P] (output format); final_angle_state, final_states, final_B_prev,
// final_x_prev (each optional; the layouts of the initial ones).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spec/mamba3/problem.h"
#include "verify/family/family.h"
#include "verify/tensor_file/tensor.h"

namespace ssmv::family::mamba3 {

struct Outputs {
  std::vector<float> y;
  ssmv::mamba3::FourPartState final_state;  // each part may be empty (not dumped)
};

inline constexpr const char* kStepKernel = "mamba3_step";
inline constexpr const char* kPrefillKernel = "mamba3_prefill";
// The first prefill_tokens of every sequence through the prefill, the rest through the step kernel
// from the state the prefill returned (handoff.h).
inline constexpr const char* kHandoffKernel = "mamba3_handoff";
inline constexpr int64_t kDefaultPrefillChunk = 64;  // mamba3_siso_combined's default chunk_size

struct ResolvedDump {
  ssmv::mamba3::Problem problem;
  Outputs outputs;
  std::string kernel;      // kStepKernel, kPrefillKernel or kHandoffKernel
  std::string contract;    // a Mamba-3 contract preset of the kernel (of the prefill in a hand-off)
  std::string decode_contract;  // a hand-off's step contract
  int64_t chunk_size = 0;       // the prefill's CHUNK_SIZE; 0 for the step kernel
  int64_t prefill_tokens = 0;   // a hand-off's prefill length (every sequence)
};

// Throws tensor_file::TensorFileError (a missing, misshapen or inexact tensor, naming it),
// ProblemError (spec/mamba3/problem.h's validation) or cli::UsageError (an option that is not
// Mamba-3's, naming it and the kernel).
ResolvedDump resolve(const DumpFiles& files);

// The inverse, for writers of dumps (tests, scripts): the problem's and the outputs' tensors
// under the names above (each format's tensor type: tensor_file::make_format_tensor), which
// resolve() reads back with the same formats.
tensor_file::TensorMap dump_tensors(const ssmv::mamba3::Problem& problem, const Outputs& outputs);

}  // namespace ssmv::family::mamba3
