// The ssmv command line: usage text and the dispatch to the commands, as a function so that
// other executables can be ssmv with something linked differently — the planted-bug
// catalogue's binaries (properties/planted/) are ssmv built with a broken host twin.
#include "verify/cli/dispatch.h"

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "spec/problem.h"
#include "verify/cli/command_line.h"
#include "verify/cli/bounds_command.h"
#include "verify/cli/campaign_command.h"
#include "verify/cli/check_command.h"
#include "verify/cli/compare_command.h"
#include "verify/cli/contract_command.h"
#include "verify/cli/reference_command.h"
#include "verify/cli/replay_command.h"
#include "verify/cli/run_command.h"

#ifndef SSMV_VERSION
#define SSMV_VERSION "unknown"
#endif

namespace {

using Command = int (*)(const std::vector<std::string>&);

// Every command, its one-line summary (the top-level help) and its function; each command's
// own help is generated from its option definitions (`ssmv COMMAND --help`).
struct CommandEntry {
  const char* name;
  const char* summary;
  Command run;
};
constexpr CommandEntry kCommands[] = {
    {"run", "the bundled kernels on the built-in default suite, and the verdict table (the default)", ssmv::cli::run_command},
    {"check", "verify an external kernel's dump (tensor files) against its contract", ssmv::cli::check_command},
    {"compare", "two dumps of the same problem (e.g. chunk_scan and SSU) side by side", ssmv::cli::compare_command},
    {"contract", "list the contract presets, or show one as editable JSON", ssmv::cli::contract_command},
    {"replay", "re-run a counterexample file written by the property suites", ssmv::cli::replay_command},
    {"bounds", "the contracts' error bounds over a grid of shapes, beside the twins' errors "
               "(docs/error-bounds.md)", ssmv::cli::bounds_command},
    {"campaign", "property campaigns over MPI ranks or processes (runs ssmv-campaign; docs/campaigns.md)",
     ssmv::cli::campaign_command},
    {"reference", "compute and print the certified reference of a built-in problem", ssmv::cli::reference_command},
};

void usage() {
  std::printf("ssmv %s — verify Mamba2 SSM kernels against certified MPFR ground truth\n\n"
              "usage: ssmv [COMMAND] [OPTIONS]\ncommands:\n", SSMV_VERSION);
  for (const CommandEntry& c : kCommands) std::printf("  %-11s %s\n", c.name, c.summary);
  std::printf("options:\n"
              "  --help, -h  this text; `ssmv COMMAND --help` for a command's options\n"
              "  --version   print the version\n"
              "exit codes: 0 ok, 1 a check failed (certification, verdict), 2 bad input or usage,\n"
              "            3 SUSPICIOUS (ssmv check)\n");
}

}  // namespace

namespace ssmv::cli {

int run_ssmv(std::vector<std::string> args) {
  try {
    if (!args.empty() && (args[0] == "--help" || args[0] == "-h" || args[0] == "help")) {
      usage();
      return 0;
    }
    if (!args.empty() && args[0] == "--version") {
      std::printf("ssmv %s\n", SSMV_VERSION);
      return 0;
    }
    std::string command = "run";
    if (!args.empty() && args[0].rfind("-", 0) != 0) {
      command = args[0];
      args.erase(args.begin());
    }
    for (const CommandEntry& c : kCommands) {
      if (command == c.name) return c.run(args);
    }
    throw ssmv::cli::UsageError("unknown command '" + command + "' (try ssmv --help)");
  } catch (const ssmv::cli::UsageError& e) {
    const std::string msg = e.what();
    std::fprintf(stderr, "%s%s\n", msg.rfind("ssmv ", 0) == 0 ? "" : "ssmv: ", msg.c_str());
    return 2;
  } catch (const ssmv::ProblemError& e) {
    std::fprintf(stderr, "ssmv: bad problem: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ssmv: error: %s\n", e.what());
    return 2;
  }
}

}  // namespace ssmv::cli
