// GoogleTest assertions on a KernelCheck (verify/run/kernel_check.h):
//
//   EXPECT_WITHIN_CONTRACT(check_chunk_scan(p, kind, 64, Device::twin));
//   ASSERT_WITHIN_CONTRACT(kc);
//
// pass when no element is VIOLATION or INVALID. The failure message says at least what
// torch.testing.assert_close says (mismatched count and share, greatest absolute and
// relative difference with their index) plus the verdict counts, ULP distances, bound usage,
// the worst element with exact values and where its bound comes from, and a pointer to
// docs/report-schema.md (verify/reports/report_text.h check_failure_message). The Python assertion
// ssmv.assert_within_contract (python/ssmv/report.py) prints the same lines in the same order.
#pragma once

#include <gtest/gtest.h>

#include "verify/judge/check_result.h"
#include "verify/reports/report_text.h"

namespace ssmv::verify {

inline ::testing::AssertionResult within_contract(const char* expression, const KernelCheck& check) {
  if (check.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "Expected " << expression << " to be within its contract.\n"
                                       << check_failure_message(check);
}

}  // namespace ssmv::verify

#define EXPECT_WITHIN_CONTRACT(check) EXPECT_PRED_FORMAT1(::ssmv::verify::within_contract, check)
#define ASSERT_WITHIN_CONTRACT(check) ASSERT_PRED_FORMAT1(::ssmv::verify::within_contract, check)
