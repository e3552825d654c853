// Mamba-3 SISO dumps (docs/tensor-files.md, "Mamba-3 dumps"): the problem of one call of
// mamba_ssm's Mamba-3 step kernel per token (spec/mamba3/problem.h) and its outputs, read from
// a dump's tensors under the options merged from the command line and its metadata.
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

struct ResolvedDump {
  ssmv::mamba3::Problem problem;
  Outputs outputs;
  std::string kernel;    // "mamba3_step"
  std::string contract;  // a Mamba-3 step contract preset (mamba3_family.h)
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
