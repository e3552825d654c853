#include "fast/ssu/gpu.h"
#include "fast/ssu/pack.h"
#include "fast/ssu/ssu.h"
#include "fast/ssu/twin.h"

namespace ssmv::ssu {

Result run_twin(const DecodeProblem& d, const Config& config) {
  HostLaunch launch(d, config);
  run_twin(launch.params(), config.threads);
  return launch.result();
}

Result run(const DecodeProblem& d, Device device, const Config& config) {
  return device == Device::twin ? run_twin(d, config) : run_gpu(d, config);
}

}  // namespace ssmv::ssu
