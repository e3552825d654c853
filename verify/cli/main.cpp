// ssmv — verifies fast GPU kernels of the Mamba2 recurrence against certified
// arbitrary-precision ground truth. Exit codes: 0 ok, 1 a check failed, 2 bad input/usage.
#include <string>
#include <vector>

#include "verify/cli/dispatch.h"

int main(int argc, char** argv) { return ssmv::cli::run_ssmv(std::vector<std::string>(argv + 1, argv + argc)); }
