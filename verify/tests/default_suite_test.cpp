// `ssmv run`'s default suite (verify/run/default_suite.h) holds the bundled Mamba-3 step kernel's
// case (fast/mamba3/), production-shaped, and on the host twin every element of y and of the final
// four-part state is within the kernel's contract (ssmv.mamba3_step, fast/mamba3/contract.h), with
// rounding-path differences present (not a vacuous pass on all-EXACT data).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "verify/run/default_suite.h"

namespace ssmv::verify {
namespace {

TEST(DefaultSuite, Mamba3StepDecodeH8P64N128IsWithinContractOnTheTwin) {
  std::vector<SuiteCase> mamba3;
  for (SuiteCase& c : default_suite()) {
    if (c.name.rfind("mamba3", 0) == 0) mamba3.push_back(std::move(c));
  }
  ASSERT_EQ(mamba3.size(), 1u) << "the default suite should hold one Mamba-3 case";
  const SuiteCase& c = mamba3[0];
  EXPECT_NE(c.problem.find("H=8 P=64 N=128"), std::string::npos) << c.problem;

  const ReportEntry e = c.run(Device::twin);
  EXPECT_EQ(e.check.kernel, "mamba3_step");
  EXPECT_EQ(e.check.contract, "ssmv.mamba3_step");
  EXPECT_EQ(e.check.device, "twin");
  std::vector<std::string> names;
  for (const TensorReport& t : e.check.tensors) {
    names.push_back(t.name);
    EXPECT_GT(t.elements, 0) << t.name;
    EXPECT_TRUE(t.ok()) << t.name << ": " << t.count(Verdict::violation) << " VIOLATION, "
                        << t.count(Verdict::invalid) << " INVALID";
  }
  EXPECT_EQ(names, (std::vector<std::string>{"y", "final_angle_state", "final_state", "final_B_prev", "final_x_prev"}));
  EXPECT_EQ(e.check.overall(), Verdict::within_contract);
  ASSERT_EQ(e.check.tensors.size(), 5u);
  // The fp32 state differs from the correctly rounded exact state in most elements: the bound,
  // not exactness, carries the verdict.
  const TensorReport& state = e.check.tensors[2];
  EXPECT_GT(state.count(Verdict::within_contract), state.elements / 2);
}

}  // namespace
}  // namespace ssmv::verify
