// The report as JUnit XML, for CI systems (GitLab, Jenkins, GitHub test reporters): one
// <testsuite> per kernel check (a case of `ssmv run`, the dump of `ssmv check`), one
// <testcase> per judged tensor. A VIOLATION or INVALID tensor is a <failure> whose message
// counts the bad elements and whose text lists the worst ones; a SUSPICIOUS tensor (the
// sharp verdict: exit code 3) is a <failure type="SUSPICIOUS"> too, so that CI fails where
// ssmv does. A side-by-side comparison is one more suite, a tensor with an unexplained
// divergence its failure. Written atomically, like the JSON and Markdown reports.
#pragma once

#include <string>

#include "verify/reports/report.h"

namespace ssmv::verify {

std::string report_to_junit(const Report& r);
void write_report_junit(const std::string& path, const Report& r);

}  // namespace ssmv::verify
