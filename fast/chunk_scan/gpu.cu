#include "fast/chunk_scan/gpu.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "fast/chunk_scan/check.h"
#include "fast/chunk_scan/device_launch.h"
#include "fast/chunk_scan/kernels_async.cuh"
#include "fast/common/cuda_check.h"
#include "fast/common/storage_bytes.h"

namespace ssmv::chunk_scan {
namespace {

// A device allocation of `bytes`, freed on destruction.
struct DeviceBuffer {
  void* ptr = nullptr;
  size_t bytes = 0;
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t n) : bytes(n) {
    if (n > 0) SSMV_CUDA_CHECK(cudaMalloc(&ptr, n));
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr(o.ptr), bytes(o.bytes) { o.ptr = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr, o.ptr);
    std::swap(bytes, o.bytes);
    return *this;
  }
  ~DeviceBuffer() {
    if (ptr) cudaFree(ptr);
  }
};

// Values exact in f, encoded as f's bits (2 or 4 bytes each), uploaded.
DeviceBuffer upload(const float* v, size_t n, Format f) {
  DeviceBuffer d(n * storage_bytes(f));
  if (n == 0) return d;
  if (f == Format::fp32) {
    SSMV_CUDA_CHECK(cudaMemcpy(d.ptr, v, d.bytes, cudaMemcpyHostToDevice));
  } else {
    std::vector<uint16_t> bits(n);
    for (size_t i = 0; i < n; ++i) bits[i] = uint16_t(encode_exact(f, v[i]));
    SSMV_CUDA_CHECK(cudaMemcpy(d.ptr, bits.data(), d.bytes, cudaMemcpyHostToDevice));
  }
  return d;
}
DeviceBuffer upload(const std::vector<float>& v, Format f) { return upload(v.data(), v.size(), f); }
// The same of a tensor; one held as f's bits is copied as it is.
DeviceBuffer upload(const FormatValues& v, Format f) {
  if (!v.holds_bits()) return upload(v.floats(), v.size(), f);
  if (v.format() != f) return upload(v.to_vector(), f);
  DeviceBuffer d(v.size() * 2);
  if (!v.empty()) SSMV_CUDA_CHECK(cudaMemcpy(d.ptr, v.bits(), d.bytes, cudaMemcpyHostToDevice));
  return d;
}

template <class T>
DeviceBuffer upload_raw(const std::vector<T>& v) {
  DeviceBuffer d(v.size() * sizeof(T));
  if (!v.empty()) SSMV_CUDA_CHECK(cudaMemcpy(d.ptr, v.data(), d.bytes, cudaMemcpyHostToDevice));
  return d;
}

std::vector<float> download_as(const void* ptr, size_t count, Format f) {
  std::vector<float> out(count);
  if (count == 0) return out;
  if (f == Format::fp32) {
    SSMV_CUDA_CHECK(cudaMemcpy(out.data(), ptr, count * 4, cudaMemcpyDeviceToHost));
  } else {
    std::vector<uint16_t> bits(count);
    SSMV_CUDA_CHECK(cudaMemcpy(bits.data(), ptr, count * 2, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < count; ++i) out[i] = float(decode(f, bits[i]));
  }
  return out;
}

std::vector<int32_t> to_i32(const std::vector<int64_t>& v) { return {v.begin(), v.end()}; }

}  // namespace

struct DeviceLaunch::Buffers {
  DeviceBuffer x, dt, A, dt_bias, D, B, C, z, h0;
  DeviceBuffer chunk_start, chunk_len, seq_first_chunk;
  DeviceBuffer delta, cumsum, chunk_decay, chunk_state, state_in, cb;
  DeviceBuffer y, final_state, boundary;
};

DeviceLaunch::DeviceLaunch(const Problem& pr, const Config& cfg)
    : buffers_(std::make_unique<Buffers>()), config_(cfg) {
  validate(pr, cfg);
  const Shape& sh = pr.shape;
  plan_ = plan_chunks(sh.cu_seqlens, cfg.chunk_size);
  Params& p = params_;
  p.T = int32_t(sh.num_tokens());
  p.S = int32_t(sh.num_sequences());
  p.H = int32_t(sh.H);
  p.P = int32_t(sh.P);
  p.N = int32_t(sh.N);
  p.G = int32_t(sh.G);
  p.L = int32_t(cfg.chunk_size);
  p.NC = int32_t(plan_.num_chunks());
  p.input = pr.formats.input;
  p.state = pr.formats.state;
  p.output = pr.formats.output;
  p.use_mma = uses_mma(cfg.contract, pr.formats.input);
  p.dt_softplus = pr.dt_softplus;
  p.d_mode = pr.d_mode();
  p.dt_lo = pr.dt_limit_lo;
  p.dt_hi = pr.dt_limit_hi;

  Buffers& b = *buffers_;
  const Format in = pr.formats.input;
  b.x = upload(pr.x, in);
  b.dt = upload(pr.dt, in);
  b.A = upload_raw(pr.A);
  b.dt_bias = upload_raw(pr.dt_bias);
  b.D = upload_raw(pr.D);
  b.B = upload(pr.B, in);
  b.C = upload(pr.C, in);
  b.z = upload(pr.z, in);
  b.h0 = upload(pr.initial_state, pr.formats.state);
  b.chunk_start = upload_raw(to_i32(plan_.start));
  b.chunk_len = upload_raw(to_i32(plan_.len));
  b.seq_first_chunk = upload_raw(to_i32(plan_.first_chunk));
  const size_t T = size_t(p.T), H = size_t(p.H), NC = size_t(p.NC);
  const size_t states = NC * H * size_t(p.P) * size_t(p.N);
  b.delta = DeviceBuffer(H * T * 4);
  b.cumsum = DeviceBuffer(H * T * 4);
  b.chunk_decay = DeviceBuffer(NC * H * 4);
  b.chunk_state = DeviceBuffer(states * 4);
  b.state_in = DeviceBuffer(states * (p.use_mma ? 2 : 4));
  b.cb = DeviceBuffer(NC * size_t(p.G) * size_t(p.L) * size_t(p.L) * 4);
  b.y = DeviceBuffer(T * H * size_t(p.P) * storage_bytes(p.output));
  b.final_state = DeviceBuffer(size_t(p.S) * H * size_t(p.P) * size_t(p.N) * storage_bytes(p.state));
  if (cfg.boundary_states) b.boundary = DeviceBuffer(states * storage_bytes(p.state));
  for (DeviceBuffer* d : {&b.y, &b.final_state, &b.boundary, &b.cb}) {
    if (d->ptr) SSMV_CUDA_CHECK(cudaMemset(d->ptr, 0xff, d->bytes));
  }

  p.x = b.x.ptr;
  p.x_st = int64_t(H) * p.P;
  p.x_sh = p.P;
  p.dt = b.dt.ptr;
  p.dt_st = p.H;
  p.A = static_cast<const float*>(b.A.ptr);
  p.dt_bias = static_cast<const float*>(b.dt_bias.ptr);
  p.D = static_cast<const float*>(b.D.ptr);
  p.B = b.B.ptr;
  p.b_st = int64_t(p.G) * p.N;
  p.b_sg = p.N;
  p.C = b.C.ptr;
  p.c_st = p.b_st;
  p.c_sg = p.N;
  p.z = b.z.ptr;
  p.z_st = p.x_st;
  p.z_sh = p.x_sh;
  p.initial_state = b.h0.ptr;
  p.chunk_start = static_cast<const int32_t*>(b.chunk_start.ptr);
  p.chunk_len = static_cast<const int32_t*>(b.chunk_len.ptr);
  p.seq_first_chunk = static_cast<const int32_t*>(b.seq_first_chunk.ptr);
  p.delta = static_cast<float*>(b.delta.ptr);
  p.cumsum = static_cast<float*>(b.cumsum.ptr);
  p.chunk_decay = static_cast<float*>(b.chunk_decay.ptr);
  p.chunk_state = static_cast<float*>(b.chunk_state.ptr);
  p.state_in = b.state_in.ptr;
  p.cb = static_cast<float*>(b.cb.ptr);
  p.y = b.y.ptr;
  p.y_st = p.x_st;
  p.y_sh = p.x_sh;
  p.final_state = b.final_state.ptr;
  p.boundary_states = b.boundary.ptr;
  check_params(p);
}

DeviceLaunch::~DeviceLaunch() = default;

namespace {

// Allows `Kernel` up to 128 KiB of dynamic shared memory, once per kernel (one static per
// template instantiation, so per kernel function; initialisation is thread-safe).
template <auto Kernel>
void allow_large_smem() {
  static const bool done = [] {
    SSMV_CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 128 * 1024));
    return true;
  }();
  (void)done;
}

