// Dumps of FlashInfer's CUDA selective_state_update run on the H200 (single-token STP with its
// simple, vertical and horizontal algorithms; 4-token MTP launches; fp32, bf16 and fp16 states,
// fp16 with Philox stochastic rounding; verify/tests/flashinfer_fixtures/README.md says how they
// were made). Each is self-describing (ssmv.contract, ssmv.tokens_per_launch, ...), judged as
// `ssmv check FILE` judges it: every fixture within its preset, and wrong contracts or a wrong
// launch cadence caught as a VIOLATION in the final state, so the presets are not vacuous.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "verify/cli/dump_options.h"
#include "verify/contracts/contract_json.h"
#include "verify/judge/external_check.h"
#include "verify/judge/stochastic_bias.h"

namespace ssmv::verify {
namespace {

std::vector<std::string> fixtures() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(SSMV_FLASHINFER_FIXTURES)) {
    if (e.path().extension() == ".npz") out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

cli::ResolvedDump load(const std::string& name) {
  return cli::resolve_dump(std::string(SSMV_FLASHINFER_FIXTURES) + "/" + name, "", {});
}

const TensorReport& tensor(const KernelCheck& kc, const std::string& name) {
  for (const TensorReport& t : kc.tensors) {
    if (t.name == name) return t;
  }
  throw std::runtime_error("no tensor " + name);
}

bool stochastic(const std::string& f) { return f.find("_sr") != std::string::npos; }

TEST(FlashInferFixtures, CoverTheAlgorithmsStatesAndLaunchCadences) {
  int mtp = 0, stp = 0, sr = 0, fp32_out = 0, handoff = 0;
  for (const std::string& f : fixtures()) {
    const cli::ResolvedDump d = load(f);
    if (d.kernel.family == "handoff") {
      ++handoff;
      EXPECT_EQ(d.kernel.contract.name, "triton.chunk_scan");
      EXPECT_EQ(d.kernel.decode_contract.name, "flashinfer.ssu");
      continue;
    }
    (d.kernel.tokens_per_launch > 1 ? mtp : stp)++;
    sr += d.kernel.contract.name == "flashinfer.ssu.sr";
    fp32_out += d.problem.formats.output == Format::fp32;
  }
  EXPECT_GE(mtp, 3);
  EXPECT_GE(stp, 6);
  EXPECT_GE(sr, 2);
  EXPECT_GE(fp32_out, 2);
  EXPECT_GE(handoff, 2);  // Triton chunk_scan prefill → FlashInfer decode, fp32 and bf16 caches
}

class FlashInferFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(FlashInferFixture, IsWithinItsPreset) {
  const cli::ResolvedDump d = load(GetParam());
  const Contract& decoder = d.kernel.family == "handoff" ? d.kernel.decode_contract : d.kernel.contract;
  EXPECT_EQ(decoder.name, stochastic(GetParam()) ? "flashinfer.ssu.sr" : "flashinfer.ssu");
  const KernelCheck kc = check_external(d.problem, d.kernel, d.outputs.y, d.outputs.final_states);
  ASSERT_EQ(kc.tensors.size(), 2u);
  for (const TensorReport& t : kc.tensors) {
    EXPECT_EQ(t.count(Verdict::violation), 0) << t.name << " usage " << t.max_bound_usage;
    EXPECT_EQ(t.count(Verdict::invalid), 0) << t.name;
    // How tight: the distribution of error ÷ bound over the tensor's elements.
    std::vector<double> usage;
    for (size_t i = 0; i < t.computed.size(); ++i) {
      if (t.bounds[i] > 0) usage.push_back(std::fabs(decode(t.format, t.computed[i]) - t.exact_nearest[i]) / t.bounds[i]);
    }
    std::sort(usage.begin(), usage.end());
    const auto q = [&](double f) { return usage.empty() ? 0.0 : usage[size_t(f * double(usage.size() - 1))]; };
    std::printf("%s %s: usage p50 %.3f, p90 %.3f, p99 %.3f, max %.3f\n", GetParam().c_str(), t.name.c_str(), q(0.5),
                q(0.9), q(0.99), t.max_bound_usage);
  }
  const std::vector<TensorBias> biases = stochastic_biases(d.problem, d.kernel, kc, d.outputs.y, d.outputs.final_states);
  EXPECT_EQ(biases.size(), stochastic(GetParam()) ? 1u : 0u);
  for (const TensorBias& b : biases) {
    EXPECT_EQ(b.tensor, "final_state");
    EXPECT_FALSE(b.bias.biased) << b.bias.text();
    // One store per sequence: the test resolves a few hundredths of an ULP.
    if (GetParam().find("_1") != std::string::npos) EXPECT_LT(b.bias.carried_ulps + b.bias.deviation_ulps, 0.05);
    std::printf("%s %s: %s\n", GetParam().c_str(), b.tensor.c_str(), b.bias.text().c_str());
  }
}

// The bundled ssu preset allows its own few-ULP transcendentals and no flushed subnormals: a
// correct FlashInfer run with an fp32 state exceeds it in the state; a stochastically rounded
// fp16 state exceeds the round-to-nearest preset; a single-token run with a bf16 state judged
// as launched 4 tokens at a time (one store per 4 tokens) exceeds that cadence's bound.
TEST_P(FlashInferFixture, WrongContractsAndCadencesAreViolations) {
  const std::string f = GetParam();
  cli::ResolvedDump d = load(f);
  const auto final_state_violations = [&](const ExternalKernel& k) {
    return tensor(check_external(d.problem, k, d.outputs.y, d.outputs.final_states), "final_state")
        .count(Verdict::violation);
  };
  if (d.kernel.family == "handoff") {
    // A hand-off with an fp32 cache judged as one decode kernel (as if FlashInfer had decoded the
    // prompt too). With a bf16 cache the per-token bf16 stores dominate the decode bound so much
    // that the prefill's error fits in it: no VIOLATION there (measured, not asserted).
    if (d.problem.formats.state != Format::fp32) return;
    ExternalKernel k{"ssu", "", contract_preset("flashinfer.ssu", 0), {}, {}, 1};
    const KernelCheck kc = check_external(d.problem, k, d.outputs.y, d.outputs.final_states);
    EXPECT_GT(tensor(kc, "y").count(Verdict::violation) + tensor(kc, "final_state").count(Verdict::violation), 0) << f;
    return;
  }
  if (d.problem.formats.state == Format::fp32) {
    ExternalKernel k = d.kernel;
    k.contract = contract_preset("ssu", 0);
    EXPECT_GT(final_state_violations(k), 0) << f;
  }
  if (stochastic(f)) {
    ExternalKernel k = d.kernel;
    k.contract = contract_preset("flashinfer.ssu", 0);
    EXPECT_GT(final_state_violations(k), 0) << f;
  }
  if (d.problem.formats.state == Format::bf16 && d.kernel.tokens_per_launch == 1) {
    ExternalKernel k = d.kernel;
    k.tokens_per_launch = 4;
    EXPECT_GT(final_state_violations(k), 0) << f;
  }
}

INSTANTIATE_TEST_SUITE_P(Dumps, FlashInferFixture, ::testing::ValuesIn(fixtures()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string n = i.param.substr(0, i.param.size() - 4);
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace
}  // namespace ssmv::verify
