// The planted bugs of properties/planted/ as campaign properties (planted: selected only by
// name, never by twin/gpu/all): a campaign of them must fail, shrink and gather its
// counterexamples like any failing property (campaign_test, docs/campaigns.md). Base 60 cases,
// as property 1's planted-bug tests (suites/planted_bug_test.cpp).
#include "properties/harness/property.h"
#include "properties/planted/planted_ssu.h"

namespace ssmv::prop {
namespace {

void drop_d() { planted_ssu_within_contract(PlantedBug::drop_d); }
void wrong_group() { planted_ssu_within_contract(PlantedBug::wrong_group); }

[[maybe_unused]] const bool registered = register_property({"PlantedBug", "SsuDropD", 60, false,
                                                            [] { return rc::detail::toProperty(&drop_d); }, true}) &&
                                         register_property({"PlantedBug", "SsuWrongGroup", 60, false,
                                                            [] { return rc::detail::toProperty(&wrong_group); }, true});

}  // namespace
}  // namespace ssmv::prop
