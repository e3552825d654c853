// Checks of a launch before it runs (the twin's and the kernel's): field and value in every message.
#pragma once

#include "fast/mamba3/params.h"

namespace ssmv::mamba3_step {

// Throws ssmv::ProblemError: sizes not positive, G not dividing H, N odd or above kMaxN, R outside
// [1, N/2], a format the kernel does not read, batch·H at or above 2^31, a required pointer null.
void check_params(const Params& p);

}  // namespace ssmv::mamba3_step
