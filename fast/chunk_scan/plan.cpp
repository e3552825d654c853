#include <string>

#include "fast/chunk_scan/chunk_scan.h"

namespace ssmv::chunk_scan {

void validate(const Problem& problem, const Config& config) {
  bool supported = false;
  for (int64_t L : kChunkSizes) supported = supported || config.chunk_size == L;
  if (!supported) {
    throw ProblemError("chunk_scan config field 'chunk_size' = " + std::to_string(config.chunk_size) +
                       ": must be 64, 128 or 256");
  }
  validate(problem);
  if (block_scaled(problem.formats.state)) {
    throw ProblemError("format field 'state' = " + std::string(format_name(problem.formats.state)) +
                       ": chunk_scan stores fp32, bf16 or fp16 states");
  }
  if (problem.shape.P > kMaxHeadDim) {
    throw ProblemError("shape field 'P' = " + std::to_string(problem.shape.P) +
                       ": chunk_scan supports head dims up to " + std::to_string(kMaxHeadDim));
  }
  if (problem.shape.N > kMaxStateDim) {
    throw ProblemError("shape field 'N' = " + std::to_string(problem.shape.N) +
                       ": chunk_scan supports state dims up to " + std::to_string(kMaxStateDim));
  }
}

ChunkPlan plan_chunks(const std::vector<int64_t>& cu, int64_t L) {
  ChunkPlan plan;
  plan.chunk_size = L;
  const int64_t S = int64_t(cu.size()) - 1;
  for (int64_t s = 0; s < S; ++s) {
    plan.first_chunk.push_back(plan.num_chunks());
    for (int64_t t = cu[s]; t < cu[s + 1]; t += L) {
      plan.start.push_back(t);
      plan.len.push_back(cu[s + 1] - t < L ? cu[s + 1] - t : L);
      plan.seq.push_back(s);
    }
  }
  plan.first_chunk.push_back(plan.num_chunks());
  return plan;
}

bool uses_mma(ContractKind contract, Format input) {
  return contract == ContractKind::production && input != Format::fp32;
}

}  // namespace ssmv::chunk_scan
