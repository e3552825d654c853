// The bundled Mamba-3 SISO decode step (issue 31 item 6): a CUDA kernel and its bit-identical host
// twin, one launch per token for a batch of sequences, the four-part state (angle, S, B_prev,
// x_prev) read and written in place in fp32. Semantics: spec/mamba3/problem.h; arithmetic and
// rounding points: arithmetic.h; precision contract: contract.h.
//
// A Problem runs as max_s len(s) launches: launch k takes token cu[s] + k of every sequence s that
// has one, from the problem's initial four-part state (zeros without one).
#pragma once

#include <vector>

#include "fast/common/device.h"
#include "spec/mamba3/problem.h"

namespace ssmv::mamba3_step {

struct Result {
  std::vector<float> y;             // [T, H, P] values of the output format
  ssmv::mamba3::FourPartState state;  // after the last token of each sequence, fp32
};

// spec validate(pr) and the kernel's limits: input, angles and output formats bf16 or fp32, state
// fp32, N <= kMaxN (params.h), S·H < 2^31. Throws ssmv::ProblemError naming the field and value.
void validate(const ssmv::mamba3::Problem& pr);

// Runs `pr` on the host twin (twin.h; `threads` workers over (sequence, head), 0: every core, the
// same bits for any count) or the GPU (gpu.h: std::runtime_error without CUDA or a device).
Result run(const ssmv::mamba3::Problem& pr, Device device, int threads = 0);

}  // namespace ssmv::mamba3_step
