// A DecodeProblem laid out as the kernel reads it: every tensor in its format's bits,
// dense row-major, and a Params pointing at these host buffers (run_twin runs it as is;
// the GPU path copies each buffer to the device with the same strides).
#pragma once

#include <cstdint>
#include <vector>

#include "fast/ssu/ssu.h"
#include "fast/ssu/check.h"
#include "fast/ssu/params.h"

namespace ssmv::ssu {

// y and the pool from raw buffers of their formats.
Result decode_result(Format output, const std::vector<uint8_t>& y, Format state, const std::vector<uint8_t>& pool);

class HostLaunch {
 public:
  // Validates (ssu::validate) and packs.
  HostLaunch(const DecodeProblem& d, const Config& config);
  HostLaunch(const HostLaunch&) = delete;
  HostLaunch& operator=(const HostLaunch&) = delete;

  const Params& params() const { return params_; }
  Result result() const;  // y and the pool read back from the buffers

  // The buffers params() points to: public because the GPU path copies them and tests
  // inspect them. Shapes as in Params; 16-bit formats as uint16 bits, fp32 as float bits.
  IndexArrays indices;
  std::vector<uint8_t> state, x, dt, B, C, z, y;  // format bits, little-endian
  std::vector<float> A, dt_bias, D;

 private:
  Params params_;
};

}  // namespace ssmv::ssu