// Launches kernel(p) on `stream`. Programmatic (stages b–e of the tensor-core path inside
// launch()): the launch may begin while the stage before it is still running, once every
// block of that stage has executed allow_next_stage(); the kernel then reads nothing the
// earlier stages write before wait_prior_stages() (kernels.cuh), which returns once the
// stage before has completed and its writes are visible. Every block of such a kernel
// passes wait_prior_stages(), so a stage's completion implies that of all stages before it.
void launch_kernel(void (*kernel)(Params), dim3 grid, int threads, int smem, cudaStream_t stream,
                   bool programmatic, const Params& p) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = dim3(unsigned(threads));
  cfg.dynamicSmemBytes = size_t(smem);
  cfg.stream = stream;
  cudaLaunchAttribute attr = {};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = programmatic ? 1 : 0;
  SSMV_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, p));
}

template <class In, class Op>
void launch_one(const Params& p, int stage, cudaStream_t stream, bool programmatic) {
  using namespace gpu;
  const int pt = (p.P + kTile - 1) / kTile, nt = (p.N + kTile - 1) / kTile, mt = p.L / kTile;
  const int64_t per_seq = int64_t(p.H) * p.P * p.N;
  constexpr bool mma = !std::is_same_v<Op, float>;
  auto go = [&](void (*kernel)(Params), dim3 grid, int threads, int smem) {
    launch_kernel(kernel, grid, threads, smem, stream, programmatic, p);
  };
  switch (stage) {
    case 0: launch_kernel(cumsum_kernel<In>, dim3(p.NC, p.H), p.L, 0, stream, false, p); break;
    case 1:
      if constexpr (mma) {
        const int n_wide = (p.N + 127) / 128;
        allow_large_smem<chunk_state_async_kernel<Op>>();
        go(chunk_state_async_kernel<Op>, dim3(pt * n_wide, p.H, p.NC), kStateThreads, chunk_state_async_smem(p.L));
      } else {
        go(chunk_state_kernel<In, Op>, dim3(pt * nt, p.H, p.NC), kThreads, 0);
      }
      break;
    case 2:
      if ((p.P * p.N) % 2 == 0) {
        go(state_passing_kernel<Op, 2>, dim3(unsigned((per_seq + 511) / 512), unsigned(std::min(p.S, 65535))), 256,
           0);
      } else {
        go(state_passing_kernel<Op, 1>, dim3(unsigned((per_seq + 255) / 256), unsigned(std::min(p.S, 65535))), 256, 0);
      }
      break;
    case 3:
      if constexpr (mma) {
        allow_large_smem<cb_mma_kernel<Op>>();
        go(cb_mma_kernel<Op>, dim3(mt * mt, p.G, p.NC), kThreads, rows64_smem(p.N));
      } else {
        go(cb_kernel<In, Op>, dim3(mt * mt, p.G, p.NC), kThreads, 0);
      }
      break;
    case 4:
      if constexpr (mma) {
        allow_large_smem<scan_async_kernel<Op>>();
        go(scan_async_kernel<Op>, dim3(mt * pt, p.H, p.NC), kThreads, scan_async_smem(p.N, p.L));
      } else {
        go(scan_kernel<In, Op>, dim3(mt * pt, p.H, p.NC), kThreads, 0);
      }
      break;
  }
  SSMV_CUDA_CHECK(cudaGetLastError());
}

