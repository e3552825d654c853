#include "verify/cli/dump_options.h"

#include <cstdio>

#include "verify/contracts/contract_json.h"
#include "verify/tensor_file/tensor_file.h"

namespace ssmv::cli {
namespace {

using tensor_file::DumpOptions;

Format format_value(const std::string& flag, const std::string& text) {
  Format f;
  if (!parse_format(text, f)) throw UsageError("option '" + flag + "' = '" + text + "': expected fp32, bf16 or fp16");
  return f;
}

std::string text_of(const std::string& v) { return v; }
std::string text_of(Format f) { return std::string(format_name(f)); }
std::string text_of(bool b) { return b ? "true" : "false"; }
std::string text_of(int64_t n) { return std::to_string(n); }
std::string text_of(std::pair<float, float> l) { return tensor_file::dt_limit_text(l); }

// One field of the merge: the file's value fills an unset field; a different value is an error.
template <typename T>
void merge_field(std::optional<T>& into, const std::optional<T>& from, const char* key, const std::string& what,
                 const std::string& file) {
  if (!from) return;
  if (into && !(*into == *from)) {
    throw UsageError(what + " '" + key + "' = '" + text_of(*into) + "' contradicts " + file + " metadata 'ssmv." +
                     key + "' = '" + text_of(*from) + "'");
  }
  into = from;
}

}  // namespace

void contracts_override(const DumpOptions& flags, LoadedFile& file, const std::string& prefix) {
  const auto take = [&](const std::optional<std::string>& flag, std::optional<std::string>& stored, const char* option,
                        const char* key) {
    if (!flag || !stored || *flag == *stored) return;
    std::fprintf(stderr, "ssmv: --%s%s %s replaces %s metadata 'ssmv.%s' = '%s'\n", prefix.c_str(), option,
                 flag->c_str(), file.path.c_str(), key, stored->c_str());
    stored.reset();
  };
  take(flags.contract, file.declared.contract, "contract", "contract");
  take(flags.decode_contract, file.declared.decode_contract, "decode-contract", "decode_contract");
}

void add_problem_options(CommandLine& line, DeclaredOptions& o) {
  DumpOptions& d = o.dump;
  line.group("What the dump's numbers are (docs/tensor-files.md; metadata ssmv.* sets them too)");
  line.text("--input-format", "F", "x, dt, B, C, z: fp32, bf16 or fp16 (default bf16; bf16 may be stored as int16 "
            "bit patterns)", [&d](const std::string& v) { d.input_format = format_value("--input-format", v); });
  line.text("--state-format", "F", "initial_states, final_states (default fp32); int16_scaled: FlashInfer's int16 "
            "codes with each row's decode scale in initial_states_scale / final_states_scale [S, H, P] (decode "
            "kernels only)", [&d](const std::string& v) { d.state_format = format_value("--state-format", v); });
  line.text("--output-format", "F", "y (default bf16)",
            [&d](const std::string& v) { d.output_format = format_value("--output-format", v); });
  line.flag_pair("--dt-softplus", "δ = softplus(dt + dt_bias), as mamba_ssm's kernels with dt_softplus=True",
                 "--no-dt-softplus", "δ = dt + dt_bias (the default)", [&d](bool on) { d.dt_softplus = on; });
  line.text("--dt-limit", "LO,HI", "δ = clamp(δ, LO, HI); fp32 values, as kernels receive them: a value that is not "
            "an fp32 (0.1) is refused unless --round-dt-limit", [&o](const std::string& v) { o.dt_limit_text = v; });
  line.flag("--round-dt-limit", "round --dt-limit values to the nearest fp32 (with a note)",
            [&o] { o.round_dt_limit = true; });
}

DumpOptions resolve_declared(const DeclaredOptions& o) {
  DumpOptions d = o.dump;
  if (o.dt_limit_text) {
    std::pair<float, float> limit;
    std::string why;
    bool rounded = false;
    if (!tensor_file::parse_dt_limit(*o.dt_limit_text, o.round_dt_limit, limit, &why, &rounded)) {
      throw UsageError("option '--dt-limit' = '" + *o.dt_limit_text + "': " + why +
                       (o.round_dt_limit ? "" : " (--round-dt-limit rounds it)"));
    }
    if (rounded) {
      std::fprintf(stderr, "ssmv: --dt-limit %s rounded to fp32: %s\n", o.dt_limit_text->c_str(),
                   tensor_file::dt_limit_text(limit).c_str());
    }
    d.dt_limit = limit;
  }
  return d;
}

void add_kernel_options(CommandLine& line, const std::string& prefix, DumpOptions& o) {
  const std::string kernel = "--" + prefix + "kernel", layout = "--" + prefix + "chunk-layout";
  const std::string side = prefix.empty() ? "" : "side " + prefix.substr(0, 1) + ": ";
  line.group(prefix.empty() ? "The kernel that made the dump"
                            : "Side " + prefix.substr(0, 1) + "'s kernel (as ssmv check's options)");
  line.text(kernel, "K", side + "ssu: a decode kernel launched once per token (or --tokens-per-launch), the state "
            "stored in the state format between launches; chunk_scan: a chunked prefill with --chunk-size; handoff: "
            "the first K tokens of every sequence through the chunked kernel, the rest decoded token by token from "
            "the state it stored in the state format", [&o, kernel](const std::string& k) {
    if (k != "ssu" && k != "chunk_scan" && k != "handoff") {
      throw UsageError("option '" + kernel + "' = '" + k + "': expected " + tensor_file::kDumpKernels);
    }
    o.kernel = k;
  });
  line.text("--" + prefix + "contract", "NAME|FILE", side + "the (chunked part's) precision contract: a preset "
            "(ssmv contract list) or a contract JSON file (docs/contracts.md); default ssu for ssu, "
            "chunk_scan.production otherwise; on a self-describing dump it replaces the dump's contract",
            [&o](const std::string& v) { o.contract = v; });
  line.may_read_file("--" + prefix + "contract");
  line.text("--" + prefix + "decode-contract", "NAME|FILE", side + "handoff: the decode part's contract (default ssu)",
            [&o](const std::string& v) { o.decode_contract = v; });
  line.may_read_file("--" + prefix + "decode-contract");
  line.integer("--" + prefix + "chunk-size", "L", side + "chunk length of a chunked kernel (default 256)", 1, 1 << 20,
               [&o](int64_t v) { o.chunk_size = v; });
  line.text(layout, "sequence|global", side + "sequence: chunks restart at every sequence; global: chunk boundaries "
            "at multiples of L in the packed token axis (mamba_ssm varlen); default: the contract's",
            [&o, layout](const std::string& v) {
    if (v != "sequence" && v != "global") throw UsageError("option '" + layout + "' = '" + v + "': expected sequence or global");
    o.chunk_layout = v;
  });
  line.integer("--" + prefix + "prefill-tokens", "K", side + "handoff: K tokens of every sequence through the chunked "
               "kernel (or a tensor prefill_tokens [S] in the file, per sequence)", 0, kMaxTokens,
               [&o](int64_t v) { o.prefill_tokens = v; });
  line.integer("--" + prefix + "tokens-per-launch", "K", side + "ssu: the kernel ran K tokens of every sequence per "
               "launch, the state carried in fp32 within a launch and stored in the state format at its end "
               "(FlashInfer's multi-token kernel; default 1); every sequence's length a multiple of K", 1, kMaxTokens,
               [&o](int64_t v) { o.tokens_per_launch = v; });
}

LoadedFile load_dump_file(const std::string& path) {
  LoadedFile f;
  f.path = path;
  std::map<std::string, std::string> metadata;
  f.tensors = tensor_file::load_tensor_file(path, &metadata);
  f.declared = tensor_file::dump_options_from_metadata(metadata, path);
  return f;
}

DumpOptions merge_declared(const DumpOptions& declared, const std::string& what, const LoadedFile& file) {
  DumpOptions o = declared;
  const DumpOptions& f = file.declared;
  merge_field(o.kernel, f.kernel, "kernel", what, file.path);
  merge_field(o.input_format, f.input_format, "input_format", what, file.path);
  merge_field(o.state_format, f.state_format, "state_format", what, file.path);
  merge_field(o.output_format, f.output_format, "output_format", what, file.path);
  merge_field(o.dt_softplus, f.dt_softplus, "dt_softplus", what, file.path);
  merge_field(o.dt_limit, f.dt_limit, "dt_limit", what, file.path);
  merge_field(o.chunk_size, f.chunk_size, "chunk_size", what, file.path);
  merge_field(o.chunk_layout, f.chunk_layout, "chunk_layout", what, file.path);
  merge_field(o.prefill_tokens, f.prefill_tokens, "prefill_tokens", what, file.path);
  merge_field(o.tokens_per_launch, f.tokens_per_launch, "tokens_per_launch", what, file.path);
  merge_field(o.contract, f.contract, "contract", what, file.path);
  merge_field(o.decode_contract, f.decode_contract, "decode_contract", what, file.path);
  if (!o.source) o.source = f.source;  // free text: not an option, never a contradiction
  return o;
}

Problem problem_of(const LoadedFile& file, const DumpOptions& o) {
  tensor_file::ProblemFileOptions po;
  if (o.input_format) po.formats.input = *o.input_format;
  if (o.state_format) po.formats.state = *o.state_format;
  if (o.output_format) po.formats.output = *o.output_format;
  po.dt_softplus = o.dt_softplus.value_or(false);
  if (o.dt_limit) {
    po.dt_limit_lo = o.dt_limit->first;
    po.dt_limit_hi = o.dt_limit->second;
  }
  return tensor_file::problem_from_tensors(file.tensors, file.path, po);
}

verify::ExternalKernel kernel_of(const DumpOptions& o, const LoadedFile& problem_file, const Problem& problem,
                                 const std::string& prefix) {
  if (!o.kernel) {
    throw UsageError("no kernel: give --" + prefix + "kernel ssu|chunk_scan|handoff, or store 'ssmv.kernel' in " +
                     problem_file.path + " (docs/tensor-files.md)");
  }
  verify::ExternalKernel k;
  k.family = *o.kernel;
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
      tensor_file::prefill_tokens_from_tensors(problem_file.tensors, problem_file.path, problem);
  if (k.family != "handoff") {
    if (tensor || o.prefill_tokens) {
      throw UsageError(std::string(tensor ? "tensor 'prefill_tokens' in " + problem_file.path
                                          : "option '--" + prefix + "prefill-tokens'") +
                       " given for kernel '" + k.family +
                       "': prefill tokens describe a hand-off (--" + prefix + "kernel handoff)");
    }
  } else if (tensor && o.prefill_tokens) {
    for (size_t q = 0; q < tensor->size(); ++q) {
      if ((*tensor)[q] != *o.prefill_tokens) {
        throw UsageError("prefill tokens: " + std::to_string(*o.prefill_tokens) + " (option or metadata) contradicts " +
                         problem_file.path + " tensor 'prefill_tokens'[" + std::to_string(q) + "] = " +
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
                     "'ssmv.prefill_tokens', or a tensor prefill_tokens [S] in " + problem_file.path);
  }
  k.tokens_per_launch = o.tokens_per_launch.value_or(1);
  verify::validate_external(problem, k);
  return k;
}

ResolvedDump resolve_dump(const std::string& problem_path, const std::string& outputs_path,
                          const DeclaredOptions& declared) {
  LoadedFile problem_file = load_dump_file(problem_path);
  contracts_override(declared.dump, problem_file, "");
  DumpOptions options = merge_declared(resolve_declared(declared), "option", problem_file);
  LoadedFile outputs_file;
  const bool separate_outputs = !outputs_path.empty() && outputs_path != problem_path;
  if (separate_outputs) {
    outputs_file = load_dump_file(outputs_path);
    contracts_override(declared.dump, outputs_file, "");
    options = merge_declared(options, "option or " + problem_path + " metadata", outputs_file);
  }
  ResolvedDump d;
  d.problem = problem_of(problem_file, options);
  d.kernel = kernel_of(options, problem_file, d.problem, "");
  const LoadedFile& outputs = separate_outputs ? outputs_file : problem_file;
  d.outputs = tensor_file::outputs_from_tensors(outputs.tensors, outputs.path, d.problem);
  return d;
}

}  // namespace ssmv::cli
