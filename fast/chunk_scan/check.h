// Checks of a chunk_scan Params before any launch (as fast/ssu/check.h): every message
// names the field and value; nothing is launched when one fails.
#pragma once

#include "fast/chunk_scan/params.h"

namespace ssmv::chunk_scan {

// Throws ProblemError naming the field and value: chunk size not 64/128/256, sizes not
// positive or above what the kernels support (P, N ≤ 256, T < 2^31, intermediates
// indexable), G not dividing H, strides that let rows overlap, missing pointers, d_mode
// disagreeing with D.
void check_params(const Params& p);

}  // namespace ssmv::chunk_scan
