// The configurations the sharp verdict fits to a kernel's error: the allowed ones (the
// contract as declared, or with fewer of its optional roundings: a kernel may round less than
// its contract says) and the candidate defects of attribution (one extra rounding or one
// missing term each, the slips of real kernels: docs/planted-bugs.md).
#pragma once

#include <string>
#include <vector>

#include "spec/contract.h"
#include "spec/problem.h"
#include "verify/sharp/emulation.h"

namespace ssmv::sharp {

struct Configuration {
  std::string name;         // "as declared", "without decayed_CB", "running_state rounded to bf16", ...
  std::string description;  // the kernel behaviour it stands for
  Emulation emulation;
};

// First the contract as declared, then each declared intermediate rounding left out, then
// (with two or more) all of them left out.
std::vector<Configuration> allowed_configurations(const Contract& c, const Problem& p, int64_t tokens_per_launch);

// The candidate defects on top of the declared emulation, for the contract's family and the
// problem's options (a term the problem lacks cannot go missing).
std::vector<Configuration> candidate_defects(const Contract& c, const Problem& p, int64_t tokens_per_launch);

}  // namespace ssmv::sharp
