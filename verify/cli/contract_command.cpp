#include "verify/cli/contract_command.h"

#include <cstdio>

#include "verify/cli/command_line.h"
#include "verify/contracts/contract_json.h"

namespace ssmv::cli {

void contract_usage() {
  std::printf(
      "usage: ssmv contract list\n"
      "       ssmv contract show NAME|FILE.json [--chunk-size L]\n"
      "  list  the presets, one per line: name, family, kernel\n"
      "  show  a preset (or a contract file, validated) as the JSON of docs/contracts.md: save it,\n"
      "        edit it to describe your kernel, pass it to `ssmv check --contract FILE`.\n"
      "        --chunk-size L  the chunk length written into a chunked preset (default 256)\n");
}

int contract_command(const std::vector<std::string>& args) {
  if (args.empty()) throw UsageError("ssmv contract: expected 'list' or 'show NAME' (ssmv contract --help)");
  if (args[0] == "--help" || args[0] == "-h") {
    contract_usage();
    return 0;
  }
  if (args[0] == "list") {
    if (args.size() > 1) throw UsageError("ssmv contract list: unexpected argument '" + args[1] + "'");
    for (const std::string& name : verify::contract_preset_names()) {
      const Contract c = verify::contract_preset(name, 256);
      std::printf("%-28s %-10s %s\n", name.c_str(), std::string(verify::family_name(c.family)).c_str(),
                  c.kernel.c_str());
    }
    return 0;
  }
  if (args[0] != "show") throw UsageError("ssmv contract: unknown subcommand '" + args[0] + "' (expected list or show)");
  std::string name;
  int64_t chunk_size = 0;
  CommandLine line("ssmv contract show");
  line.integer("--chunk-size", 1, 1 << 20, [&chunk_size](int64_t v) { chunk_size = v; });
  if (!line.parse(std::vector<std::string>(args.begin() + 1, args.end()), contract_usage, 1, "unexpected argument")) {
    return 0;
  }
  if (!line.positionals().empty()) name = line.positionals()[0];
  if (name.empty()) throw UsageError("ssmv contract show: a preset name or contract file is required");
  Contract c;
  try {
    c = verify::load_contract(name, chunk_size > 0 ? chunk_size : 256);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("ssmv contract show: ") + e.what());
  }
  if (c.family == Family::sequential && chunk_size > 0) {
    throw UsageError("ssmv contract show: '" + name + "' is of the sequential family; --chunk-size does not apply");
  }
  std::printf("%s\n", json::dump(verify::contract_to_json(c), 2).c_str());
  return 0;
}

}  // namespace ssmv::cli