void dispatch(const Params& p, int stage, cudaStream_t stream, bool programmatic) {
  switch (p.input) {
    case Format::bf16:
      if (p.use_mma) launch_one<__nv_bfloat16, __nv_bfloat16>(p, stage, stream, programmatic);
      else launch_one<__nv_bfloat16, float>(p, stage, stream, programmatic);
      break;
    case Format::fp16:
      if (p.use_mma) launch_one<__half, __half>(p, stage, stream, programmatic);
      else launch_one<__half, float>(p, stage, stream, programmatic);
      break;
    case Format::fp32:
      launch_one<float, float>(p, stage, stream, programmatic);
      break;
    case Format::int16_scaled:  // a state format: no input has it (spec validate)
      throw ProblemError("chunk_scan: field 'input' = int16_scaled: not an input format");
  }
}

}  // namespace

void DeviceLaunch::launch(cudaStream_t stream) {
  check_params(params_);
  // Stages b–e of the tensor-core path launch programmatically (launch_kernel); the fp32
  // contract's SIMT stages do not: they ran 1.5 % slower so (2553–2562 against 2572–2606 µs
  // at 1 × 8192, bench/NOTES.md, chunk_scan fourth round).
  for (int stage = 0; stage < 5; ++stage) dispatch(params_, stage, stream, stage > 0 && params_.use_mma);
}

