#include "verify/family/mamba2/dump_reading.h"

#include "verify/cli/usage_error.h"
#include "verify/family/problem_difference.h"
#include "verify/contracts/contract_json.h"
#include "verify/tensor_file/problem_file.h"

namespace ssmv::family::mamba2 {

using cli::UsageError;
using tensor_file::DumpOptions;
using tensor_file::TensorMap;

Problem problem_of(const TensorMap& tensors, const std::string& path, const DumpOptions& o) {
  tensor_file::ProblemFileOptions po;
  if (o.input_format) po.formats.input = *o.input_format;
  if (o.state_format) po.formats.state = *o.state_format;
  if (o.output_format) po.formats.output = *o.output_format;
  po.dt_softplus = o.dt_softplus.value_or(false);
  if (o.dt_limit) {
    po.dt_limit_lo = o.dt_limit->first;
    po.dt_limit_hi = o.dt_limit->second;
  }
  return tensor_file::problem_from_tensors(tensors, path, po);
}

verify::ExternalKernel kernel_of(const DumpOptions& o, const TensorMap& launch_tensors, const std::string& launch_path,
                                 const Problem& problem, const std::string& prefix) {
  verify::ExternalKernel k;
  k.family = o.kernel.value();  // set: the caller found the kernel's family (cli::family_of) first
  const bool chunked = k.family != "ssu";
  if (!chunked && (o.chunk_size || o.chunk_layout)) {
    throw UsageError("option '--" + prefix + (o.chunk_size ? "chunk-size" : "chunk-layout") +
                     "' given for kernel 'ssu', which has no chunks");
  }
  if (k.family != "handoff" && o.decode_contract) {
    throw UsageError("option '--" + prefix + "decode-contract' = '" + *o.decode_contract + "' given for kernel '" +
                     k.family + "': only a hand-off has a decode part");
  }
  const int64_t L = o.chunk_size.value_or(256);
  const std::string contract = o.contract.value_or(chunked ? "chunk_scan.production" : "ssu");
  k.contract = verify::load_contract(contract, chunked ? L : 0);
  if (chunked && o.chunk_layout) parse_chunk_layout(*o.chunk_layout, k.contract.chunk_layout);  // validated when read
  if (k.family == "handoff") k.decode_contract = verify::load_contract(o.decode_contract.value_or("ssu"), 0);

  const std::optional<std::vector<int64_t>> tensor =
      tensor_file::prefill_tokens_from_tensors(launch_tensors, launch_path, problem);
  if (k.family != "handoff") {
    if (tensor || o.prefill_tokens) {
      throw UsageError(std::string(tensor ? "tensor 'prefill_tokens' in " + launch_path
                                          : "option '--" + prefix + "prefill-tokens'") +
                       " given for kernel '" + k.family +
                       "': prefill tokens describe a hand-off (--" + prefix + "kernel handoff)");
    }
  } else if (tensor && o.prefill_tokens) {
    for (size_t q = 0; q < tensor->size(); ++q) {
      if ((*tensor)[q] != *o.prefill_tokens) {
        throw UsageError("prefill tokens: " + std::to_string(*o.prefill_tokens) + " (option or metadata) contradicts " +
                         launch_path + " tensor 'prefill_tokens'[" + std::to_string(q) + "] = " +
                         std::to_string((*tensor)[q]));
      }
    }
    k.prefill_tokens = *tensor;
  } else if (tensor) {
    k.prefill_tokens = *tensor;
  } else if (o.prefill_tokens) {
    k.prefill_tokens.assign(problem.shape.num_sequences(), *o.prefill_tokens);
  } else {
    throw UsageError("kernel 'handoff' needs the prefix: --" + prefix + "prefill-tokens K, metadata " +
                     "'ssmv.prefill_tokens', or a tensor prefill_tokens [S] in " + launch_path);
  }
  k.tokens_per_launch = o.tokens_per_launch.value_or(1);
  verify::validate_external(problem, k);
  return k;
}

ResolvedDump resolve(const DumpFiles& f) {
  ResolvedDump d;
  d.problem = problem_of(*f.problem_tensors, f.problem_path, f.options);
  d.kernel = kernel_of(f.options, f.launch(), f.launch_file(), d.problem, f.flag_prefix);
  d.outputs = tensor_file::outputs_from_tensors(*f.output_tensors, f.outputs_path, d.problem);
  return d;
}

std::string first_difference(const Problem& a, const Problem& b) {
  const Shape &sa = a.shape, &sb = b.shape;
  if (sa.cu_seqlens != sb.cu_seqlens) return "cu_seqlens (the sequences) differ";
  std::string diff = shape_difference({{"H", {sa.H, sb.H}}, {"P", {sa.P, sb.P}}, {"N", {sa.N, sb.N}}, {"G", {sa.G, sb.G}}});
  if (diff.empty()) {
    diff = format_difference({{"input", {a.formats.input, b.formats.input}},
                              {"state", {a.formats.state, b.formats.state}},
                              {"output", {a.formats.output, b.formats.output}}});
  }
  const auto compare = [&](const char* name, const auto& ta, const auto& tb) {
    if (diff.empty()) diff = tensor_difference(name, ta, tb);
  };
  compare("x", a.x, b.x);
  compare("dt", a.dt, b.dt);
  compare("A", a.A, b.A);
  compare("B", a.B, b.B);
  compare("C", a.C, b.C);
  compare("z", a.z, b.z);
  compare("dt_bias", a.dt_bias, b.dt_bias);
  compare("D", a.D, b.D);
  compare("initial_states", a.initial_state, b.initial_state);
  return diff;
}

}  // namespace ssmv::family::mamba2
