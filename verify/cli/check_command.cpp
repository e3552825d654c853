#include "verify/cli/check_command.h"

#include <cstdio>
#include <string>

#include "verify/cli/args.h"
#include "verify/cli/verdict_table.h"
#include "verify/contract_json.h"
#include "verify/kernel_check.h"
#include "verify/tensor_file/problem_file.h"

namespace ssmv::cli {
namespace {

Format format_option(ArgReader& reader, const std::string& flag) {
  const std::string text = reader.value(flag);
  Format f;
  if (!parse_format(text, f)) {
    throw UsageError("option '" + flag + "' = '" + text + "': expected fp32, bf16 or fp16");
  }
  return f;
}

// "LO,HI" with each part a number, inf or -inf.
void dt_limit_option(const std::string& text, float& lo, float& hi) {
  const size_t comma = text.find(',');
  const auto parse = [&](const std::string& part) {
    try {
      size_t used = 0;
      const float v = std::stof(part, &used);
      if (used != part.size()) throw std::invalid_argument("trailing text");
      return v;
    } catch (const std::exception&) {
      throw UsageError("option '--dt-limit' = '" + text + "': '" + part + "' is not a number");
    }
  };
  if (comma == std::string::npos) throw UsageError("option '--dt-limit' = '" + text + "': expected LO,HI");
  lo = parse(text.substr(0, comma));
  hi = parse(text.substr(comma + 1));
}

}  // namespace

void check_usage() {
  std::printf(
      "usage: ssmv check --problem FILE [--outputs FILE] --kernel ssu|chunk_scan\n"
      "                  [--chunk-size L] [--contract NAME|FILE.json]\n"
      "                  [--input-format F] [--state-format F] [--output-format F]\n"
      "                  [--dt-softplus] [--dt-limit LO,HI] [--json FILE] [--markdown FILE]\n"
      "  Verifies a kernel written elsewhere from a dump of its inputs and outputs (.npz, .npy\n"
      "  or .safetensors; names and layouts in docs/tensor-files.md): every element of y (and of\n"
      "  final_states, when present) against the certified MPFR reference and the per-element\n"
      "  bound of the contract.\n"
      "  --problem FILE     x, dt, A, B, C and optional D, z, dt_bias, initial_states, cu_seqlens\n"
      "  --outputs FILE     y and optional final_states (default: the problem file)\n"
      "  --kernel           ssu: token-by-token decode, the state stored in the state format\n"
      "                     between tokens; chunk_scan: chunked prefill with --chunk-size\n"
      "  --chunk-size L     chunk length of a chunked kernel (default 256)\n"
      "  --contract         a preset (ssu, chunk_scan.production, chunk_scan.fp32) or a contract\n"
      "                     JSON file (docs/contracts.md); default: the kernel's bundled preset\n"
      "  --input-format F   x, dt, B, C, z (default bf16; bf16 may be stored as int16 bit patterns)\n"
      "  --state-format F   initial_states, final_states (default fp32)\n"
      "  --output-format F  y (default bf16)\n"
      "  --dt-softplus      δ = softplus(dt + dt_bias)\n"
      "  --dt-limit LO,HI   δ = clamp(δ, LO, HI)\n"
      "  --json / --markdown FILE  also write the report (atomically)\n");
}

int check_command(const std::vector<std::string>& args) {
  std::string problem_path, outputs_path, kernel, contract_name, json_path, markdown_path;
  int64_t chunk_size = 256;
  tensor_file::ProblemFileOptions options;
  ArgReader reader(args);
  while (reader.more()) {
    const std::string flag = reader.next();
    if (flag == "--problem") problem_path = reader.value(flag);
    else if (flag == "--outputs") outputs_path = reader.value(flag);
    else if (flag == "--kernel") kernel = reader.value(flag);
    else if (flag == "--chunk-size") chunk_size = reader.value_int(flag, 1, 1 << 20);
    else if (flag == "--contract") contract_name = reader.value(flag);
    else if (flag == "--input-format") options.formats.input = format_option(reader, flag);
    else if (flag == "--state-format") options.formats.state = format_option(reader, flag);
    else if (flag == "--output-format") options.formats.output = format_option(reader, flag);
    else if (flag == "--dt-softplus") options.dt_softplus = true;
    else if (flag == "--dt-limit") dt_limit_option(reader.value(flag), options.dt_limit_lo, options.dt_limit_hi);
    else if (flag == "--json") json_path = reader.value(flag);
    else if (flag == "--markdown") markdown_path = reader.value(flag);
    else if (flag == "--help" || flag == "-h") { check_usage(); return 0; }
    else throw UsageError("ssmv check: unknown option '" + flag + "'");
  }
  if (problem_path.empty()) throw UsageError("ssmv check: --problem FILE is required");
  if (kernel != "ssu" && kernel != "chunk_scan") {
    throw UsageError("option '--kernel' = '" + kernel + "': expected ssu or chunk_scan");
  }
  if (outputs_path.empty()) outputs_path = problem_path;
  if (contract_name.empty()) contract_name = kernel == "ssu" ? "ssu" : "chunk_scan.production";

  const Contract contract = verify::load_contract(contract_name, kernel == "ssu" ? 0 : chunk_size);
  if ((kernel == "ssu") != (contract.family == Family::sequential)) {
    throw UsageError("contract '" + contract.name + "' is of the " +
                     std::string(verify::family_name(contract.family)) + " family; kernel '" + kernel +
                     "' needs the " + (kernel == "ssu" ? "sequential" : "chunked") + " family");
  }
  const Problem problem = tensor_file::load_problem_file(problem_path, options);
  const tensor_file::KernelOutputs outputs = tensor_file::load_outputs_file(outputs_path, problem);

  const verify::KernelCheck kc = verify::check_outputs(problem, contract, kernel, outputs.y, outputs.final_states);
  VerdictTable table("ssmv check");
  table.add(verify::report_entry(problem_path, kc, problem));
  table.print(stdout);
  table.write_files(json_path, markdown_path);
  std::printf("\n%s\n", table.ok() ? "no VIOLATION, no INVALID" : "FOUND VIOLATION or INVALID");
  return table.ok() ? 0 : 1;
}

}  // namespace ssmv::cli
