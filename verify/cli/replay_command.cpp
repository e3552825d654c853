#include "verify/cli/replay_command.h"

#include <cstdint>
#include <cstdio>

#include "verify/cli/command_line.h"
#include "verify/cli/device_option.h"
#include "verify/cli/verdict_table.h"
#include "verify/reports/counterexample.h"
#include "verify/run/kernel_check.h"

namespace ssmv::cli {

int replay_command(const std::vector<std::string>& args) {
  std::string path, device_text = "twin", json_path, markdown_path, junit_path;
  CommandLine line("ssmv replay",
                   "Re-runs the counterexample in FILE (written by the property suites; format in "
                   "docs/counterexample-format.md) with the bundled kernel it names, judges it against the certified "
                   "reference and the contract's bounds, and prints the verdict next to the verdict recorded in the "
                   "file.",
                   "exit codes: 0 within contract now, 1 a VIOLATION or INVALID now, 2 bad input or usage.");
  line.positional("FILE", "the counterexample file", path, true, "one counterexample per replay");
  line.text("--device", "twin|gpu", "twin (default: the host twin, on any machine) or gpu", device_text);
  line.report_files(json_path, markdown_path, junit_path);
  if (!line.parse(args)) return 0;
  if (path.empty()) throw UsageError("ssmv replay: FILE is required");
  const verify::Device device = parse_device(device_text, /*allow_auto=*/false);

  const verify::Counterexample cex = verify::read_counterexample(path);
  std::printf("ssmv replay %s\n  kernel %s, contract %s, property %s, recorded verdict %s, found on %s\n",
              path.c_str(), cex.kernel.c_str(), cex.contract.c_str(), cex.property.c_str(),
              cex.verdict.c_str(), cex.device.c_str());
  if (!cex.reproduce.empty()) std::printf("  reproduce: %s\n", cex.reproduce.c_str());
  if (!cex.planted_bug.empty()) {
    std::printf("  note: recorded with the planted bug '%s' (a deliberately broken twin from\n"
                "  properties/planted/catalogue.json); this replay runs the bundled kernel, so a correct\n"
                "  kernel's verdict is expected here; the broken one replays with\n"
                "  build/release/planted/ssmv-planted-%s replay FILE (built by scripts/build.sh --with-planted)\n",
                cex.planted_bug.c_str(), cex.planted_bug.c_str());
  }
  const verify::KernelCheck kc = verify::check_counterexample(cex, device);  // fields checked by the reader
  VerdictTable table("ssmv replay " + path);
  if (cex.kernel == "ssu") {
    table.add(verify::report_entry(path, kc, cex.decode));
  } else {
    table.add(verify::report_entry(path, kc, cex.problem));
  }
  table.print(stdout);
  table.print_bad_elements(stdout);
  table.write_files(json_path, markdown_path, junit_path);
  if (!table.ok()) {
    std::printf("\nnext: --markdown FILE lists the bad elements and the worst one's inputs\n");
  }
  const std::string now(verify::verdict_name(kc.overall()));
  std::printf("\nverdict now: %s (recorded: %s)\n", now.c_str(), cex.verdict.c_str());
  return table.ok() ? 0 : 1;
}

}  // namespace ssmv::cli
