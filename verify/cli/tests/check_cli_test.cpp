// `ssmv check` and `ssmv compare` end to end on dumps written the way a Python user writes
// them (problem and outputs in one .npz or .safetensors, with ssmv.* metadata): a
// self-describing dump needs no flags; contradicting flags, non-fp32 dt limits, prefill
// tokens on a decode dump, a prefix longer than a sequence, a compare of two problems and an
// unwritable report path are usage errors (exit 2) naming the field and value; so are a
// FlashInfer int16_scaled dump's missing, misshapen, negative or non-finite scales. An error
// under the bound but beyond what rounding gives is SUSPICIOUS (exit 3).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "fast/chunk_scan/chunk_scan.h"
#include "fast/chunk_scan/contract.h"
#include "spec/realistic_problem.h"
#include "verify/judge/external_check.h"
#include "verify/json/json.h"
#include "verify/cli/tests/run_ssmv.h"
#include "verify/tensor_file/dump_metadata.h"
#include "verify/tensor_file/problem_file.h"
#include "verify/tensor_file/tensor_file.h"
#include "verify/tests/handoff_run.h"

namespace ssmv::cli {
namespace {

using testing::run_ssmv;
using tensor_file::DumpOptions;

// Two sequences of 100 and 80 tokens, bf16 in and out, fp32 state, softplus, bias, D, z,
// initial states.
Problem problem(uint64_t seed = 91) {
  return realistic_problem(Shape{{0, 100, 180}, 2, 4, 16, 1}, Formats{Format::bf16, Format::fp32, Format::bf16},
                           seed);
}

class CheckCli : public testing::TempDirTest {
 protected:
  CheckCli() : TempDirTest("ssmv_check_cli_") {}

  // The hand-off of `p` with prefix `prefill` (0 everywhere: SSU alone), saved as one file.
  std::string dump(const std::string& name, const Problem& p, const std::vector<int64_t>& prefill,
                   const DumpOptions& meta, bool prefill_tensor) {
    const verify::testing::HandoffRun run = verify::testing::run_handoff(p, prefill, 64);
    tensor_file::TensorMap m = tensor_file::problem_tensors(p);
    for (auto& [k, t] : tensor_file::output_tensors({run.y, run.final_states}, p)) m[k] = t;
    if (prefill_tensor) {
      m["prefill_tokens"] = tensor_file::make_tensor("prefill_tokens", tensor_file::DType::i64,
                                                     {int64_t(prefill.size())},
                                                     std::vector<double>(prefill.begin(), prefill.end()));
    }
    const std::string path = (dir_ / name).string();
    const auto metadata = tensor_file::metadata_from_dump_options(meta);
    if (name.ends_with(".safetensors")) tensor_file::save_safetensors(path, m, metadata);
    else tensor_file::save_npz(path, m, metadata);
    return path;
  }

