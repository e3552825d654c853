#include "fast/ssu/device_launch.h"

#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "fast/common/cuda_check.h"
#include "fast/ssu/gpu.h"
#include "fast/ssu/launch.h"

namespace ssmv::ssu {

void* DeviceLaunch::upload(const void* data, size_t bytes) {
  if (data == nullptr) return nullptr;
  void* d = nullptr;
  SSMV_CUDA_CHECK(cudaMalloc(&d, bytes == 0 ? 1 : bytes));
  allocations_.push_back(d);
  if (bytes) SSMV_CUDA_CHECK(cudaMemcpy(d, data, bytes, cudaMemcpyHostToDevice));
  return d;
}

DeviceLaunch::DeviceLaunch(const HostLaunch& host) : params_(host.params()) {
  const Params& h = host.params();
  auto bytes = [](const auto& v) { return v.size() * sizeof(v[0]); };
  auto ptr = [](const auto& v) -> const void* { return v.empty() ? nullptr : v.data(); };
  try {
    params_.cu_seqlens = static_cast<const int32_t*>(upload(ptr(host.indices.cu_seqlens), bytes(host.indices.cu_seqlens)));
    params_.slot_in = static_cast<const int32_t*>(upload(ptr(host.indices.slot_in), bytes(host.indices.slot_in)));
    params_.slot_out = h.slot_out ? static_cast<const int32_t*>(upload(ptr(host.indices.slot_out), bytes(host.indices.slot_out))) : nullptr;
    params_.token_state_slots =
        h.token_state_slots
            ? static_cast<const int32_t*>(upload(ptr(host.indices.token_state_slots), bytes(host.indices.token_state_slots)))
            : nullptr;
    params_.state = upload(ptr(host.state), bytes(host.state));
    params_.x = upload(ptr(host.x), bytes(host.x));
    params_.dt = upload(ptr(host.dt), bytes(host.dt));
    params_.B = upload(ptr(host.B), bytes(host.B));
    params_.C = upload(ptr(host.C), bytes(host.C));
    params_.z = h.z ? upload(ptr(host.z), bytes(host.z)) : nullptr;
    params_.y = upload(ptr(host.y), bytes(host.y));
    params_.A = static_cast<const float*>(upload(ptr(host.A), bytes(host.A)));
    params_.dt_bias = h.dt_bias ? static_cast<const float*>(upload(ptr(host.dt_bias), bytes(host.dt_bias))) : nullptr;
    params_.D = h.D ? static_cast<const float*>(upload(ptr(host.D), bytes(host.D))) : nullptr;
  } catch (...) {
    for (void* d : allocations_) cudaFree(d);
    throw;
  }
  y_bytes_ = bytes(host.y);
  state_bytes_ = bytes(host.state);
}

DeviceLaunch::~DeviceLaunch() {
  for (void* d : allocations_) cudaFree(d);  // no throw from a destructor
}

void DeviceLaunch::launch(cudaStream_t stream, const LaunchOptions& options) const {
  ssmv::ssu::launch(params_, stream, options);
}

void DeviceLaunch::reset_state(const HostLaunch& host) {
  SSMV_CUDA_CHECK(cudaMemcpy(params_.state, host.state.data(), state_bytes_, cudaMemcpyHostToDevice));
}

Result DeviceLaunch::download() const {
  SSMV_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint8_t> y(y_bytes_), state(state_bytes_);
  if (y_bytes_) SSMV_CUDA_CHECK(cudaMemcpy(y.data(), params_.y, y_bytes_, cudaMemcpyDeviceToHost));
  SSMV_CUDA_CHECK(cudaMemcpy(state.data(), params_.state, state_bytes_, cudaMemcpyDeviceToHost));
  return decode_result(params_.output_format, y, params_.state_format, state);
}

Result run_gpu(const DecodeProblem& d, const Config& config) {
  HostLaunch host(d, config);  // validates before anything touches the device
  if (!cuda_device_available()) throw std::runtime_error("ssu::run_gpu: no CUDA device");
  DeviceLaunch dev(host);
  dev.launch(nullptr, LaunchOptions{config.variant});
  return dev.download();
}

}  // namespace ssmv::ssu
