#include "properties/harness/case_failure.h"

#include <rapidcheck.h>

#include <algorithm>
#include <filesystem>

#include "properties/harness/feature_count.h"
#include "properties/harness/property.h"
#include "verify/reports/report_text.h"

namespace ssmv::prop {

void run_case(verify::Counterexample cex, const std::function<std::optional<CaseFailure>()>& body) {
  std::optional<CaseFailure> failure;
  try {
    failure = body();
  } catch (const std::exception& e) {
    // The file format knows only the four verdicts: an exception is recorded as INVALID, with
    // its message as the worst element.
    failure = CaseFailure{"INVALID", std::string("exception: ") + e.what(), std::string("exception: ") + e.what()};
  }
  if (!failure) return;
  cex.property = current_property();
  cex.verdict = failure->verdict;
  cex.worst = failure->worst;
  cex.reproduce = "added by the property harness when shrinking ends";
  std::string where = current_counterexample_path();
  try {
    const std::filesystem::path parent = std::filesystem::path(where).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent);
    verify::write_counterexample(where, cex);
  } catch (const std::exception& e) {
    where = std::string("(not written: ") + e.what() + ")";
  }
  RC_FAIL(failure->message + "\n  verdict " + failure->verdict + "; worst: " + failure->worst +
          "\n  counterexample: " + where);
}

void expect_within_contract(verify::Counterexample cex, const std::function<verify::KernelCheck()>& check) {
  run_case(std::move(cex), [&]() -> std::optional<CaseFailure> {
    const verify::KernelCheck k = check();
    int64_t judged = 0;
    for (const verify::TensorReport& r : k.tensors) judged += r.elements;
    if (judged == 0) return CaseFailure{"INVALID", "no elements", "the check judged no element (a vacuous case)"};
    double usage = 0;
    for (const verify::TensorReport& r : k.tensors) usage = std::max(usage, r.max_bound_usage);
    count_bound_usage(usage, k.ok());
    if (k.ok()) return std::nullopt;
    return CaseFailure{std::string(verify::verdict_name(k.overall())), verify::worst_element_line(k),
                       k.kernel + " left its contract " + k.contract};
  });
}

}  // namespace ssmv::prop

namespace ssmv::prop {

verify::Counterexample decode_case(const DecodeProblem& d, verify::Device device) {
  verify::Counterexample c;
  c.kernel = "ssu";
  c.contract = "ssu";
  c.device = std::string(verify::device_name(device));
  c.decode = d;
  return c;
}

verify::Counterexample prefill_case(const Problem& p, chunk_scan::ContractKind kind, int64_t chunk_size,
                                    verify::Device device) {
  verify::Counterexample c;
  c.kernel = "chunk_scan";
  c.contract = "chunk_scan." + std::string(chunk_scan::contract_kind_name(kind));
  c.chunk_size = chunk_size;
  c.device = std::string(verify::device_name(device));
  c.problem = p;
  return c;
}

verify::Counterexample handoff_case(const Problem& p, int64_t split, chunk_scan::ContractKind kind,
                                    int64_t chunk_size, verify::Device device) {
  verify::Counterexample c = prefill_case(p, kind, chunk_size, device);
  c.kernel = "chunk_scan+ssu";
  c.contract += "+ssu";
  c.split = split;
  return c;
}

}  // namespace ssmv::prop
