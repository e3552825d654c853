#include "verify/cli/run_command.h"

#include <chrono>
#include <cstdio>
#include <string>

#include "reference/reference.h"
#include "verify/cli/command_line.h"
#include "verify/cli/device_option.h"
#include "verify/cli/verdict_table.h"
#include "verify/run/default_suite.h"

namespace ssmv::cli {

int run_command(const std::vector<std::string>& args) {
  std::string device_text = "auto", json_path, markdown_path, junit_path;
  CommandLine line("ssmv run",
                   "Runs the bundled kernels (Mamba2's SSU decode and chunk_scan prefill, both contracts, and the "
                   "chunk_scan -> SSU hand-off; the Mamba-3 SISO decode step) on the built-in default suite "
                   "(Mamba2-realistic data, bf16 inputs, fp32 and bf16 state; Mamba-3 data drawn like mamba_ssm's "
                   "test) and judges every output element against the certified MPFR reference and the kernel's "
                   "per-element error bound. Then the same prompt through chunk_scan and through SSU, side by side: "
                   "is their divergence explained by the sum of their bounds?",
                   "exit codes: 0 every element within its contract, 1 a VIOLATION or INVALID, 2 bad usage.");
  line.text("--device", "auto|twin|gpu", "auto (default): the GPU when one is present, the host twins otherwise",
            device_text);
  line.integer("--threads", "N", "reference worker threads (default 0: every core; results identical)", 0, 1024,
               [](int64_t n) { ref::set_default_threads(int(n)); });
  line.report_files(json_path, markdown_path, junit_path);
  if (!line.parse(args)) return 0;
  const verify::Device device = parse_device(device_text, /*allow_auto=*/true);

  std::printf("ssmv run: default suite on the %s\n",
              device == verify::Device::gpu ? "GPU" : "host twins (no GPU used)");
  const auto t0 = std::chrono::steady_clock::now();
  VerdictTable table("ssmv run");
  for (const verify::SuiteCase& c : verify::default_suite()) {
    std::printf("  %-58s %s\n", c.name.c_str(), c.problem.c_str());
    std::fflush(stdout);
    verify::ReportEntry entry = c.run(device);
    entry.name = c.name;
    entry.problem = c.problem;
    table.add(std::move(entry));
  }
  table.add(verify::default_comparison(device));
  std::printf("\n");
  table.print(stdout);
  table.print_bad_elements(stdout);
  table.print_comparisons(stdout);
  table.write_files(json_path, markdown_path, junit_path);
  if (!table.ok()) {
    std::printf("\nnext: --markdown FILE lists the bad elements and the worst one's inputs\n");
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("\n%s — %.1f s\n", table.ok() ? "no VIOLATION, no INVALID" : "FOUND VIOLATION or INVALID", seconds);
  return table.ok() ? 0 : 1;
}

}  // namespace ssmv::cli
