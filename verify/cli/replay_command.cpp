#include "verify/cli/replay_command.h"

#include <cstdint>
#include <cstdio>

#include "verify/cli/command_line.h"
#include "verify/cli/device_option.h"
#include "verify/cli/verdict_table.h"
#include "verify/reports/counterexample.h"
#include "verify/run/kernel_check.h"

namespace ssmv::cli {

void replay_usage() {
  std::printf(
      "usage: ssmv replay FILE [--device twin|gpu] [--json FILE] [--markdown FILE]\n"
      "  Re-runs the counterexample in FILE (written by the property suites; format in\n"
      "  docs/counterexample-format.md) with the bundled kernel it names, judges it against the\n"
      "  certified reference and the contract's bounds, and prints the verdict next to the\n"
      "  verdict recorded in the file.\n"
      "  --device  twin (default: the host twin, on any machine) or gpu\n");
}

int replay_command(const std::vector<std::string>& args) {
  std::string path, device_text = "twin", json_path, markdown_path;
  CommandLine line("ssmv replay");
  line.text("--device", device_text);
  line.report_files(json_path, markdown_path);
  if (!line.parse(args, replay_usage, SIZE_MAX)) return 0;
  const std::vector<std::string>& files = line.positionals();
  if (files.empty()) throw UsageError("ssmv replay: FILE is required");
  if (files.size() > 1) throw UsageError("ssmv replay: one FILE only ('" + files[0] + "' and '" + files[1] + "' given)");
  path = files[0];
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
                "  build/release/planted/ssmv-planted-%s replay FILE\n",
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
  table.write_files(json_path, markdown_path);
  const std::string now(verify::verdict_name(kc.overall()));
  std::printf("\nverdict now: %s (recorded: %s)\n", now.c_str(), cex.verdict.c_str());
  return table.ok() ? 0 : 1;
}

}  // namespace ssmv::cli
