#include "verify/run/default_suite.h"

#include <cstdio>

#include "fast/mamba3/contract.h"
#include "fast/mamba3/step.h"
#include "spec/mamba3/random_problem.h"
#include "spec/realistic_problem.h"
#include "verify/family/mamba3/dump_reading.h"
#include "verify/family/mamba3/mamba3_family.h"

namespace ssmv::verify {
namespace {

// Mamba2's production head geometry (head dim P = 64, state dim N = 128) with H = 8 heads in
// G = 2 groups: 65,536 state elements per token.
constexpr int64_t kH = 8, kP = 64, kN = 128, kG = 2;
// The chunk_scan rows' prompts: three sequences of varied lengths, 2,048 tokens in all (8 full
// chunks of 256 and three partial ones), 1.3·10^8 state updates.
const std::vector<int64_t> kPrefillLengths = {1100, 650, 298};

// "len [1100,650,298] H=8 P=64 N=128 G=2 bf16/fp32/bf16" (input/state/output formats), `more`
// (Mamba-3's R) after G; for Mamba2's Problem and Mamba-3's.
template <class P>
std::string summary(const P& p, const std::string& more = "") {
  char buf[200];
  std::string lens;
  for (int64_t s = 0; s < p.shape.num_sequences(); ++s) {
    if (s > 0) lens += ",";
    lens += std::to_string(p.shape.seq_len(s));
  }
  std::snprintf(buf, sizeof buf, "len [%s] H=%lld P=%lld N=%lld G=%lld%s %s/%s/%s", lens.c_str(),
                (long long)p.shape.H, (long long)p.shape.P, (long long)p.shape.N, (long long)p.shape.G,
                more.c_str(), std::string(format_name(p.formats.input)).c_str(),
                std::string(format_name(p.formats.state)).c_str(),
                std::string(format_name(p.formats.output)).c_str());
  return buf;
}

Problem prefill(Format state, uint64_t seed, std::vector<int64_t> lengths) {
  Shape shape{{0}, kH, kP, kN, kG};
  for (int64_t len : lengths) shape.cu_seqlens.push_back(shape.cu_seqlens.back() + len);
  return realistic_problem(shape, Formats{Format::bf16, state, Format::bf16}, seed);
}

// A decode batch: 8 requests of `tokens` tokens over a pool of 12 slots; request 5 is a
// pad request; the others read slots in a scrambled order.
DecodeProblem decode(Format state, uint64_t seed, int64_t tokens) {
  const int64_t R = 8;
  Problem p = prefill(state, seed, std::vector<int64_t>(R, tokens));
  const int64_t per = kH * kP * kN;
  DecodeProblem d;
  d.slots = 12;
  d.state_pool.assign(d.slots * per, 0.0f);
  for (int64_t r = 0; r < R; ++r) {
    const int64_t slot = (r * 5 + 3) % d.slots;
    d.slot_in.push_back(r == 5 ? d.pad_slot_id : slot);
    std::copy(p.initial_state.begin() + r * per, p.initial_state.begin() + (r + 1) * per,
              d.state_pool.begin() + slot * per);
  }
  p.initial_state.clear();
  d.problem = std::move(p);
  return d;
}

// Mamba-3 SISO decode (the bundled step kernel, fast/mamba3/step.h): sequences of `lengths` tokens
// continuing from a prefilled four-part state, Mamba2's head geometry with R = N/4 rotary angles,
// data drawn like mamba_ssm's Mamba-3 test (spec/mamba3/random_problem.h: bf16 inputs and angles,
// D and z, fp32 state, bf16 output).
ssmv::mamba3::Problem mamba3_decode(uint64_t seed, std::vector<int64_t> lengths) {
  std::vector<int64_t> cu = {0};
  for (int64_t len : lengths) cu.push_back(cu.back() + len);
  return ssmv::mamba3::random_problem(std::move(cu), kH, kP, kN, kG, kN / 4, seed, /*with_initial_state=*/true);
}

// The step kernel on `device` (the twin on the reference's threads, --threads), judged as `ssmv
// check` judges a dump of it: its outputs as the dump's tensors (dump_reading.h), read and checked
// by the Mamba-3 family under the kernel's own contract (ssmv.mamba3_step), without the sharp
// verdict (as every case of the suite).
ReportEntry check_mamba3_step(const ssmv::mamba3::Problem& p, Device device) {
  namespace m3 = family::mamba3;
  mamba3_step::Result r = mamba3_step::run(p, device, ref::default_threads());
  const tensor_file::TensorMap tensors = m3::dump_tensors(p, {std::move(r.y), std::move(r.state)});
  family::DumpFiles files;
  files.problem_tensors = files.output_tensors = &tensors;
  files.options.kernel = m3::kStepKernel;
  files.options.contract = mamba3_step::kContractName;
  files.options.input_format = p.formats.input;
  files.options.state_format = p.formats.state;
  files.options.output_format = p.formats.output;
  family::CheckOptions o;
  o.sharp = false;
  ReportEntry entry = m3::family().read(files)->check("", o).entry;
  entry.check.device = std::string(device_name(device));
  return entry;
}

}  // namespace

std::vector<SuiteCase> default_suite() {
  std::vector<SuiteCase> suite;
  for (Format state : {Format::fp32, Format::bf16}) {
    const std::string st(format_name(state));
    for (int64_t tokens : {1, 4}) {
      const DecodeProblem d = decode(state, 11 + uint64_t(tokens), tokens);
      suite.push_back({"ssu decode, " + std::to_string(tokens) + " token" + (tokens > 1 ? "s" : "") +
                           "/request, " + st + " state",
                       "8 requests (1 pad), " + summary(d.problem),
                       [d](Device dev) { return report_entry("", check_ssu(d, dev), d); }});
    }
  }
  const Problem p = prefill(Format::fp32, 21, kPrefillLengths);
  for (auto kind : {chunk_scan::ContractKind::production, chunk_scan::ContractKind::fp32}) {
    suite.push_back({"chunk_scan prefill, chunk 256, " + std::string(chunk_scan::contract_kind_name(kind)),
                     summary(p), [p, kind](Device dev) {
                       return report_entry("", check_chunk_scan(p, kind, 256, dev, /*boundary_states=*/true), p);
                     }});
  }
  for (Format state : {Format::fp32, Format::bf16}) {
    const Problem h = prefill(state, 31 + uint64_t(state), {260, 260});
    suite.push_back({"hand-off: chunk_scan [0,200) then ssu [200,260), " + std::string(format_name(state)) +
                         " state",
                     summary(h), [h](Device dev) {
                       return report_entry("", check_handoff(h, 200, chunk_scan::ContractKind::production, 256, dev), h);
                     }});
  }
  const ssmv::mamba3::Problem m = mamba3_decode(51, {16, 10, 5, 1});
  suite.push_back({"mamba3 step decode, from a prefilled state", summary(m, " R=" + std::to_string(m.shape.R)),
                   [m](Device dev) { return check_mamba3_step(m, dev); }});
  return suite;
}

SideBySide default_comparison(Device device) {
  const Problem p = prefill(Format::fp32, 41, {300, 77});
  const auto kind = chunk_scan::ContractKind::production;
  return side_by_side("chunk_scan vs SSU on the same tokens (" + summary(p) + ")",
                      check_chunk_scan(p, kind, 256, device), check_handoff(p, 0, kind, 256, device), p);
}

}  // namespace ssmv::verify
