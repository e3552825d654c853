#include "verify/external_check.h"

#include "verify/contract_json.h"
#include "verify/handoff.h"

namespace ssmv::verify {
namespace {

void expect_family(const Contract& c, Family want, const std::string& role, const std::string& kernel) {
  if (c.family == want) return;
  throw ProblemError(role + " '" + c.name + "' is of the " + std::string(family_name(c.family)) + " family; kernel '" +
                     kernel + "' needs the " + std::string(family_name(want)) + " family there");
}

// The contract must describe the problem's input format.
void expect_inputs(const Contract& c, const Problem& p) {
  if (describes_input_format(c, p.formats.input)) return;
  std::string list;
  for (Format f : c.input_formats) list += (list.empty() ? "" : ", ") + std::string(format_name(f));
  throw ProblemError("input format " + std::string(format_name(p.formats.input)) + ": contract '" + c.name +
                     "' describes inputs in " + list + " only (its input_formats)");
}

}  // namespace

void validate_external(const Problem& p, const ExternalKernel& k) {
  if (k.family == "ssu") {
    expect_family(k.contract, Family::sequential, "contract", k.family);
  } else if (k.family == "chunk_scan") {
    expect_family(k.contract, Family::chunked, "contract", k.family);
  } else if (k.family == "handoff") {
    expect_family(k.contract, Family::chunked, "contract (the chunked prefill's)", k.family);
    expect_family(k.decode_contract, Family::sequential, "decode contract", k.family);
    validate_prefill(p, k.prefill_tokens);
    expect_inputs(k.contract, p);
    expect_inputs(k.decode_contract, p);
    return;
  } else {
    throw ProblemError("kernel '" + k.family + "': expected ssu, chunk_scan or handoff");
  }
  expect_inputs(k.contract, p);
  if (!k.prefill_tokens.empty()) {
    throw ProblemError("prefill_tokens given for kernel '" + k.family +
                       "': only a hand-off (kernel handoff) has a prefill prefix");
  }
}

KernelCheck check_external(const Problem& p, const ExternalKernel& k, const std::vector<float>& y,
                           const std::vector<float>& final_states) {
  validate_external(p, k);
  const std::string name = k.name.empty() ? k.family : k.name;
  if (k.family == "handoff") {
    return check_handoff_outputs(p, k.prefill_tokens, k.contract, k.decode_contract, name, y, final_states);
  }
  return check_outputs(p, k.contract, name, y, final_states);
}

}  // namespace ssmv::verify
