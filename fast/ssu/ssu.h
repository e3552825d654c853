// The SSU host API: runs a spec DecodeProblem (spec/problem.h) on the host twin and, when
// CUDA is built, on the GPU, and returns bit patterns in the problem's formats.
//
// Pad requests (slot_in = pad_slot_id) read a zero state and write no state; their y is
// defined: the recurrence run from the zero state over the request's tokens, i.e. for
// the first token y = Σ_n C·(δB·x) + D·x, gated by z if given.
#pragma once

#include <cstdint>
#include <vector>

#include "spec/format.h"
#include "spec/problem.h"

namespace ssmv::ssu {

// What a DecodeProblem does not describe.
struct Options {
  // [T_total] pool slot receiving the state after packed token q (speculative decoding:
  // every draft token's state), or the pad slot id for none; empty: no per-token states.
  // Stored in the state format like the final state. Ignored for pad requests.
  std::vector<int64_t> token_state_slots;
  // Host twin only: worker threads over (request, head) (0: every core); the results are the
  // same bits for any count (fast/common/parallel.h).
  int threads = 0;
};

struct Result {
  std::vector<Bits> y;           // [T_total, H, P] output format bits
  std::vector<Bits> state_pool;  // [slots, H, P, N] state format bits, after the launch
};

// Everything run_twin/run_gpu check before touching memory: spec validate(d), the
// options, the kernel's limits (P, N ≤ 256, H ≤ 65535, 32-bit slot and token indices).
// Throws ProblemError naming the field and value.
void validate(const DecodeProblem& d, const Options& options = {});

Result run_twin(const DecodeProblem& d, const Options& options = {});

// True when this build contains the CUDA kernel.
bool gpu_built();
// Runs the kernel on the current CUDA device. Throws std::runtime_error when CUDA is not
// built or no device is present, ProblemError on bad input (before any allocation).
Result run_gpu(const DecodeProblem& d, const Options& options = {});

}  // namespace ssmv::ssu
