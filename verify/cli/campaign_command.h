// `ssmv campaign ...`: property campaigns (docs/campaigns.md). The campaign driver links the
// property suites, which verify/ must not (docs/design.md §5), so it is its own binary,
// ssmv-campaign, built beside ssmv; this command replaces the process with it (exec: under
// mpirun each rank's ssmv becomes that rank's ssmv-campaign, environment and all).
#pragma once

#include <string>
#include <vector>

namespace ssmv::cli {

// Execs ssmv-campaign from the folder holding this ssmv, else from PATH, with `args`; returns
// only on failure (throws UsageError naming where it looked).
int campaign_command(const std::vector<std::string>& args);

}  // namespace ssmv::cli
