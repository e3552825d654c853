#include "verify/judge/external_check.h"

#include <memory>

#include "reference/round.h"

#include "verify/bound/sequential_bound.h"
#include "verify/judge/exact_bounds.h"
#include "verify/judge/handoff.h"
#include "verify/judge/worst_sources.h"

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

// y [T, H, P] and final_states [S, H, P, N] (or empty) must fit the problem.
void check_output_sizes(const Problem& p, const std::vector<float>& y, const std::vector<float>& final_states) {
  const Shape& s = p.shape;
  if (int64_t(y.size()) != s.num_tokens() * s.H * s.P) {
    throw ProblemError("outputs: y has " + std::to_string(y.size()) + " elements, the problem needs " +
                       std::to_string(s.num_tokens() * s.H * s.P));
  }
  if (!final_states.empty() && int64_t(final_states.size()) != s.num_sequences() * s.H * s.P * s.N) {
    throw ProblemError("outputs: final_states has " + std::to_string(final_states.size()) +
                       " elements, the problem needs " + std::to_string(s.num_sequences() * s.H * s.P * s.N));
  }
}

KernelCheck judge_outputs(const Problem& p, KernelCheck kc, const ref::ExactResult& exact, const std::vector<float>& y,
                          const std::vector<double>& y_bound, const std::vector<float>& final_states,
                          const std::vector<double>& state_bound) {
  kc.tensors.push_back(judge_tensor("y", p.formats.output, format_bits(p.formats.output, y), exact.y, y_bound, p,
                                    y_coords, kYCoordNames));
  if (!final_states.empty()) {
    kc.tensors.push_back(judge_tensor("final_state", p.formats.state, format_bits(p.formats.state, final_states),
                                      exact.final_state, state_bound, p, state_coords, kStateCoordNames));
  }
  return kc;
}

// The sequential family. The bound reads the reference's y (its nearest value, certified
// error and the value before the gate: verify/bound/sequential_bound.h), so the exact result
// is computed whole before the bounds and the judging.
KernelCheck check_sequential_outputs(const Problem& p, const Contract& contract, const std::string& kernel,
                                     const std::vector<float>& y, const std::vector<float>& final_states,
                                     ElementDetail /*detail: the kept result holds every element*/) {
  const ref::ExactResult exact = ref::compute(p);
  const bound::SequentialInput in = sequential_input_for(p, contract, exact, /*store_every_token=*/true);
  const bound::SequentialBounds b = bound::sequential_bounds(in);
  KernelCheck kc = judge_outputs(p, KernelCheck{kernel, contract.name, "external", {}}, exact, y, b.y, final_states,
                                 b.stored_state);
  for (TensorReport& r : kc.tensors) {
    attribute_worst(r, in, r.name == "y" ? bound::BoundOf::y : bound::BoundOf::stored_state, r.worst.index);
  }
  return kc;
}

}  // namespace

KernelCheck check_outputs(const Problem& p, const Contract& contract, const std::string& kernel,
                          const std::vector<float>& y, const std::vector<float>& final_states, ElementDetail detail) {
  validate(p);
  check_output_sizes(p, y, final_states);
  if (contract.family == Family::sequential) return check_sequential_outputs(p, contract, kernel, y, final_states, detail);
  const ref::ExactResult exact = ref::compute(p);
  bound::ChunkedBounds b = chunked_bounds_for(p, contract, exact);
  KernelCheck kc = judge_outputs(p, KernelCheck{kernel, contract.name, "external", {}}, exact, y, b.y, final_states,
                                 b.final_state);
  for (TensorReport& r : kc.tensors) {
    attribute_worst(r, p, contract, exact, r.name == "y" ? bound::BoundOf::y : bound::BoundOf::final_state);
  }
  return kc;
}

KernelCheck check_handoff_outputs(const Problem& p, const std::vector<int64_t>& prefill, const Contract& chunked,
                                  const Contract& decode, const std::string& kernel, const std::vector<float>& y,
                                  const std::vector<float>& final_states) {
  validate(p);
  check_output_sizes(p, y, final_states);
  const ref::ExactResult exact = ref::compute(p, handoff_reference_options(p, prefill));
  const HandoffBounds b = handoff_bounds(p, prefill, chunked, decode, /*decode_stores_every_token=*/true, exact);
  KernelCheck kc = judge_outputs(p, KernelCheck{kernel, chunked.name + "+" + decode.name, "external", {}}, exact, y,
                                 b.y, final_states, b.final_state);
  attribute_handoff(kc, p, prefill, chunked, decode, true, exact);
  return kc;
}

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
                           const std::vector<float>& final_states, ElementDetail detail) {
  validate_external(p, k);
  const std::string name = k.name.empty() ? k.family : k.name;
  if (k.family == "handoff") {
    return check_handoff_outputs(p, k.prefill_tokens, k.contract, k.decode_contract, name, y, final_states);
  }
  return check_outputs(p, k.contract, name, y, final_states, detail);
}

}  // namespace ssmv::verify
