#include "verify/cli/check_command.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "reference/reference.h"
#include "spec/progress.h"
#include "verify/cli/command_line.h"
#include "verify/cli/dump_options.h"
#include "verify/cli/verdict_table.h"
#include "verify/judge/external_check.h"
#include "verify/judge/stochastic_bias.h"
#include "verify/sharp/sharp_verdict.h"

namespace ssmv::cli {
namespace {

// A real option value in the open interval (lo, hi), or a UsageError naming the option.
double parse_real(const std::string& flag, const std::string& v, double lo, double hi, const char* expected) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end != '\0' || !(x > lo && x < hi)) {
    throw UsageError("option '" + flag + "' = '" + v + "': expected " + expected);
  }
  return x;
}

// "timings: reading the dump 1.21 s, δ and decay 0.32 s, ..." (spec/progress.h phases).
void print_timings(std::FILE* out) {
  std::string text;
  double sum = 0;
  for (const progress::PhaseTime& t : progress::timings()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, " %.2f s", t.seconds);
    text += (text.empty() ? "" : ", ") + t.name + buf;
    sum += t.seconds;
  }
  std::fprintf(out, "timings: %s (phases %.2f s)\n", text.c_str(), sum);
}

}  // namespace

void check_usage() {
  std::printf(
      "usage: ssmv check [FILE] [--problem FILE] [--outputs FILE] [--kernel ssu|chunk_scan|handoff]\n"
      "                  [--contract NAME|FILE.json] [--decode-contract NAME|FILE.json]\n"
      "                  [--chunk-size L] [--chunk-layout sequence|global] [--prefill-tokens K]\n"
      "                  [--tokens-per-launch K] [--false-alarm P]\n"
      "                  [--input-format F] [--state-format F] [--output-format F]\n"
      "                  [--dt-softplus | --no-dt-softplus] [--dt-limit LO,HI] [--round-dt-limit]\n"
      "                  [--no-sharp] [--sharp-runs M] [--sharp-margin K] [--sharp-false-alarm P]\n"
      "                  [--sharp-seed S] [--threads N] [--json FILE] [--markdown FILE]\n"
      "                  [--quiet] [--timings]\n"
      "  Verifies a kernel written elsewhere from a dump of its inputs and outputs (.npz, .npy\n"
      "  or .safetensors; names and layouts in docs/tensor-files.md): every element of y (and of\n"
      "  final_states, when present) against the certified MPFR reference and the per-element\n"
      "  bound of the contract. A self-describing dump stores these options in its metadata\n"
      "  (ssmv.kernel, ssmv.dt_softplus, ...): then `ssmv check FILE` needs no flags, and a\n"
      "  flag that contradicts the file is an error naming both values.\n"
      "  FILE, --problem FILE  x, dt, A, B, C and optional D, z, dt_bias, initial_states,\n"
      "                     cu_seqlens, prefill_tokens\n"
      "  --outputs FILE     y and optional final_states (default: the problem file)\n"
      "  --kernel           ssu: a decode kernel launched once per token (or --tokens-per-launch),\n"
      "                     the state stored in the state format between launches; chunk_scan:\n"
      "                     a chunked prefill with --chunk-size; handoff: the first K tokens of\n"
      "                     every sequence through the chunked kernel, the rest decoded token by\n"
      "                     token from the state it stored in the state format\n"
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
      "  --tokens-per-launch K  ssu: the kernel ran K tokens of every sequence per launch, the\n"
      "                     state carried in fp32 within a launch and stored in the state format\n"
      "                     at its end (FlashInfer's multi-token kernel; default 1; metadata\n"
      "                     ssmv.tokens_per_launch); every sequence's length a multiple of K\n"
      "  --false-alarm P    a contract that rounds a stored tensor stochastically: that tensor's\n"
      "                     mean signed error is tested for bias, flagged with probability at most\n"
      "                     P when the rounding is unbiased (default 1e-6; a bias exits 1)\n"
      "  --input-format F   x, dt, B, C, z (default bf16; bf16 may be stored as int16 bit patterns)\n"
      "  --state-format F   initial_states, final_states (default fp32); int16_scaled: FlashInfer's\n"
      "                     int16 codes with each row's decode scale in initial_states_scale /\n"
      "                     final_states_scale [S, H, P] (decode kernels only)\n"
      "  --output-format F  y (default bf16)\n"
      "  --dt-softplus      δ = softplus(dt + dt_bias) (--no-dt-softplus: not; default not)\n"
      "  --dt-limit LO,HI   δ = clamp(δ, LO, HI); fp32 values, as kernels receive them: a value\n"
      "                     that is not an fp32 (0.1) is refused unless --round-dt-limit\n"
      "  --no-sharp         skip the sharp verdict (on by default): per tensor, is the error larger\n"
      "                     than the contract's own rounding model gives (SUSPICIOUS, exit 3 when\n"
      "                     nothing is VIOLATION or INVALID), and which extra rounding explains it\n"
      "                     (docs/sharp-verdicts.md)\n"
      "  --sharp-runs M     Monte Carlo runs of the contract's rounding model (default 8, >= 3)\n"
      "  --sharp-margin K   SUSPICIOUS needs K times the model's error energy (default 4, > 1)\n"
      "  --sharp-false-alarm P  and a false-alarm bound of at most P (default 1e-3)\n"
      "  --sharp-seed S     the runs' root seed (default 20261203)\n"
      "  --threads N        reference worker threads (default 0: every core; results identical)\n"
      "  --json / --markdown FILE  also write the report (atomically)\n"
      "  --quiet            no progress line on stderr (shown for a check that takes over 2 s:\n"
      "                     the phase, units done, rate and ETA; rewritten in place on a terminal,\n"
      "                     a plain line every 5 s otherwise)\n"
      "  --timings          print each phase's wall time on stderr at the end\n");
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
  double false_alarm = 1e-6;
  line.text("--false-alarm", [&false_alarm](const std::string& v) {
    false_alarm = parse_real("--false-alarm", v, 0.0, 1.0, "a probability in (0, 1)");
  });
  bool sharp = true;
  sharp::SharpOptions sharp_options;
  line.flag("--no-sharp", [&sharp] { sharp = false; });
  line.integer("--sharp-runs", 3, 1000, [&sharp_options](int64_t n) { sharp_options.runs = int(n); });
  line.text("--sharp-margin", [&sharp_options](const std::string& v) {
    sharp_options.margin = parse_real("--sharp-margin", v, 1.0, HUGE_VAL, "a number > 1");
  });
  line.text("--sharp-false-alarm", [&sharp_options](const std::string& v) {
    sharp_options.false_alarm = parse_real("--sharp-false-alarm", v, 0.0, 1.0, "a probability in (0, 1)");
  });
  line.u64("--sharp-seed", [&sharp_options](uint64_t s) { sharp_options.seed = s; });
  bool quiet = false, timings = false;
  line.flag("--quiet", [&quiet] { quiet = true; });
  line.flag("--timings", [&timings] { timings = true; });
  if (!line.parse(args, check_usage, 1)) return 0;
  // FILE is the problem file; one beside --problem is not an option.
  if (!line.positionals().empty()) {
    if (!problem_path.empty()) throw UsageError("ssmv check: unknown option '" + line.positionals()[0] + "'");
    problem_path = line.positionals()[0];
  }
  if (problem_path.empty()) throw UsageError("ssmv check: a problem file is required (FILE or --problem FILE)");
  check_writable("--json", json_path);
  check_writable("--markdown", markdown_path);

  std::optional<progress::Display> display;
  if (!quiet) display.emplace(stderr, "ssmv check", isatty(fileno(stderr)) != 0);
  const ResolvedDump dump = [&] {
    const progress::Phase reading("reading the dump", 0, "");
    return resolve_dump(problem_path, outputs_path, declared);
  }();
  const Contract& contract = dump.kernel.family == "handoff" ? dump.kernel.decode_contract : dump.kernel.contract;
  const bool stochastic = verify::stores_stochastically(contract, "y", dump.problem.formats) ||
                          verify::stores_stochastically(contract, "final_state", dump.problem.formats);
  // The table prints no per-element vectors; the bias test of a stochastic rounding reads them.
  // The sharp verdict reads every element's bound (it judges one kernel per dump, not a
  // hand-off); without it the table needs none.
  const bool sharp_reads_bounds = sharp && dump.kernel.family != "handoff";
  verify::KernelCheck kc = verify::check_external(
      dump.problem, dump.kernel, dump.outputs.y, dump.outputs.final_states,
      stochastic ? verify::ElementDetail::elements
                 : (sharp_reads_bounds ? verify::ElementDetail::bounds : verify::ElementDetail::summary));
  if (sharp) {
    sharp_options.threads = ref::default_threads();
    sharp::sharp_verdicts(dump.problem, dump.kernel, kc, dump.outputs.y, dump.outputs.final_states, sharp_options);
  }
  const bool suspicious = sharp::any_suspicious(kc);
  display.reset();  // the progress line is cleared before the report is printed
  if (timings) print_timings(stderr);
  VerdictTable table("ssmv check");
  table.add(verify::report_entry(problem_path, kc, dump.problem));
  table.print(stdout);
  table.write_files(json_path, markdown_path);
  bool biased = false;
  for (const verify::TensorBias& b : verify::stochastic_biases(dump.problem, dump.kernel, kc, dump.outputs.y,
                                                               dump.outputs.final_states, false_alarm)) {
    std::printf("\nstochastic rounding of %s: %s\n", b.tensor.c_str(), b.bias.text().c_str());
    biased = biased || b.bias.biased;
  }
  if (sharp) {
    std::printf("\nsharp verdict (docs/sharp-verdicts.md):\n");
    for (const verify::TensorReport& t : kc.tensors) {
      if (!t.sharp.evaluated && t.sharp.why_not.empty()) continue;
      std::printf("  %s: %s\n", t.name.c_str(), t.sharp.text().c_str());
      for (size_t i = 1; i < t.sharp.attribution.size() && i < 3; ++i) {
        const verify::SharpCandidate& c = t.sharp.attribution[i];
        std::printf("      next: %s (explains %.1f%%)\n", c.name.c_str(), 100.0 * c.explained);
      }
    }
  }
  std::printf("\n%s\n", table.ok() ? "no VIOLATION, no INVALID" : "FOUND VIOLATION or INVALID");
  if (biased) std::printf("FOUND a biased stochastic rounding\n");
  if (suspicious) std::printf("FOUND a SUSPICIOUS tensor: its error is larger than rounding explains\n");
  if (!table.ok() || biased) return 1;
  return suspicious ? 3 : 0;
}

}  // namespace ssmv::cli
