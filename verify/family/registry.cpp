#include "verify/family/registry.h"

#include "verify/family/mamba2/mamba2_family.h"
#include "verify/family/mamba3/mamba3_family.h"

namespace ssmv::family {

const std::vector<const Family*>& families() {
  static const std::vector<const Family*> registered = {&mamba2::family(), &mamba3::family()};
  return registered;
}

const Family* family_of_kernel(const std::string& kernel) {
  for (const Family* f : families()) {
    for (const std::string& k : f->kernels()) {
      if (k == kernel) return f;
    }
  }
  return nullptr;
}

const Family* family_of_contract(const std::string& name) {
  for (const Family* f : families()) {
    for (const ContractPreset& c : f->contract_presets()) {
      if (c.name == name) return f;
    }
  }
  return nullptr;
}

std::string family_preset_list() {
  std::string list;
  for (const Family* f : families()) {
    for (const ContractPreset& c : f->contract_presets()) list += (list.empty() ? "" : ", ") + c.name;
  }
  return list;
}

std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const Family* f : families()) {
    for (const std::string& k : f->kernels()) names.push_back(k);
  }
  return names;
}

}  // namespace ssmv::family
