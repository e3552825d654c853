#include "properties/suites/contract_properties.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "properties/gen/problem_gen.h"
#include "properties/harness/case_failure.h"
#include "properties/harness/property.h"

namespace ssmv::prop {

void ssu_within_contract(Format state_format, const std::string& planted_bug) {
  DecodeOptions o;
  o.state_format = state_format;
  const GeneratedDecode g = *decode_problem(o);
  label_case(g);
  verify::Counterexample c = decode_case(g.decode, verify::Device::twin);
  c.planted_bug = planted_bug;
  expect_within_contract(c, [&] { return verify::check_ssu(g.decode, verify::Device::twin); });
}

void chunk_scan_within_contract(chunk_scan::ContractKind kind, int64_t chunk_size, const std::string& planted_bug) {
  PrefillOptions o;
  o.chunk_size = chunk_size;
  const GeneratedProblem g = *prefill_problem(o);
  label_case(g);
  verify::Counterexample c = prefill_case(g.problem, kind, chunk_size, verify::Device::twin);
  c.planted_bug = planted_bug;
  expect_within_contract(c, [&] {
    return verify::check_chunk_scan(g.problem, kind, chunk_size, verify::Device::twin, /*boundary_states=*/true);
  });
}

std::vector<ContractProperty> contract_properties(const std::string& kernel, const std::string& planted_bug) {
  std::vector<ContractProperty> out;
  if (kernel == "ssu") {
    for (auto [name, f] : {std::pair{"StateFp32", Format::fp32}, {"StateBf16", Format::bf16}, {"StateFp16", Format::fp16}}) {
      out.push_back({"SsuContract", name, 12000, [f, planted_bug] { ssu_within_contract(f, planted_bug); }});
    }
    return out;
  }
  if (kernel == "chunk_scan") {
    using chunk_scan::ContractKind;
    for (auto [prefix, kind] : {std::pair{"Production", ContractKind::production}, {"Fp32Chunk", ContractKind::fp32}}) {
      for (int64_t L : {64, 128, 256}) {
        out.push_back({"ChunkScanContract", prefix + std::to_string(L), 1800,
                       [kind, L, planted_bug] { chunk_scan_within_contract(kind, L, planted_bug); }});
      }
    }
    return out;
  }
  throw std::invalid_argument("contract_properties: kernel '" + kernel + "': expected ssu or chunk_scan");
}

bool register_contract_properties(const std::string& kernel) {
  for (ContractProperty& p : contract_properties(kernel)) {
    // For campaigns (properties/campaign/) as SSMV_PROPERTY does, and as a GoogleTest.
    register_property({p.suite, p.name, p.base_cases, false, [body = p.body] { return rc::detail::toProperty(body); }});
    testing::RegisterTest(p.suite.c_str(), p.name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                          [p]() -> testing::Test* {
                            struct Run : testing::Test {
                              ContractProperty property;
                              explicit Run(ContractProperty q) : property(std::move(q)) {}
                              void TestBody() override {
                                run_property(property.suite, property.name, property.base_cases,
                                             rc::detail::toProperty(property.body));
                              }
                            };
                            return new Run(p);
                          });
  }
  return true;
}

}  // namespace ssmv::prop
