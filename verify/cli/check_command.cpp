#include "verify/cli/check_command.h"

#include <cstdio>
#include <string>

#include "reference/reference.h"
#include "verify/cli/command_line.h"
#include "verify/cli/dump_options.h"
#include "verify/cli/verdict_table.h"
#include "verify/judge/external_check.h"

namespace ssmv::cli {

void check_usage() {
  std::printf(
      "usage: ssmv check [FILE] [--problem FILE] [--outputs FILE] [--kernel ssu|chunk_scan|handoff]\n"
      "                  [--contract NAME|FILE.json] [--decode-contract NAME|FILE.json]\n"
      "                  [--chunk-size L] [--chunk-layout sequence|global] [--prefill-tokens K]\n"
      "                  [--input-format F] [--state-format F] [--output-format F]\n"
      "                  [--dt-softplus | --no-dt-softplus] [--dt-limit LO,HI] [--round-dt-limit]\n"
      "                  [--threads N] [--json FILE] [--markdown FILE]\n"
      "  Verifies a kernel written elsewhere from a dump of its inputs and outputs (.npz, .npy\n"
      "  or .safetensors; names and layouts in docs/tensor-files.md): every element of y (and of\n"
      "  final_states, when present) against the certified MPFR reference and the per-element\n"
      "  bound of the contract. A self-describing dump stores these options in its metadata\n"
      "  (ssmv.kernel, ssmv.dt_softplus, ...): then `ssmv check FILE` needs no flags, and a\n"
      "  flag that contradicts the file is an error naming both values.\n"
      "  FILE, --problem FILE  x, dt, A, B, C and optional D, z, dt_bias, initial_states,\n"
      "                     cu_seqlens, prefill_tokens\n"
      "  --outputs FILE     y and optional final_states (default: the problem file)\n"
      "  --kernel           ssu: a decode kernel launched once per token, the state stored in the\n"
      "                     state format between tokens; chunk_scan: a chunked prefill with\n"
      "                     --chunk-size; handoff: the first K tokens of every sequence through\n"
      "                     the chunked kernel, the rest decoded token by token from the state it\n"
      "                     stored in the state format\n"
      "  --contract         the (chunked part's) contract: a preset (ssmv contract list) or a\n"
      "                     contract JSON file (docs/contracts.md); default ssu for ssu,\n"
      "                     chunk_scan.production otherwise\n"
      "  --decode-contract  handoff: the decode part's contract (default ssu)\n"
      "  --chunk-size L     chunk length of a chunked kernel (default 256)\n"
      "  --chunk-layout     sequence: chunks restart at every sequence; global: chunk boundaries\n"
      "                     at multiples of L in the packed token axis (mamba_ssm varlen);\n"
      "                     default: the contract's\n"
      "  --prefill-tokens K handoff: K tokens of every sequence through the chunked kernel (or a\n"
      "                     tensor prefill_tokens [S] in the problem file, per sequence)\n"
      "  --input-format F   x, dt, B, C, z (default bf16; bf16 may be stored as int16 bit patterns)\n"
      "  --state-format F   initial_states, final_states (default fp32)\n"
      "  --output-format F  y (default bf16)\n"
      "  --dt-softplus      δ = softplus(dt + dt_bias) (--no-dt-softplus: not; default not)\n"
      "  --dt-limit LO,HI   δ = clamp(δ, LO, HI); fp32 values, as kernels receive them: a value\n"
      "                     that is not an fp32 (0.1) is refused unless --round-dt-limit\n"
      "  --threads N        reference worker threads (default 0: every core; results identical)\n"
      "  --json / --markdown FILE  also write the report (atomically)\n");
}

int check_command(const std::vector<std::string>& args) {
  std::string problem_path, outputs_path, json_path, markdown_path;
  DeclaredOptions declared;
  CommandLine line("ssmv check");
  add_problem_options(line, declared);
  add_kernel_options(line, "", declared.dump);
  line.text("--problem", problem_path);
  line.text("--outputs", outputs_path);
  line.report_files(json_path, markdown_path);
  line.integer("--threads", 0, 1024, [](int64_t n) { ref::set_default_threads(int(n)); });
  if (!line.parse(args, check_usage, 1)) return 0;
  // FILE is the problem file; one beside --problem is not an option.
  if (!line.positionals().empty()) {
    if (!problem_path.empty()) throw UsageError("ssmv check: unknown option '" + line.positionals()[0] + "'");
    problem_path = line.positionals()[0];
  }
  if (problem_path.empty()) throw UsageError("ssmv check: a problem file is required (FILE or --problem FILE)");
  check_writable("--json", json_path);
  check_writable("--markdown", markdown_path);

  const ResolvedDump dump = resolve_dump(problem_path, outputs_path, declared);
  const verify::KernelCheck kc =
      verify::check_external(dump.problem, dump.kernel, dump.outputs.y, dump.outputs.final_states,
                             verify::ElementDetail::summary);  // the table prints no per-element vectors
  VerdictTable table("ssmv check");
  table.add(verify::report_entry(problem_path, kc, dump.problem));
  table.print(stdout);
  table.write_files(json_path, markdown_path);
  std::printf("\n%s\n", table.ok() ? "no VIOLATION, no INVALID" : "FOUND VIOLATION or INVALID");
  return table.ok() ? 0 : 1;
}

}  // namespace ssmv::cli
