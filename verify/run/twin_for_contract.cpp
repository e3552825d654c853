#include "verify/run/twin_for_contract.h"

#include "fast/chunk_scan/chunk_scan.h"
#include "fast/chunk_scan/contract.h"
#include "fast/ssu/contract.h"
#include "fast/ssu/ssu.h"
#include "verify/contracts/contract_json.h"
#include "verify/judge/tensor_report.h"

namespace ssmv::verify {
namespace {

bool same_contract(const Contract& a, const Contract& b) { return contract_to_json(a) == contract_to_json(b); }

TwinOutputs run_ssu(const Problem& p, int threads) {
  const DecodeProblem d = one_slot_per_sequence(p);
  ssu::Config cfg;
  cfg.threads = threads;
  TwinOutputs out;
  try {
    ssu::validate(d, cfg);
  } catch (const ProblemError& e) {
    out.why_not = std::string("the SSU twin does not run this problem: ") + e.what();
    return out;
  }
  ssu::Result got = ssu::run(d, Device::twin, cfg);
  out.ran = true;
  out.kernel = "ssu";
  out.y = std::move(got.y);
  out.final_state = std::move(got.state_pool);  // slot r holds request r's final state
  return out;
}

TwinOutputs run_chunk_scan(const Problem& p, chunk_scan::ContractKind kind, int64_t L, int threads) {
  TwinOutputs out;
  chunk_scan::Config cfg;
  cfg.contract = kind;
  cfg.chunk_size = L;
  cfg.threads = threads;
  try {
    chunk_scan::validate(p, cfg);
  } catch (const ProblemError& e) {
    out.why_not = std::string("the chunk_scan twin does not run this problem: ") + e.what();
    return out;
  }
  const chunk_scan::Result got = chunk_scan::run(p, Device::twin, cfg);
  out.ran = true;
  out.kernel = "chunk_scan";
  out.y = format_bits(p.formats.output, got.y);
  out.final_state = format_bits(p.formats.state, got.final_state);
  return out;
}

}  // namespace

TwinOutputs run_twin_for(const Problem& p, const Contract& c, int threads) {
  if (c.family == Family::sequential) {
    if (same_contract(c, ssu::contract())) return run_ssu(p, threads);
  } else {
    for (const auto kind : {chunk_scan::ContractKind::production, chunk_scan::ContractKind::fp32}) {
      // (a chunk size the twin is not built for is refused by chunk_scan::validate, below)
      if (same_contract(c, chunk_scan::contract(kind, c.chunk_size))) {
        return run_chunk_scan(p, kind, c.chunk_size, threads);
      }
    }
  }
  TwinOutputs out;
  out.why_not = "no bundled twin implements contract '" + c.name + "'";
  return out;
}

}  // namespace ssmv::verify
