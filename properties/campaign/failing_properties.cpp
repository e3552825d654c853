// Properties that fail on purpose, for the campaign tests (tests/campaign_test.sh): a failing
// campaign must shrink and gather every unit's counterexample like any failing property.
// Selected only by id, never by twin/gpu/all (RegisteredProperty::fails_on_purpose).
//   Campaign.FailsLargeDecodeCases: every decode case of at least 64 state updates
//   (T·H·P·N) fails with a VIOLATION naming its size; it shrinks to a case of 64 to ~128.
// (Real bugs are the planted-bug catalogue's: properties/planted/, docs/planted-bugs.md.)
#include <optional>
#include <string>

#include "properties/gen/problem_gen.h"
#include "properties/harness/case_failure.h"
#include "properties/harness/property.h"

namespace ssmv::prop {
namespace {

constexpr int64_t kLargeUpdates = 64;

void fails_large_decode_cases() {
  const GeneratedDecode g = *decode_problem(DecodeOptions{});
  const Shape& s = g.decode.problem.shape;
  const int64_t updates = s.num_tokens() * s.H * s.P * s.N;
  run_case(decode_case(g.decode, verify::Device::twin), [&]() -> std::optional<CaseFailure> {
    if (updates < kLargeUpdates) return std::nullopt;
    return CaseFailure{"VIOLATION", std::to_string(updates) + " state updates",
                       "fails on purpose: at least " + std::to_string(kLargeUpdates) + " state updates"};
  });
}

[[maybe_unused]] const bool registered =
    register_property({"Campaign", "FailsLargeDecodeCases", 60, false,
                       [] { return rc::detail::toProperty(&fails_large_decode_cases); }, true});

}  // namespace
}  // namespace ssmv::prop
