// Properties 1 and 2 — a bundled kernel's host twin stays within its precision contract —
// as case bodies and as the list of their CI runs, shared by the property suites
// (ssu_contract_prop.cpp, chunk_scan_contract_prop.cpp) and the planted-bug catalogue
// (planted/), which runs the same properties, with the same seeds and case counts, on
// binaries whose twin carries a bug.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fast/chunk_scan/chunk_scan.h"
#include "spec/format.h"

namespace ssmv::prop {

// One case: a decode problem with this state format (realistic or adversarial), the twin's
// y and state pool judged against the certified reference and the sequential bound. A
// failing case's counterexample file names `planted_bug` (empty: the bundled kernel).
void ssu_within_contract(Format state_format, const std::string& planted_bug = {});

// One case: a prefill problem for this chunk size, y, final and chunk-boundary states judged
// against the reference and the chunked bound of contract `kind`.
void chunk_scan_within_contract(chunk_scan::ContractKind kind, int64_t chunk_size,
                                const std::string& planted_bug = {});

struct ContractProperty {
  std::string suite, name;  // as the suites register them: "SsuContract", "StateFp32"
  int64_t base_cases;       // the suites' CI case count
  std::function<void()> body;
};

// The contract properties of kernel "ssu" (3: state fp32, bf16, fp16; 12000 cases each) or
// "chunk_scan" (6: production and fp32 contracts at chunk 64, 128, 256; 1800 cases each).
std::vector<ContractProperty> contract_properties(const std::string& kernel, const std::string& planted_bug = {});

// Registers contract_properties(kernel) as GoogleTests Suite.Name (each runs its property
// with run_property, property.h) and in the campaign registry (register_property); for a
// static initializer of a suite's binary.
bool register_contract_properties(const std::string& kernel);

}  // namespace ssmv::prop
