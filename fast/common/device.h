// Where a bundled kernel runs: its host twin (everywhere) or the CUDA kernel (builds with
// CUDA, on a machine with a device). Shared by both kernels' run(problem, device, config)
// entries (fast/ssu/ssu.h, fast/chunk_scan/chunk_scan.h), so that their callers need no
// #ifdef: in a build without CUDA, run(…, Device::gpu, …) throws std::runtime_error
// saying so, and tests ask gpu_available() to skip. Link ssmv_fast_device.
#pragma once

#include <cstdint>
#include <string_view>

namespace ssmv {

enum class Device : uint8_t { twin, gpu };

std::string_view device_name(Device d);  // "twin", "gpu"

// True when this build contains the CUDA kernels (SSMV_HAVE_CUDA).
bool gpu_built();
// True when this build contains the CUDA kernels and the CUDA runtime finds a device.
// Never throws.
bool gpu_available();

}  // namespace ssmv
