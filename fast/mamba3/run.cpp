#include <string>

#include "fast/mamba3/check.h"
#include "fast/mamba3/gpu.h"
#include "fast/mamba3/twin.h"
#include "spec/problem.h"  // ProblemError

namespace ssmv::mamba3_step {

void validate(const ssmv::mamba3::Problem& pr) {
  ssmv::mamba3::validate(pr);
  if (pr.formats.state != Format::fp32) {
    throw ProblemError("mamba3_step: state format " + std::string(format_name(pr.formats.state)) +
                       ": the kernel keeps the four-part state in fp32");
  }
  Params p;  // the shape and formats; pointers are checked per launch
  p.batch = pr.shape.num_sequences();
  p.H = pr.shape.H;
  p.P = pr.shape.P;
  p.N = pr.shape.N;
  p.G = pr.shape.G;
  p.R = pr.shape.R;
  p.input = pr.formats.input;
  p.angles_format = pr.formats.angles;
  p.output = pr.formats.output;
  const int64_t batch = p.batch;
  p.batch = 0;
  check_params(p);
  if (batch * p.H >= (int64_t(1) << 31)) {
    throw ProblemError("mamba3_step: sequences·H = " + std::to_string(batch * p.H) + " reaches 2^31");
  }
}

Result run(const ssmv::mamba3::Problem& pr, Device device, int threads) {
  return device == Device::gpu ? run_gpu(pr) : run_twin(pr, threads);
}

}  // namespace ssmv::mamba3_step
