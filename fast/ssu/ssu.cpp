#include "fast/ssu/ssu.h"

#include "fast/ssu/ssu_pack.h"
#include "fast/ssu/ssu_twin.h"

namespace ssmv::ssu {

Result run_twin(const DecodeProblem& d, const Options& options) {
  HostLaunch launch(d, options);
  run_twin(launch.params(), options.threads);
  return launch.result();
}

}  // namespace ssmv::ssu
