#include "verify/cli/check_command.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "reference/reference.h"
#include "spec/progress.h"
#include "verify/cli/command_line.h"
#include "verify/cli/dump_options.h"
#include "verify/cli/verdict_table.h"
#include "verify/family/family.h"
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

// "timings: reading the dump 1.21 s (3.9 cores), δ and decay 0.32 s (1.0 cores), ..." (spec/progress.h
// phases): each phase's wall time and how many cores were busy on average over it (its process CPU
// time / its wall time), so that a phase that leaves workers idle shows. A phase that ran beside the
// main ones is marked so ("sharp verdict: ... 2.10 s beside (14.2 cores)"): its cores are the
// process's, the main phase's work included, and it is not part of the phases' sum.
void print_timings(std::FILE* out) {
  std::string text;
  double sum = 0, cpu_sum = 0;
  for (const progress::PhaseTime& t : progress::timings()) {
    char buf[80];
    std::snprintf(buf, sizeof buf, " %.2f s%s (%.1f cores)", t.seconds, t.beside ? " beside" : "",
                  t.seconds > 0 ? t.cpu_seconds / t.seconds : 0.0);
    text += (text.empty() ? "" : ", ") + t.name + buf;
    if (t.beside) continue;
    sum += t.seconds;
    cpu_sum += t.cpu_seconds;
  }
  std::fprintf(out, "timings: %s (phases %.2f s, %.1f cores)\n", text.c_str(), sum, sum > 0 ? cpu_sum / sum : 0.0);
}

}  // namespace

