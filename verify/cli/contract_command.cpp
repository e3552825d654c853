#include "verify/cli/contract_command.h"

#include <cstdio>

#include "verify/cli/command_line.h"
#include "verify/contracts/contract_json.h"
#include "verify/family/registry.h"

namespace ssmv::cli {

namespace {

constexpr const char* kShowAbout =
    "Prints a preset (or a contract file, validated) as the JSON of docs/contracts.md: save it, edit it to describe "
    "your kernel, pass it to `ssmv check --contract FILE` (an edited preset is reported under the file's name).";

int contract_list(const std::vector<std::string>& args) {
  CommandLine line("ssmv contract list", "The contract presets, one per line: name, family, kernel — Mamba2's, then "
                   "every other recurrence family's (Mamba-3: name, kind as its contract file names it, description).");
  if (!line.parse(args)) return 0;
  for (const std::string& name : verify::contract_preset_names()) {
    const Contract c = verify::contract_preset(name, 256);
    std::printf("%-28s %-10s %s\n", name.c_str(), std::string(verify::family_name(c.family)).c_str(),
                c.kernel.c_str());
  }
  for (const family::Family* f : family::families()) {
    for (const family::ContractPreset& p : f->contract_presets()) {
      std::printf("%-36s %-14s %s\n", p.name.c_str(), p.family.c_str(), p.description.c_str());
    }
  }
  return 0;
}

int contract_show(const std::vector<std::string>& args) {
  std::string name;
  int64_t chunk_size = 0;
  CommandLine line("ssmv contract show", kShowAbout);
  line.positional("NAME|FILE", "a preset name (ssmv contract list) or a contract JSON file", name, true,
                  "one contract per show");
  line.integer("--chunk-size", "L", "the chunk length written into a chunked preset (default 256)", 1, 1 << 20,
               [&chunk_size](int64_t v) { chunk_size = v; });
  if (!line.parse(args)) return 0;
  if (name.empty()) throw UsageError("ssmv contract show: a preset name or contract file is required");
  if (const family::Family* f = family::family_of_contract(name)) {  // another family's preset
    if (chunk_size > 0) {
      throw UsageError("ssmv contract show: '" + name + "' is a " + f->name() + " preset; --chunk-size does not apply "
                       "(its chunk size is the dump's)");
    }
    for (const family::ContractPreset& p : f->contract_presets()) {
      if (p.name == name) std::printf("%s\n", p.show.c_str());
    }
    return 0;
  }
  Contract c;
  try {
    c = verify::load_contract(name, chunk_size > 0 ? chunk_size : 256);
  } catch (const std::invalid_argument& e) {
    const std::string others = family::family_preset_list();  // which show prints too
    throw UsageError(std::string("ssmv contract show: ") + e.what() +
                     (others.empty() ? "" : "; other families' presets: " + others));
  }
  if (c.family == Family::sequential && chunk_size > 0) {
    throw UsageError("ssmv contract show: '" + name + "' is of the sequential family; --chunk-size does not apply");
  }
  std::printf("%s\n", json::dump(verify::contract_to_json(c), 2).c_str());
  return 0;
}

}  // namespace

int contract_command(const std::vector<std::string>& args) {
  const std::vector<std::string> rest(args.begin() + (args.empty() ? 0 : 1), args.end());
  if (!args.empty() && args[0] == "list") return contract_list(rest);
  if (!args.empty() && args[0] == "show") return contract_show(rest);
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::printf("usage: ssmv contract list | show NAME|FILE [--chunk-size L]\n"
                "  list  the presets, one per line: name, family, kernel (Mamba2's), then Mamba-3's: name, kind, "
                "description\n"
                "  show  %s\n"
                "`ssmv contract list --help` and `ssmv contract show --help` for their options\n", kShowAbout);
    return 0;
  }
  if (args.empty()) throw UsageError("ssmv contract: expected 'list' or 'show NAME' (ssmv contract --help)");
  throw UsageError("ssmv contract: unknown subcommand '" + args[0] + "' (expected list or show)");
}

}  // namespace ssmv::cli
