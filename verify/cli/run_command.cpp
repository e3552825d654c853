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

void run_usage() {
  std::printf(
      "usage: ssmv run [--device auto|twin|gpu] [--threads N] [--json FILE] [--markdown FILE]\n"
      "  Runs both bundled kernels (SSU decode and chunk_scan prefill, both contracts, and the\n"
      "  chunk_scan -> SSU hand-off) on the built-in default suite (Mamba2-realistic data, bf16\n"
      "  inputs, fp32 and bf16 state) and judges every output element against the certified\n"
      "  MPFR reference and the kernel's per-element error bound. Then the same prompt through\n"
      "  chunk_scan and through SSU, side by side: is their divergence explained by the sum of\n"
      "  their bounds?\n"
      "  --device  auto (default): the GPU when one is present, the host twins otherwise\n"
      "  --threads N        reference worker threads (default 0: every core; results identical)\n"
      "  --json FILE, --markdown FILE  also write the report (atomically; schema in\n"
      "            docs/report-schema.md)\n");
}

int run_command(const std::vector<std::string>& args) {
  std::string device_text = "auto", json_path, markdown_path;
  CommandLine line("ssmv run");
  line.text("--device", device_text);
  line.report_files(json_path, markdown_path);
  line.integer("--threads", 0, 1024, [](int64_t n) { ref::set_default_threads(int(n)); });
  if (!line.parse(args, run_usage)) return 0;
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
  table.print_comparisons(stdout);
  table.write_files(json_path, markdown_path);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("\n%s — %.1f s\n", table.ok() ? "no VIOLATION, no INVALID" : "FOUND VIOLATION or INVALID", seconds);
  return table.ok() ? 0 : 1;
}

}  // namespace ssmv::cli