int check_command(const std::vector<std::string>& args) {
  std::string problem_path, file_path, outputs_path, json_path, markdown_path, junit_path;
  DeclaredOptions declared;
  CommandLine line("ssmv check",
                   "Verifies a kernel written elsewhere from a dump of its inputs and outputs (.npz, .npy or "
                   ".safetensors; names and layouts in docs/tensor-files.md): every element of y (and of "
                   "final_states, when present) against the certified MPFR reference and the per-element bound of "
                   "the contract. A self-describing dump stores these options in its metadata (ssmv.kernel, "
                   "ssmv.dt_softplus, ...): then `ssmv check FILE` needs no flags, a flag that contradicts the file "
                   "is an error naming both values, and --contract re-judges the dump under another contract.",
                   "exit codes: 0 every element within its contract, 1 a VIOLATION, INVALID or biased stochastic "
                   "rounding, 2 bad input or usage, 3 SUSPICIOUS (within the bound but beyond what rounding gives).");
  line.positional("FILE", "the dump: x, dt, A, B, C and optional D, z, dt_bias, initial_states, cu_seqlens, "
                  "prefill_tokens; y and optional final_states", file_path, true,
                  "one dump per check, to compare two dumps of one problem use `ssmv compare --a A --b B`");
  line.group("Files");
  line.input_file("--problem", "the inputs, when they are not in FILE (instead of FILE)", problem_path);
  line.input_file("--outputs", "y and optional final_states (default: the problem file)", outputs_path);
  line.report_files(json_path, markdown_path, junit_path);
  add_kernel_options(line, "", declared.dump);
  add_problem_options(line, declared);
  line.group("Judging");
  line.integer("--threads", "N", "reference worker threads (default 0: every core; results identical)", 0, 1024,
               [](int64_t n) { ref::set_default_threads(int(n)); });
  double false_alarm = 1e-6;
  line.text("--false-alarm", "P", "a contract that rounds a stored tensor stochastically: that tensor's mean signed "
            "error is tested for bias, flagged with probability at most P when the rounding is unbiased (default "
            "1e-6; a bias exits 1)", [&false_alarm](const std::string& v) {
    false_alarm = parse_real("--false-alarm", v, 0.0, 1.0, "a probability in (0, 1)");
  });
  line.group("The sharp verdict (docs/sharp-verdicts.md)");
  bool sharp = true;
  sharp::SharpOptions sharp_options;
  line.flag("--no-sharp", "skip the sharp verdict (on by default): per tensor, is the error larger than the "
            "contract's own rounding model gives (SUSPICIOUS, exit 3 when nothing is VIOLATION or INVALID), and "
            "which extra rounding explains it", [&sharp] { sharp = false; });
  line.integer("--sharp-runs", "M", "Monte Carlo runs of the contract's rounding model (default 8, >= 3)", 3, 1000,
               [&sharp_options](int64_t n) { sharp_options.runs = int(n); });
  line.text("--sharp-margin", "K", "SUSPICIOUS needs K times the model's error energy (default 4, > 1)",
            [&sharp_options](const std::string& v) {
    sharp_options.margin = parse_real("--sharp-margin", v, 1.0, HUGE_VAL, "a number > 1");
  });
  line.text("--sharp-false-alarm", "P", "and a false-alarm bound of at most P (default 1e-3)",
            [&sharp_options](const std::string& v) {
    sharp_options.false_alarm = parse_real("--sharp-false-alarm", v, 0.0, 1.0, "a probability in (0, 1)");
  });
  line.u64("--sharp-seed", "S", "the runs' root seed (default 20261203)",
           [&sharp_options](uint64_t s) { sharp_options.seed = s; });
  for (const char* f : {"--sharp-runs", "--sharp-margin", "--sharp-false-alarm", "--sharp-seed"}) {
    line.excludes("--no-sharp", f);
  }
  line.group("Output");
  bool quiet = false, timings = false;
  line.flag("--quiet", "no progress line on stderr (shown for a check that takes over 2 s: the phase, units done, "
            "rate and ETA; rewritten in place on a terminal, a plain line every 5 s otherwise)",
            [&quiet] { quiet = true; });
  line.flag("--timings", "print each phase's wall time and busy cores (CPU time / wall time) on stderr at the end", [&timings] { timings = true; });
  line.excludes("--problem", "FILE");
  if (!line.parse(args)) return 0;
  if (!file_path.empty()) problem_path = file_path;
  if (problem_path.empty()) throw UsageError("ssmv check: a dump is required: ssmv check FILE (or --problem FILE)");

  std::optional<progress::Display> display;
  if (!quiet) display.emplace(stderr, "ssmv check", isatty(fileno(stderr)) != 0);
  // The family reads the problem, the kernel and the outputs; the files' tensors are dropped
  // before judging (their bytes are as large as the dump).
  const std::unique_ptr<family::Dump> dump = [&] {
    const progress::Phase reading("reading the dump", 0, "");
    const DumpOnDisk disk = read_dump(problem_path, outputs_path, declared);
    return family_of(disk.options, problem_path, "").read(disk.files());
  }();
  family::CheckOptions options;
  options.sharp = sharp;
  options.sharp_options = sharp_options;
  options.sharp_options.threads = ref::default_threads();
  options.false_alarm = false_alarm;
  family::CheckedDump checked;
  try {
    checked = dump->check(problem_path, options);
  } catch (const std::invalid_argument& e) {  // e.g. a transcendental outside its budget's range
    const std::string hint = dump->error_hint();
    throw UsageError("ssmv check " + problem_path + ": " + e.what() + (hint.empty() ? "" : "\n" + hint));
  }
  const bool suspicious = sharp::any_suspicious(checked.entry.check);
  display.reset();  // the progress line is cleared before the report is printed
  if (timings) print_timings(stderr);
  VerdictTable table("ssmv check");
  table.add(checked.entry);
  table.print(stdout);
  table.print_bad_elements(stdout);
  if (!table.ok()) {
    for (const std::string& hint : dump->failure_hints()) std::printf("\n%s\n", hint.c_str());
  }
  table.write_files(json_path, markdown_path, junit_path);
  if (!table.ok()) {
    std::printf("\nnext: --markdown FILE lists the bad elements and the worst one's inputs; `ssmv compare --a %s --b "
                "OTHER` sets this dump beside another kernel's on the same problem\n", problem_path.c_str());
  }
  bool biased = false;
  for (const verify::TensorBias& b : checked.biases) {
    std::printf("\nstochastic rounding of %s: %s\n", b.tensor.c_str(), b.bias.text().c_str());
    biased = biased || b.bias.biased;
  }
  if (sharp) {
    std::printf("\nsharp verdict (docs/sharp-verdicts.md):\n");
    for (const verify::TensorReport& t : checked.entry.check.tensors) {
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
