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

void usage() {
  std::printf(
      "ssmv %s — verify Mamba2 SSM kernels against certified MPFR ground truth\n"
      "\n"
      "usage: ssmv [COMMAND] [OPTIONS]\n"
      "commands:\n"
      "  run         run the bundled kernels on the built-in default suite and print the\n"
      "              verdict table (the default command)\n"
      "  check       verify an external kernel's dump (tensor files) against its contract\n"
      "  compare     two dumps of the same problem (e.g. chunk_scan and SSU) side by side\n"
      "  contract    list the contract presets, or show one as editable JSON\n"
      "  replay      re-run a counterexample file written by the property suites\n"
      "  bounds      the contracts' error bounds over a grid of shapes, beside the twins'\n"
      "              measured error and allclose tolerances (docs/error-bounds.md)\n"
      "  campaign    property campaigns over MPI ranks or processes (runs ssmv-campaign;\n"
      "              docs/campaigns.md)\n"
      "  reference   compute and print the certified reference of a built-in problem\n"
      "options:\n"
      "  --help, -h  this text; `ssmv COMMAND --help` for a command's options\n"
      "  --version   print the version\n"
      "exit codes: 0 ok, 1 a check failed (certification, verdict), 2 bad input or usage\n",
      SSMV_VERSION);
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
    if (command == "run") return ssmv::cli::run_command(args);
    if (command == "check") return ssmv::cli::check_command(args);
    if (command == "compare") return ssmv::cli::compare_command(args);
    if (command == "contract") return ssmv::cli::contract_command(args);
    if (command == "replay") return ssmv::cli::replay_command(args);
    if (command == "bounds") return ssmv::cli::bounds_command(args);
    if (command == "campaign") return ssmv::cli::campaign_command(args);
    if (command == "reference") return ssmv::cli::reference_command(args);
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
