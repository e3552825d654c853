// The registry of properties behind SSMV_PROPERTY / SSMV_REGISTER_PROPERTY (property.h).
#include <algorithm>
#include <stdexcept>

#include "properties/harness/property.h"

namespace ssmv::prop {
namespace {
std::vector<RegisteredProperty>& registry() {
  static std::vector<RegisteredProperty> r;  // filled by static initializers, before main
  return r;
}
}  // namespace

bool register_property(RegisteredProperty p) {
  for (const RegisteredProperty& q : registry()) {
    if (q.id() == p.id()) throw std::logic_error("property " + p.id() + " registered twice");
  }
  registry().push_back(std::move(p));
  return true;
}

std::vector<RegisteredProperty> registered_properties() {
  std::vector<RegisteredProperty> r = registry();
  std::sort(r.begin(), r.end(), [](const auto& a, const auto& b) { return a.id() < b.id(); });
  return r;
}

}  // namespace ssmv::prop
