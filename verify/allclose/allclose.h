// The `allclose` judge of today's kernel tests, for comparing it with ssmv's contracts:
// torch.allclose(kernel, ref, rtol, atol) passes element i when
//   |kernel_i − ref_i| ≤ atol + rtol·|ref_i|
// (ref is torch's `other`; a NaN on either side fails, equal_nan = False). Evaluated here in
// double on the decoded values, so the test itself adds no rounding of its own beyond
// double's. Since (rtol, atol) is a two-dimensional choice, the smallest passing pair is a
// frontier: the smallest atol for a given rtol, the smallest rtol for a given atol.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "spec/format.h"

namespace ssmv::verify {

struct Tolerance {
  double rtol = 0, atol = 0;
};

// mamba_ssm's tolerances in its kernel tests (tests/ops/triton/test_selective_state_update.py,
// test_ssd.py): fp32 outputs rtol 3e-4, atol 1e-3; bf16 rtol 1e-2, atol 5e-2; fp16 rtol 5e-3,
// atol 1e-2. Throws std::invalid_argument for int16_scaled (none of its tests compares one).
Tolerance mamba_ssm_tolerance(Format output);

// Elements where allclose fails: |kernel − ref| > atol + rtol·|ref|, or NaN. kernel and ref
// have the same size (else std::invalid_argument).
int64_t allclose_violations(std::span<const double> kernel, std::span<const double> ref, double rtol, double atol);

// The same test on precomputed deviations d_i ≥ |kernel_i − ref_i| (e.g. a bound on what any
// kernel honouring a contract may deviate): elements with !(d_i ≤ atol + rtol·|ref_i|).
int64_t tolerance_violations(std::span<const double> deviation, std::span<const double> ref, double rtol,
                             double atol);
// |kernel_i − ref_i| (NaN when either is NaN).
std::vector<double> deviations(std::span<const double> kernel, std::span<const double> ref);

// The smallest atol ≥ 0 with tolerance_violations(deviation, ref, rtol, atol) = 0 (checked,
// nudged up past the double rounding of atol + rtol·|ref|); +inf when a deviation is NaN or
// infinite.
double smallest_atol(std::span<const double> deviation, std::span<const double> ref, double rtol);
// The smallest rtol ≥ 0 with no violation at `atol`; +inf when some ref_i = 0 has
// d_i > atol, or a deviation is NaN or infinite.
double smallest_rtol(std::span<const double> deviation, std::span<const double> ref, double atol);

}  // namespace ssmv::verify