void DeviceLaunch::launch_stage(int stage, cudaStream_t stream) {
  if (stage < 0 || stage > 4) {
    throw ProblemError("chunk_scan launch_stage: stage = " + std::to_string(stage) + " is not in 0..4");
  }
  dispatch(params_, stage, stream, false);
}

Result DeviceLaunch::download() const {
  SSMV_CUDA_CHECK(cudaDeviceSynchronize());
  const Params& p = params_;
  const Buffers& b = *buffers_;
  const size_t T = size_t(p.T), H = size_t(p.H), NC = size_t(p.NC);
  const size_t states = NC * H * size_t(p.P) * size_t(p.N);
  Result r;
  r.y = download_as(b.y.ptr, T * H * size_t(p.P), p.output);
  r.final_state = download_as(b.final_state.ptr, size_t(p.S) * H * size_t(p.P) * size_t(p.N), p.state);
  if (config_.boundary_states) {
    r.boundary_states = download_as(b.boundary.ptr, states, p.state);
    for (int64_t c = 0; c < plan_.num_chunks(); ++c) {
      r.boundary_positions.push_back(plan_.start[c] + plan_.len[c]);
    }
  }
  if (config_.keep_intermediates) {
    r.stages.delta = download_as(b.delta.ptr, H * T, Format::fp32);
    r.stages.cumsum = download_as(b.cumsum.ptr, H * T, Format::fp32);
    r.stages.chunk_state = download_as(b.chunk_state.ptr, states, Format::fp32);
    r.stages.state_in = download_as(b.state_in.ptr, states, p.use_mma ? p.input : Format::fp32);
    r.stages.cb = download_as(b.cb.ptr, NC * size_t(p.G) * size_t(p.L) * size_t(p.L), Format::fp32);
  }
  return r;
}

Result run_gpu(const Problem& problem, const Config& config) {
  validate(problem, config);  // before anything touches the device
  if (!cuda_device_available()) throw std::runtime_error("chunk_scan::run_gpu: no CUDA device");
  DeviceLaunch gpu(problem, config);
  gpu.launch();
  SSMV_CUDA_CHECK(cudaGetLastError());
  return gpu.download();
}

}  // namespace ssmv::chunk_scan
