// The SSU host API: runs a spec DecodeProblem (spec/problem.h) on the host twin or the
// GPU (run) and returns bit patterns in the problem's formats.
//
// Pad requests (slot_in = pad_slot_id) read a zero state and write no state; their y is
// defined: the recurrence run from the zero state over the request's tokens, i.e. for
// the first token y = Σ_n C·(δB·x) + D·x, gated by z if given.
#pragma once

#include <cstdint>
#include <vector>

#include "fast/common/device.h"
#include "spec/format.h"
#include "spec/problem.h"

namespace ssmv::ssu {

// Which CUDA kernel runs a launch; every variant computes the same bits (kernels.cu), so
// the host twin has one form for all of them.
enum class Variant : uint8_t {
  automatic,  // octet where it applies; else streamed where it applies and the launch has
              // at most one token per request; else tokens where the launch has more tokens
              // than requests; else per_item
  streamed,   // the streamed kernel (stream.cuh); ProblemError where it does not apply
  per_item,   // ssu_kernel: one warp per group of rows, one launch-wide grid
  tokens,     // the multi-token kernel (tokens.cuh): inputs staged in shared memory per
              // window of tokens; takes every launch
  octet,      // the octet kernel (octet.cuh): a row on 8 lanes, inputs staged per window;
              // ProblemError where it does not apply (launch.h why_not_octet)
};

// What a DecodeProblem does not describe.
struct Config {
  // [T_total] pool slot receiving the state after packed token q (speculative decoding:
  // every draft token's state), or the pad slot id for none; empty: no per-token states.
  // Stored in the state format like the final state. Ignored for pad requests.
  std::vector<int64_t> token_state_slots;
  Variant variant = Variant::automatic;
  // Host twin only: worker threads over (request, head) (0: every core); the results are the
  // same bits for any count (fast/common/parallel.h).
  int threads = 0;
};

struct Result {
  std::vector<Bits> y;           // [T_total, H, P] output format bits
  std::vector<Bits> state_pool;  // [slots, H, P, N] state format bits, after the launch
};

// Everything run checks before touching memory: spec validate(d), the config, the
// kernel's limits (P, N ≤ 256, H ≤ 65535, 32-bit slot and token indices). Throws
// ProblemError naming the field and value.
void validate(const DecodeProblem& d, const Config& config = {});

// Runs `d` on `device`: the host twin (twin.h), or the kernel on the current CUDA device
// (gpu.h). Throws ProblemError on bad input (before any allocation), std::runtime_error
// for Device::gpu when this build has no CUDA kernel or no device is present.
Result run(const DecodeProblem& d, Device device, const Config& config = {});

}  // namespace ssmv::ssu
