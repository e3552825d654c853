// `ssmv bounds --out-md`: the report as the Markdown page docs/error-bounds.md — the command
// at the top, how to read it, the growth of the bound with T, N and the chunk size, per
// contract the bound's percentiles and sources beside the twins' measured error, the allclose
// tolerances against an fp32 reference, and why the contract is the better test.
#pragma once

#include <string>

#include "verify/bounds_report/bounds_report.h"

namespace ssmv::verify {

// `plots`: the path prefix of the plots from scripts/plot_bounds.py as the page links them
// (e.g. "error-bounds/" for bounds-vs-T.svg and bounds-vs-N.svg there); empty: no plots.
std::string bounds_to_markdown(const BoundsReport& r, const std::string& plots);

}  // namespace ssmv::verify
