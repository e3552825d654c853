// Text of the numbers and elements in reports and failure messages, printed exactly:
// decimal (%.17g, which reads back to the same double) beside %a (exact), bit patterns in
// hex. One implementation for the Markdown report, the GoogleTest assertion and `ssmv`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spec/format.h"
#include "spec/problem.h"
#include "verify/judge/check_result.h"
#include "verify/judge/tensor_report.h"

namespace ssmv::verify {

std::string decimal_text(double v);  // %.17g; "inf", "-inf", "nan"
std::string hexfloat_text(double v); // %a
std::string exact_text(double v);    // "0.5 (0x1p-1)"
// "0x3f80 = 1 (0x1p+0)"; NaN patterns "0x7fc0 = nan".
std::string value_text(Format f, Bits b);
// "sequence 0, token 3, head 1, dim 7".
std::string coords_text(const std::vector<std::string>& names, const std::vector<int64_t>& coords);
// The error in units of the element's scale for tables: "3.1e-03" (err/scale max, %.1e)
// and "0.41" (ULPs at scale max, %.3g); "-" when no element had a finite value.
std::string err_over_scale_text(const TensorReport& r);
// A ratio to the scale alone, as err_over_scale_text writes it ("3.1e-03", "inf").
std::string scale_text(double over_scale);
std::string ulps_at_scale_text(const TensorReport& r);
// Bound usage (error ÷ bound) with 4 significant digits, "inf" for INVALID.
std::string usage_text(double usage);
// "S=2 T=130 H=8 P=64 N=128 G=1, bf16 in / fp32 state / bf16 out, dt_softplus".
std::string problem_summary(const Problem& p);
std::string problem_summary(const DecodeProblem& d);  // adds the pool: "slots=4 pad=-1"

// How the worst element's bound splits over its sources, one line (empty when the report
// has no attribution): "bound of worst y[0,3,1,7]: 62% decayed_CB (bf16), 21% output
// (bf16), 9.1% exp, 3 more 2.4%" — the six largest shares of at least 0.01 %, the rest
// summed ("2 more < 0.01%").
std::string bound_sources_text(const TensorReport& r);

// The worst element of a tensor, one fact per line (no trailing newline): where it is,
// its verdict and bound usage, computed, exact (40 digits, nearest double, correctly
// rounded), error and bound.
std::vector<std::string> worst_element_lines(const TensorReport& r);

// Flat element `index` of the tensor at its index in the tensor's own rank, from
// TensorReport::dims: "y[12, 3, 7]" for y [T, H, P], "final_state[0, 3, 7, 100]".
std::string tensor_index_text(const TensorReport& r, int64_t index);
// "729 of 768 elements bad (94.9%): 729 VIOLATION, 0 INVALID".
std::string bad_count_text(const TensorReport& r);
// The first `n` of the tensor's kept bad elements (TensorReport::bad), one line each: its
// index in the tensor's rank and named coordinates, then what is wrong. A VIOLATION:
// "computed 0.1235 (bf16 0x3dfd), exact 0.1229, error 5.1e-04 > bound 1.2e-04, usage 4.2";
// an INVALID names its value: "computed nan (bf16 0x7fc0)", "inf", or "never written
// (the poison pattern 0x...)".
std::vector<std::string> bad_element_lines(const TensorReport& r, size_t n);

// The worst element of a check on one line — the first failing tensor by verdict, then by
// bound usage: tensor, coordinates, computed bits (%a), exact (%a), bound (%a), usage,
// verdict, and what ran: "y[sequence 0, token 8, head 0, dim 0] computed 0x00046c85
// (0x1.1b214p-131), exact 0x1.1b1eba34231c4p-131, bound 0x1.286fc56b456fep-146, usage
// 1.09, VIOLATION (chunk_scan, chunk_scan.fp32, twin)"; "no tensors" without any. The
// property suites' failure messages and counterexample files (verify/reports/counterexample.h
// `worst`) carry it.
std::string worst_element_line(const KernelCheck& c);

// What EXPECT_WITHIN_CONTRACT prints for a failing check: per failing tensor, the
// mismatched (VIOLATION + INVALID) count and share, the greatest absolute and relative
// differences with their index, verdict counts, ULP p50/p99/max, bound usage and the worst
// element; passing tensors in one line each.
std::string check_failure_message(const KernelCheck& c);

}  // namespace ssmv::verify
