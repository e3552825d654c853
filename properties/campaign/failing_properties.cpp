// Properties that fail on purpose, for the campaign tests (tests/campaign_test.sh): a failing
// campaign must shrink and gather every unit's counterexample like any failing property.
// Selected only by id, never by twin/gpu/all (RegisteredProperty::fails_on_purpose).
//   Campaign.FailsLargeDecodeCases: every decode case of at least 64 state updates
//   (T·H·P·N) fails with a VIOLATION naming its size; it shrinks to a case of 64 to ~128.
// (Real bugs are the planted-bug catalogue's: properties/planted/, docs/planted-bugs.md.)
#include "properties/harness/property.h"
#include "properties/suites/failing_property.h"

namespace ssmv::prop {
namespace {

void fails_large_decode_cases() { fail_decode_cases_from(64); }

[[maybe_unused]] const bool registered =
    register_property({"Campaign", "FailsLargeDecodeCases", 60, false,
                       [] { return rc::detail::toProperty(&fails_large_decode_cases); }, true});

}  // namespace
}  // namespace ssmv::prop
