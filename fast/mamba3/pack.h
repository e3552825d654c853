// A Problem laid out as the kernel reads it: every input tensor in its format's bits, dense
// row-major, the four-part state as fp32 buffers, the token of every sequence for every launch,
// and the Params of launch k pointing at these host buffers (the twin runs them as they are; the
// GPU path copies each buffer to the device and points the same Params there).
#pragma once

#include <cstdint>
#include <vector>

#include "fast/mamba3/params.h"
#include "fast/mamba3/step.h"

namespace ssmv::mamba3_step {

class HostLaunch {
 public:
  // Validates (step.h validate) and packs.
  explicit HostLaunch(const ssmv::mamba3::Problem& pr);
  HostLaunch(const HostLaunch&) = delete;
  HostLaunch& operator=(const HostLaunch&) = delete;

  int64_t launches() const { return launches_; }  // the longest sequence's length
  // Launch k < launches(): token cu[s] + k of each sequence s that has one (-1 for the others).
  Params params(int64_t k) const;
  Result result() const;  // y and the four-part state read back from the buffers

  // The buffers params() points to (public: the GPU path copies them, tests alter the state
  // between launches). Input formats as bits (bf16: uint16, fp32: float), little-endian.
  std::vector<int64_t> tokens;  // [launches, S]
  std::vector<uint8_t> x, B, C, trap, angles, z, y;
  std::vector<float> dt, adt, B_bias, C_bias, D;
  std::vector<float> angle_state, S, B_prev, x_prev;

 private:
  Params base_;  // every field but token
  int64_t launches_ = 0;
};

}  // namespace ssmv::mamba3_step
