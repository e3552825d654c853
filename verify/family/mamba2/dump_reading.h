// Mamba2's dumps (docs/tensor-files.md): the problem and the kernel that made a dump, from its
// tensors and the options merged from the command line and its metadata.
#pragma once

#include <string>

#include "spec/problem.h"
#include "verify/family/family.h"
#include "verify/judge/external_check.h"
#include "verify/tensor_file/dump_metadata.h"
#include "verify/tensor_file/problem_file.h"
#include "verify/tensor_file/tensor.h"

namespace ssmv::family::mamba2 {

// The problem of `tensors` (read from `path`) under the merged options (defaults: bf16
// inputs, fp32 state, bf16 output, no softplus, no limit).
Problem problem_of(const tensor_file::TensorMap& tensors, const std::string& path,
                   const tensor_file::DumpOptions& options);

// The kernel that made a dump, from the merged options (their kernel set: a Mamba2 one, as
// cli::family_of found it) and the launch file's tensors (its optional prefill_tokens):
// defaults chunk size 256, contracts ssu / chunk_scan.production.
// `flag_prefix` names the flags in messages ("" or "a-"/"b-"). Throws cli::UsageError
// naming the option, metadata key or tensor and its value.
verify::ExternalKernel kernel_of(const tensor_file::DumpOptions& options, const tensor_file::TensorMap& launch_tensors,
                                 const std::string& launch_path, const Problem& problem,
                                 const std::string& flag_prefix);

// A Mamba2 dump read: its problem, the kernel that made it and the kernel's outputs.
struct ResolvedDump {
  Problem problem;
  verify::ExternalKernel kernel;
  tensor_file::KernelOutputs outputs;
};
ResolvedDump resolve(const DumpFiles& files);

// The first difference between two problems' inputs (Dump::problem_difference), "" when they
// are the same problem.
std::string first_difference(const Problem& a, const Problem& b);

}  // namespace ssmv::family::mamba2
