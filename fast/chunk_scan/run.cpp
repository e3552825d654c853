#include "fast/chunk_scan/gpu.h"
#include "fast/chunk_scan/twin.h"

namespace ssmv::chunk_scan {

Result run(const Problem& problem, Device device, const Config& config) {
  return device == Device::twin ? run_twin(problem, config) : run_gpu(problem, config);
}

}  // namespace ssmv::chunk_scan
