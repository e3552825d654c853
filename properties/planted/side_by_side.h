// The side-by-side run of the catalogue (`ssmv-planted-<name> side-by-side FILE`; all bugs:
// scripts/planted_side_by_side.sh): this binary's twin of `kernel` on fixed problem sets,
// each problem judged two ways —
//   ssmv:     the contract verdict (verify/run/kernel_check.h: VIOLATION or not);
//   allclose: today's practice, the kernel's y and states against the fp32 sequential
//             reference (verify/allclose/fp32_reference.h), recorded as the least atol that
//             passes at each rtol of kRtols (the `excess`: max_i |kernel_i − ref_i| −
//             rtol·|ref_i|), so that any (rtol, atol) can be applied afterwards: mamba_ssm's
//             tolerances, or the tightest that never fails the bundled twin (the control,
//             ssmv-planted-none).
// Problem sets, the same in every binary (seeded):
//   property_mix: the first cases the kernel's contract properties draw (rapidcheck's
//                 generators, seeds 1..K, sizes ramping 0..100 as in a property run);
//   production:   realistic problems at production widths (H = 8, P = 64, N = 128, G = 2
//                 for SSU; H = 2, P = 64, N = 128 and 1024 tokens at chunk 256 for chunk_scan).
// summary.py --side-by-side reads the files of all binaries and writes the table of
// docs/planted-bugs.md.
#pragma once

#include <string>

namespace ssmv::prop {

inline constexpr double kRtols[] = {0.0, 1e-4, 3e-4, 1e-3, 5e-3, 1e-2};

// Runs the sets for `kernel` ("ssu" or "chunk_scan") and writes the JSON to `path`
// atomically. Returns 0, or 2 with a message on stderr for bad arguments.
int side_by_side(const std::string& kernel, const std::string& path, int threads);

}  // namespace ssmv::prop
