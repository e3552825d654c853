// chunk_scan: the chunked SSD prefill of the Mamba2 recurrence (docs/design.md §2),
// in five stages, on the GPU (gpu.h) and as a host twin (twin.h) that performs
// the same fp32 operations in the same order with the same rounding points; run() takes
// either.
//
// Per chunk c (a run of ≤ L tokens of one sequence; chunks never straddle sequences) and
// head h (group g = h/(H/G)), with k, m tokens of the chunk (0-based within it):
//   (a) δ_k = clamp(softplus?(dt_k + dt_bias)), cs_m = Σ_{k≤m} δ_k·A (sequential fp32 sum)
//   (b) chunk_state[p,n] = Σ_k x_k[p]·R(B_k[n]·(exp(min(cs_last − cs_k, 0))·δ_k))
//   (c) h_in(c) = h_out(c−1) (h_out(−1) = initial state, or 0);
//       h_out(c) = fma(exp(cs_last), h_out(c−1), chunk_state)       (fp32)
//   (d) CB[m,k] = Σ_n C_m[n]·B_k[n]                                    (fp32)
//   (e) y_m[p] = (Σ_n C_m[n]·R(h_in)[p,n])·exp(cs_m)
//                + Σ_{k≤m} R((CB[m,k]·exp(min(cs_m − cs_k, 0)))·δ_k)·x_k[p]   (same accumulator)
//       y = fma(D, x_m[p], y); y = y·(z·σ(z)); stored in the output format.
// R is the contract's rounding: the input format for the production contract, none for
// fp32. Reductions are mma.sync m16n8k16 chains (16-wide k-steps in increasing k, one fp32
// accumulator, docs/design.md §4) where the operands are bf16/fp16 (production contract with a
// bf16 or fp16 input format), and sequential fmaf chains otherwise.
#pragma once

#include <cstdint>
#include <vector>

#include "fast/chunk_scan/contract.h"
#include "fast/common/device.h"
#include "spec/problem.h"

namespace ssmv::chunk_scan {

// Chunk sizes the kernels are built for.
inline constexpr int64_t kChunkSizes[] = {64, 128, 256};
// Largest head dim P and state dim N the kernels support (tiles of 64, at most 4 per dim).
inline constexpr int64_t kMaxHeadDim = 256;
inline constexpr int64_t kMaxStateDim = 256;

// The variant is the contract (contract.h): production rounds where the Triton kernels do
// and reduces on the tensor cores (uses_mma below), fp32 rounds nowhere and reduces by
// fmaf chains.
struct Config {
  ContractKind contract = ContractKind::production;
  int64_t chunk_size = 256;
  bool boundary_states = false;     // also return the state after every chunk
  bool keep_intermediates = false;  // also return the stages' fp32 intermediates
  // Host twin only: worker threads (0: every core); the results are the same bits for any
  // count (fast/common/parallel.h).
  int threads = 0;
};

// The chunks of a packed token axis: chunk c covers packed tokens [start[c], start[c]+len[c])
// of sequence seq[c]. Sequence s owns chunks [first_chunk[s], first_chunk[s+1]).
struct ChunkPlan {
  int64_t chunk_size = 0;
  std::vector<int64_t> start;        // [num_chunks]
  std::vector<int64_t> len;          // [num_chunks] 1..chunk_size
  std::vector<int64_t> seq;          // [num_chunks]
  std::vector<int64_t> first_chunk;  // [S+1]
  int64_t num_chunks() const { return int64_t(start.size()); }
};

// The stages' intermediates (fp32 values; formats as noted).
struct Intermediates {
  std::vector<float> delta;        // [H, T] δ after softplus and clamp
  std::vector<float> cumsum;       // [H, T] within-chunk cumulative sum of δ·A
  std::vector<float> chunk_state;  // [num_chunks, H, P, N] stage (b)
  std::vector<float> state_in;     // [num_chunks, H, P, N] h_in, after the contract's rounding
  std::vector<float> cb;           // [num_chunks, G, L, L] stage (d); entries k ≤ m < len only
};

struct Result {
  std::vector<float> y;                 // [T, H, P] values of the output format
  std::vector<float> final_state;       // [S, H, P, N] values of the state format
  std::vector<float> boundary_states;   // [num_chunks, H, P, N] state format: h_out(c)
  std::vector<int64_t> boundary_positions;  // [num_chunks] packed position q = end of chunk c
  Intermediates stages;                 // filled when Config::keep_intermediates
};

// Throws ProblemError naming the field and value: everything spec's validate checks, plus
// a chunk size outside {64, 128, 256}, P or N above 256.
void validate(const Problem& problem, const Config& config);

// Chunks of cu_seqlens (validated) for chunk size L.
ChunkPlan plan_chunks(const std::vector<int64_t>& cu_seqlens, int64_t chunk_size);

// True when the reductions run on the tensor cores (operands bf16/fp16): the production
// contract with a bf16 or fp16 input format.
bool uses_mma(ContractKind contract, Format input);

// Runs `problem` on `device`: the host twin (twin.h) or the CUDA kernels (gpu.h). Throws
// ProblemError on bad input (before computing or allocating anything), std::runtime_error
// for Device::gpu when this build has no CUDA kernel or no device is present.
Result run(const Problem& problem, Device device, const Config& config);

}  // namespace ssmv::chunk_scan