  // The metadata of a dump made by run_handoff: bf16/fp32/bf16, softplus, chunk 64.
  static DumpOptions described(const std::string& kernel) {
    DumpOptions o;
    o.kernel = kernel;
    o.input_format = Format::bf16;
    o.state_format = Format::fp32;
    o.output_format = Format::bf16;
    o.dt_softplus = true;
    if (kernel != "ssu") o.chunk_size = 64;
    o.source = "check_cli_test: bundled twins";
    return o;
  }
};

TEST_F(CheckCli, SelfDescribingHandoffDumpNeedsNoFlags) {
  const std::string f = dump("handoff.npz", problem(), {70, 45}, described("handoff"), /*prefill_tensor=*/true);
  const testing::Outcome o = run_ssmv("check " + f);
  EXPECT_EQ(o.code, 0) << o.output;
  EXPECT_NE(o.output.find("chunk_scan.production+ssu"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("no VIOLATION, no INVALID"), std::string::npos) << o.output;
}

// --timings names every phase of the check with its wall time and busy cores (after the work, on stderr);
// a check under 2 s shows no progress line, and --quiet never does.
TEST_F(CheckCli, TimingsNameThePhasesAndAShortCheckShowsNoProgress) {
  const std::string f = dump("handoff.npz", problem(), {70, 45}, described("handoff"), /*prefill_tensor=*/true);
  const testing::Outcome o = run_ssmv("check " + f + " --timings");
  EXPECT_EQ(o.code, 0) << o.output;
  for (const char* phase : {"timings: reading the dump ", "reference ", " cores)"}) {
    EXPECT_NE(o.output.find(phase), std::string::npos) << phase << "\n" << o.output;
  }
  EXPECT_EQ(o.output.find("ssmv check: reference"), std::string::npos) << o.output;
  const testing::Outcome q = run_ssmv("check " + f + " --quiet");
  EXPECT_EQ(q.code, 0) << q.output;
  EXPECT_EQ(q.output.find("ssmv check:"), std::string::npos) << q.output;
  EXPECT_EQ(q.output.find("timings:"), std::string::npos) << q.output;
}

TEST_F(CheckCli, SafetensorsMetadataAndAUniformPrefixWork) {
  DumpOptions meta = described("handoff");
  meta.prefill_tokens = 60;
  const std::string f = dump("handoff.safetensors", problem(), {60, 60}, meta, /*prefill_tensor=*/false);
  const testing::Outcome o = run_ssmv("check " + f);
  EXPECT_EQ(o.code, 0) << o.output;
}

TEST_F(CheckCli, AFlagThatContradictsTheFileIsAnErrorNamingBoth) {
  const std::string f = dump("handoff.npz", problem(), {70, 45}, described("handoff"), true);
  const testing::Outcome o = run_ssmv("check " + f + " --no-dt-softplus");
  EXPECT_EQ(o.code, 2) << o.output;
  EXPECT_NE(o.output.find("option 'dt_softplus' = 'false' contradicts " + f + " metadata 'ssmv.dt_softplus' = 'true'"),
            std::string::npos)
      << o.output;
  const testing::Outcome k = run_ssmv("check " + f + " --kernel ssu");
  EXPECT_EQ(k.code, 2) << k.output;
  EXPECT_NE(k.output.find("'ssmv.kernel' = 'handoff'"), std::string::npos) << k.output;
}

TEST_F(CheckCli, ADtLimitThatIsNotFp32IsRefusedUnlessRoundingIsAsked) {
  const std::string f = dump("handoff.npz", problem(), {70, 45}, described("handoff"), true);
  const testing::Outcome o = run_ssmv("check " + f + " --dt-limit 0,0.1");
  EXPECT_EQ(o.code, 2) << o.output;
  EXPECT_NE(o.output.find("'0.1' is not an fp32 value"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("0x1.99999ap-4"), std::string::npos) << o.output;
  // Rounded on request, with a note: the limit then clamps δ (≤ 0.1f), which these data
  // (δ up to about 0.3) exceed, so the verdict may be anything but a usage error.
  const testing::Outcome r = run_ssmv("check " + f + " --dt-limit 0,0.1 --round-dt-limit");
  EXPECT_NE(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("rounded to fp32: 0x0p+0,0x1.99999ap-4"), std::string::npos) << r.output;
}

TEST_F(CheckCli, PrefillTokensOnADecodeDumpAreRefused) {
  const std::string f = dump("ssu.npz", problem(), {0, 0}, described("ssu"), false);
  EXPECT_EQ(run_ssmv("check " + f).code, 0);
  const testing::Outcome o = run_ssmv("check " + f + " --prefill-tokens 3");
  EXPECT_EQ(o.code, 2) << o.output;
  EXPECT_NE(o.output.find("option '--prefill-tokens' given for kernel 'ssu'"), std::string::npos) << o.output;
}

TEST_F(CheckCli, APrefixLongerThanASequenceIsRefused) {
  DumpOptions meta = described("handoff");
  const std::string f = dump("handoff.npz", problem(), {70, 45}, meta, false);
  const testing::Outcome o = run_ssmv("check " + f + " --prefill-tokens 90");
  EXPECT_EQ(o.code, 2) << o.output;
  EXPECT_NE(o.output.find("prefill_tokens[1] = 90 is outside [0, 80]"), std::string::npos) << o.output;
}

TEST_F(CheckCli, AnUnknownSsmvMetadataKeyIsRefused) {
  DumpOptions meta = described("ssu");
  std::map<std::string, std::string> m = tensor_file::metadata_from_dump_options(meta);
  m["ssmv.dt_sofplus"] = "true";
  const Problem p = problem();
  const verify::testing::HandoffRun run = verify::testing::run_handoff(p, {0, 0}, 64);
  tensor_file::TensorMap t = tensor_file::problem_tensors(p);
  for (auto& [k, v] : tensor_file::output_tensors({run.y, run.final_states}, p)) t[k] = v;
  const std::string f = (dir_ / "typo.npz").string();
  tensor_file::save_npz(f, t, m);
  const testing::Outcome o = run_ssmv("check " + f);
  EXPECT_EQ(o.code, 2) << o.output;
  EXPECT_NE(o.output.find("metadata 'ssmv.dt_sofplus': unknown key"), std::string::npos) << o.output;
}

TEST_F(CheckCli, AnUnwritableReportPathIsFoundBeforeTheCheck) {
  const std::string f = dump("ssu.npz", problem(), {0, 0}, described("ssu"), false);
  const testing::Outcome o = run_ssmv("check " + f + " --json " + (dir_ / "missing" / "r.json").string());
  EXPECT_EQ(o.code, 2) << o.output;
  EXPECT_NE(o.output.find("does not exist"), std::string::npos) << o.output;
  EXPECT_EQ(o.output.find("ssmv check"), std::string::npos) << "nothing was computed: " << o.output;
}

TEST_F(CheckCli, CompareExplainsAHandoffAgainstAPureDecode) {
  const Problem p = problem();
  const std::string a = dump("handoff.npz", p, {70, 45}, described("handoff"), true);
  const std::string b = dump("ssu.npz", p, {0, 0}, described("ssu"), false);
  const testing::Outcome o = run_ssmv("compare --a " + a + " --b " + b);
  EXPECT_EQ(o.code, 0) << o.output;
  EXPECT_NE(o.output.find("every divergence is within bound_a + bound_b"), std::string::npos) << o.output;
}

TEST_F(CheckCli, CompareRefusesDumpsOfDifferentProblems) {
  const std::string a = dump("a.npz", problem(91), {70, 45}, described("handoff"), true);
  const std::string b = dump("b.npz", problem(92), {0, 0}, described("ssu"), false);
  const testing::Outcome o = run_ssmv("compare --a " + a + " --b " + b);
  EXPECT_EQ(o.code, 2) << o.output;
  EXPECT_NE(o.output.find("is a dump of another problem than " + a + ": tensor 'x' element"), std::string::npos)
      << o.output;
}

// A FlashInfer dump with a scaled int16 state (verify/tests/flashinfer_fixtures/): judged with
// its row scales and reported naming the format; its final_states_scale removed, misshapen,
// negative or NaN: exit 2 naming the tensor and the value, and no report written.
TEST_F(CheckCli, ScaledInt16DumpsAreJudgedAndBadScalesRefused) {
  const std::string src = std::string(SSMV_FLASHINFER_FIXTURES) + "/stp_simple_int16state.npz";
  const std::string json = (dir_ / "r.json").string();
  testing::Outcome o = run_ssmv("check " + src + " --json " + json);
  EXPECT_EQ(o.code, 0) << o.output;
  EXPECT_NE(o.output.find("stored_state (int16_scaled)"), std::string::npos) << o.output;
  ASSERT_TRUE(std::filesystem::exists(json));
  std::ifstream in(json);
  const std::string report((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(report.find("\"int16_scaled\""), std::string::npos);
  std::filesystem::remove(json);

  std::map<std::string, std::string> meta;
  const tensor_file::TensorMap good = tensor_file::load_tensor_file(src, &meta);
  const auto bad = [&](const std::string& name, const tensor_file::TensorMap& m, const std::string& message) {
    const std::string f = (dir_ / name).string();
    tensor_file::save_npz(f, m, meta);
    const testing::Outcome r = run_ssmv("check " + f + " --json " + json);
    EXPECT_EQ(r.code, 2) << name << ": " << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << name << ": " << r.output;
    EXPECT_FALSE(std::filesystem::exists(json)) << name;
  };
  tensor_file::TensorMap m = good;
  m.erase("final_states_scale");
  bad("no_scale.npz", m, "tensor 'final_states_scale': missing (the state format int16_scaled needs the decode scale");
  m = good;
  m["final_states_scale"] = tensor_file::make_tensor("final_states_scale", tensor_file::DType::f32, {2, 2, 32},
                                                     std::vector<double>(128, 0x1p-17));
  bad("shape.npz", m, "tensor 'final_states_scale': shape: [2, 2, 32] disagrees with [S=2, H=2, P=64]");
  for (const double v : {-0x1p-17, double(NAN)}) {
    std::vector<double> scales(256, 0x1p-17);
    scales[7] = v;
    m["final_states_scale"] = tensor_file::make_tensor("final_states_scale", tensor_file::DType::f32, {2, 2, 64}, scales);
    bad("value.npz", m, "tensor 'final_states_scale': values: element 7 = ");
  }
}

// A chunk_scan dump whose final states err by 0.45 of their bound, every element the same way:
// each element WITHIN_CONTRACT, the whole far more error than the contract's rounding gives.
// ssmv check exits 3 (SUSPICIOUS, no VIOLATION), its JSON says why; --no-sharp exits 0.
TEST_F(CheckCli, AnErrorUnderTheBoundButBeyondRoundingIsSuspicious) {
  const Problem p = problem();
  chunk_scan::Config cfg;
  cfg.chunk_size = 64;
  const chunk_scan::Result r = chunk_scan::run(p, Device::twin, cfg);
  verify::ExternalKernel k;
  k.family = "chunk_scan";
  k.contract = chunk_scan::contract(chunk_scan::ContractKind::production, 64);
  const verify::KernelCheck honest =
      verify::check_external(p, k, r.y, r.final_state, verify::ElementDetail::elements);
  ASSERT_TRUE(honest.ok());
  std::vector<float> states = r.final_state;
  const std::vector<double>& bounds = honest.tensors.at(1).bounds;
  ASSERT_EQ(bounds.size(), states.size());
  for (size_t i = 0; i < states.size(); ++i) states[i] = float(double(states[i]) + 0.45 * bounds[i]);
  tensor_file::TensorMap m = tensor_file::problem_tensors(p);
  for (auto& [name, t] : tensor_file::output_tensors({r.y, states}, p)) m[name] = t;
  const std::string f = (dir_ / "suspicious.npz").string(), json = (dir_ / "r.json").string();
  tensor_file::save_npz(f, m, tensor_file::metadata_from_dump_options(described("chunk_scan")));

  const testing::Outcome o = run_ssmv("check " + f + " --json " + json);
  EXPECT_EQ(o.code, 3) << o.output;
  EXPECT_NE(o.output.find("final_state: SUSPICIOUS"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("no VIOLATION, no INVALID"), std::string::npos) << o.output;
  std::ifstream in(json);
  const json::Value report = json::parse(std::string(std::istreambuf_iterator<char>(in), {}));
  const json::Value& tensors = report["entries"][0]["tensors"];
  ASSERT_EQ(tensors.size(), 2u);
  EXPECT_EQ(tensors[0]["sharp"]["verdict"], "NOT_SUSPICIOUS");
  EXPECT_EQ(tensors[1]["sharp"]["verdict"], "SUSPICIOUS");
  EXPECT_EQ(tensors[1]["verdict"], "WITHIN_CONTRACT");
  EXPECT_EQ(tensors[1]["sharp"]["calibration"]["runs"], 8);

  EXPECT_EQ(run_ssmv("check " + f + " --no-sharp").code, 0);
  const testing::Outcome bad = run_ssmv("check " + f + " --sharp-runs 2");
  EXPECT_EQ(bad.code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--sharp-runs"), std::string::npos) << bad.output;
}

}  // namespace
}  // namespace ssmv::cli
