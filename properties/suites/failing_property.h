// A property that fails on purpose, for the tests of what becomes of a failing property: the
// shrink budget (suites/shrink_budget_test.cpp) and a failing campaign (campaign/
// failing_properties.cpp). Real bugs are the planted-bug catalogue's (planted/).
#pragma once

#include <cstdint>

#include "spec/problem.h"

namespace ssmv::prop {

// T·H·P·N: the state updates of a decode problem.
int64_t state_updates(const DecodeProblem& d);

// One case: a decode problem (properties/gen, default options) that fails with a VIOLATION
// whose worst element reads "<state_updates> state updates" when it has at least
// `min_updates` state updates, and passes otherwise. Rapidcheck then shrinks the shape down
// to that size and every tensor element toward 0, each accepted candidate one step.
void fail_decode_cases_from(int64_t min_updates);

}  // namespace ssmv::prop
