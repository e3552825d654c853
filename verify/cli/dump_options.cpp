#include "verify/cli/dump_options.h"

#include <cstdio>

#include "verify/family/registry.h"
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
  std::string kernels;  // each registered family's kernels, as it describes them
  for (const family::Family* f : family::families()) kernels += (kernels.empty() ? "" : "; ") + f->kernel_help();
  line.text(kernel, "K", side + kernels, [&o, kernel](const std::string& k) {
    if (family::family_of_kernel(k) == nullptr) {
      throw UsageError("option '" + kernel + "' = '" + k + "': expected " +
                       tensor_file::kernel_choices(family::kernel_names()));
    }
    o.kernel = k;
  });
  line.text("--" + prefix + "contract", "NAME|FILE", side + "the (chunked part's) precision contract: a preset "
            "(ssmv contract list) or a contract JSON file (docs/contracts.md); default ssu for ssu, "
            "chunk_scan.production for chunk_scan and handoff, mamba3_siso_step.production for mamba3_step, "
            "mamba3_siso_combined.production for mamba3_prefill and mamba3_handoff; on a self-describing dump it "
            "replaces the dump's contract",
            [&o](const std::string& v) { o.contract = v; });
  line.may_read_file("--" + prefix + "contract");
  line.text("--" + prefix + "decode-contract", "NAME|FILE", side + "handoff, mamba3_handoff: the decode part's contract (default ssu; "
            "mamba3_siso_step.production for mamba3_handoff)",
            [&o](const std::string& v) { o.decode_contract = v; });
  line.may_read_file("--" + prefix + "decode-contract");
  line.integer("--" + prefix + "chunk-size", "L", side + "chunk length of a chunked kernel (default 256; 64 for "
               "mamba3_prefill and mamba3_handoff, mamba3_siso_combined's)", 1, 1 << 20,
               [&o](int64_t v) { o.chunk_size = v; });
  line.text(layout, "sequence|global", side + "sequence: chunks restart at every sequence; global: chunk boundaries "
            "at multiples of L in the packed token axis (mamba_ssm varlen); default: the contract's",
            [&o, layout](const std::string& v) {
    if (v != "sequence" && v != "global") throw UsageError("option '" + layout + "' = '" + v + "': expected sequence or global");
    o.chunk_layout = v;
  });
  line.integer("--" + prefix + "prefill-tokens", "K", side + "handoff, mamba3_handoff: K tokens of every sequence through "
               "the chunked kernel (handoff also: a tensor prefill_tokens [S] in the file, per sequence)", 0, kMaxTokens,
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
  f.declared = tensor_file::dump_options_from_metadata(metadata, path, family::kernel_names());
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

DumpOnDisk read_dump(const std::string& problem_path, const std::string& outputs_path, const DeclaredOptions& declared) {
  DumpOnDisk d;
  d.problem_file = load_dump_file(problem_path);
  contracts_override(declared.dump, d.problem_file, "");
  d.options = merge_declared(resolve_declared(declared), "option", d.problem_file);
  if (!outputs_path.empty() && outputs_path != problem_path) {
    d.outputs_file = load_dump_file(outputs_path);
    contracts_override(declared.dump, *d.outputs_file, "");
    d.options = merge_declared(d.options, "option or " + problem_path + " metadata", *d.outputs_file);
  }
  return d;
}

family::DumpFiles DumpOnDisk::files() const {
  const LoadedFile& outputs = outputs_file ? *outputs_file : problem_file;
  family::DumpFiles files;
  files.problem_path = problem_file.path;
  files.problem_tensors = &problem_file.tensors;
  files.outputs_path = outputs.path;
  files.output_tensors = &outputs.tensors;
  files.options = options;
  return files;  // launch_path and launch_tensors empty: the problem file's; flag_prefix "": check's
}

const family::Family& family_of(const DumpOptions& o, const std::string& problem_path, const std::string& prefix) {
  std::string choices;
  for (const std::string& k : family::kernel_names()) choices += (choices.empty() ? "" : "|") + k;
  if (!o.kernel) {
    throw UsageError("no kernel: give --" + prefix + "kernel " + choices + ", or store 'ssmv.kernel' in " +
                     problem_path + " (docs/tensor-files.md)");
  }
  const family::Family* f = family::family_of_kernel(*o.kernel);
  // Flags and metadata are checked against the registry when read; a caller's own options may not be.
  if (f == nullptr) throw UsageError("kernel '" + *o.kernel + "': expected " + choices);
  return *f;
}

}  // namespace ssmv::cli
