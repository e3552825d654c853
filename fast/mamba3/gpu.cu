// run_gpu: HostLaunch's buffers copied to the device, the same Params pointed there, one launch
// per token, y and the four-part state copied back.
#include <cuda_runtime_api.h>

#include <cstring>
#include <stdexcept>
#include <vector>

#include "fast/common/cuda_check.h"
#include "fast/mamba3/gpu.h"
#include "fast/mamba3/launch.h"
#include "fast/mamba3/pack.h"

namespace ssmv::mamba3_step {
namespace {

// One device allocation holding a host vector's bytes.
class DeviceBuffer {
 public:
  template <class T>
  explicit DeviceBuffer(const std::vector<T>& host) : bytes_(host.size() * sizeof(T)) {
    if (bytes_ == 0) return;
    SSMV_CUDA_CHECK(cudaMalloc(&ptr_, bytes_));
    SSMV_CUDA_CHECK(cudaMemcpy(ptr_, host.data(), bytes_, cudaMemcpyHostToDevice));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }
  template <class T>
  void download(std::vector<T>& host) const {
    if (bytes_ != 0) SSMV_CUDA_CHECK(cudaMemcpy(host.data(), ptr_, bytes_, cudaMemcpyDeviceToHost));
  }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  size_t bytes_ = 0;
  void* ptr_ = nullptr;
};

// A host pointer of `host` moved to the same offset in `dev` (null stays null).
template <class T, class V>
T* moved(T* host_ptr, const std::vector<V>& host, const DeviceBuffer& dev) {
  if (host_ptr == nullptr) return nullptr;
  const auto offset = static_cast<const char*>(static_cast<const void*>(host_ptr)) -
                      static_cast<const char*>(static_cast<const void*>(host.data()));
  return static_cast<T*>(static_cast<void*>(dev.as<char>() + offset));
}

}  // namespace

Result run_gpu(const ssmv::mamba3::Problem& pr, int block_threads) {
  HostLaunch host(pr);
  if (!cuda_device_available()) throw std::runtime_error("mamba3_step::run_gpu: no CUDA device");
  const DeviceBuffer tokens(host.tokens), x(host.x), B(host.B), C(host.C), trap(host.trap), angles(host.angles),
      z(host.z), y(host.y), dt(host.dt), adt(host.adt), B_bias(host.B_bias), C_bias(host.C_bias), D(host.D),
      angle_state(host.angle_state), S(host.S), B_prev(host.B_prev), x_prev(host.x_prev);
  for (int64_t k = 0; k < host.launches(); ++k) {
    const Params hp = host.params(k);
    Params p = hp;
    p.token = moved(hp.token, host.tokens, tokens);
    p.x = moved(hp.x, host.x, x);
    p.B = moved(hp.B, host.B, B);
    p.C = moved(hp.C, host.C, C);
    p.trap = moved(hp.trap, host.trap, trap);
    p.angles = moved(hp.angles, host.angles, angles);
    p.z = moved(hp.z, host.z, z);
    p.y = moved(hp.y, host.y, y);
    p.dt = moved(hp.dt, host.dt, dt);
    p.adt = moved(hp.adt, host.adt, adt);
    p.B_bias = moved(hp.B_bias, host.B_bias, B_bias);
    p.C_bias = moved(hp.C_bias, host.C_bias, C_bias);
    p.D = moved(hp.D, host.D, D);
    p.angle_state = moved(hp.angle_state, host.angle_state, angle_state);
    p.S = moved(hp.S, host.S, S);
    p.B_prev = moved(hp.B_prev, host.B_prev, B_prev);
    p.x_prev = moved(hp.x_prev, host.x_prev, x_prev);
    launch(p, nullptr, block_threads);
  }
  SSMV_CUDA_CHECK(cudaDeviceSynchronize());
  y.download(host.y);
  angle_state.download(host.angle_state);
  S.download(host.S);
  B_prev.download(host.B_prev);
  x_prev.download(host.x_prev);
  return host.result();
}

}  // namespace ssmv::mamba3_step
