// Launcher of the SSU CUDA kernels (built only when SSMV_HAVE_CUDA). The Params pointers
// refer to device memory.
#pragma once

#include <cuda_runtime_api.h>

#include "fast/ssu/params.h"
#include "fast/ssu/ssu.h"

namespace ssmv::ssu {

struct LaunchOptions {
  Variant variant = Variant::automatic;  // which kernel runs the launch (ssu.h)
  // > 0: the streamed kernel's persistent grid has at most this many blocks, so that its
  // warps loop over several items and batches of 32 items even in small problems (tests);
  // 0: as many blocks as fit on the device.
  int max_stream_blocks = 0;
  // > 0: the octet kernel splits each head's rows over at most this many blocks (1: one block
  // loops over all of them, 16 rows per pass; tests); 0: splits so that the grid has about 8
  // blocks per multiprocessor.
  int octet_splits = 0;
};

// Why the streamed kernel cannot run p, or nullptr if it can: it needs 16-bit states and
// inputs, state chunks of 4 bytes or more, the pool, B and C aligned for them, N a multiple
// of the chunk, no per-token states. Host-side; no device access.
const char* why_not_streamed(const Params& p);

// Why the octet kernel cannot run p, or nullptr if it can: it needs N a whole number of the
// lane layout's chunks (J·L·V = N), the pool aligned for them, and B, C, x, z (if any) in
// aligned 16-byte chunks with N and P multiples of a chunk. Host-side; no device access.
const char* why_not_octet(const Params& p);

// Whether Variant::automatic takes the streamed kernel for p: where it applies, the octet
// kernel does not, and num_tokens <= num_requests (the decode step). The others take the octet
// kernel where it applies, else the tokens kernel if they have more tokens than requests, else
// ssu_kernel (bench/NOTES.md, sessions 27 and 28).
bool takes_streamed_kernel(const Params& p);

// check_params(p) (throws ProblemError before launching), then one launch on `stream`.
// The index arrays are device memory and are not checked here: callers that hold host
// copies call check_indices first (run_gpu does). Asynchronous; errors of the launch
// itself are thrown through SSMV_CUDA_CHECK.
void launch(const Params& p, cudaStream_t stream = nullptr, const LaunchOptions& options = {});

}  // namespace ssmv::ssu
