// `ssmv contract`: the contract presets, as the JSON a user edits to describe a kernel of
// their own (docs/contracts.md).
#pragma once

#include <string>
#include <vector>

namespace ssmv::cli {

// `ssmv contract list` and `ssmv contract show NAME [--chunk-size L]`. Exit code 0, or 2
// for an unknown preset or bad usage.
int contract_command(const std::vector<std::string>& args);

}  // namespace ssmv::cli
