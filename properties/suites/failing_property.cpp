#include "properties/suites/failing_property.h"

#include <optional>
#include <string>

#include "properties/gen/problem_gen.h"
#include "properties/harness/case_failure.h"

namespace ssmv::prop {

int64_t state_updates(const DecodeProblem& d) {
  const Shape& s = d.problem.shape;
  return s.num_tokens() * s.H * s.P * s.N;
}

void fail_decode_cases_from(int64_t min_updates) {
  const GeneratedDecode g = *decode_problem(DecodeOptions{});
  const int64_t updates = state_updates(g.decode);
  run_case(decode_case(g.decode, verify::Device::twin), [&]() -> std::optional<CaseFailure> {
    if (updates < min_updates) return std::nullopt;
    return CaseFailure{"VIOLATION", std::to_string(updates) + " state updates",
                       "fails on purpose: at least " + std::to_string(min_updates) + " state updates"};
  });
}

}  // namespace ssmv::prop
