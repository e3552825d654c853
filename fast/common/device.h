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
// CUDA devices this process sees (0 without CUDA or a driver). Never throws.
int gpu_count();
// Makes device `index` (0 ≤ index < gpu_count()) this process's device for every later
// launch (cudaSetDevice); throws std::runtime_error otherwise. One process per GPU.
void use_gpu(int index);

}  // namespace ssmv
