#include "verify/cli/default_problem.h"

#include "spec/realistic_problem.h"

namespace ssmv::cli {

Problem default_problem(uint64_t seed) {
  return realistic_problem(Shape{{0, 37, 101}, /*H=*/4, /*P=*/16, /*N=*/32, /*G=*/2},
                                   Formats{Format::bf16, Format::fp32, Format::bf16}, seed);
}

}  // namespace ssmv::cli
