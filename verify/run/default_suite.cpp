#include "verify/run/default_suite.h"

#include <cstdio>

#include "spec/realistic_problem.h"

namespace ssmv::verify {
namespace {

// Mamba2's production head geometry (head dim P = 64, state dim N = 128) with H = 8 heads in
// G = 2 groups: 65,536 state elements per token.
constexpr int64_t kH = 8, kP = 64, kN = 128, kG = 2;
// The chunk_scan rows' prompts: three sequences of varied lengths, 2,048 tokens in all (8 full
// chunks of 256 and three partial ones), 1.3·10^8 state updates.
const std::vector<int64_t> kPrefillLengths = {1100, 650, 298};

std::string summary(const Problem& p) {
  char buf[160];
  std::string lens;
  for (int64_t s = 0; s < p.shape.num_sequences(); ++s) {
    if (s > 0) lens += ",";
    lens += std::to_string(p.shape.seq_len(s));
  }
  std::snprintf(buf, sizeof buf, "len [%s] H=%lld P=%lld N=%lld G=%lld %s/%s/%s", lens.c_str(),
                (long long)p.shape.H, (long long)p.shape.P, (long long)p.shape.N, (long long)p.shape.G,
                std::string(format_name(p.formats.input)).c_str(),
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
  return suite;
}

SideBySide default_comparison(Device device) {
  const Problem p = prefill(Format::fp32, 41, {300, 77});
  const auto kind = chunk_scan::ContractKind::production;
  return side_by_side("chunk_scan vs SSU on the same tokens (" + summary(p) + ")",
                      check_chunk_scan(p, kind, 256, device), check_handoff(p, 0, kind, 256, device), p);
}

}  // namespace ssmv::verify
