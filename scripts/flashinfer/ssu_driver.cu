// Runs FlashInfer's CUDA selective_state_update (single-token STP and multi-token MTP launches)
// from its own headers, fetched at build time (never copied into this repository), and writes
// each run's inputs and outputs as .npy files plus meta.json, which pack_dumps.py turns into the
// self-describing .npz dumps of docs/tensor-files.md. Build and run: scripts/flashinfer/README.md.
//
// Compiled as FlashInfer's JIT compiles the module (flashinfer/jit/core.py gen_jit_spec and
// jit/mamba/selective_state_update.py: -use_fast_math -O3 -DFLASHINFER_ENABLE_BF16
// -DFLASHINFER_ENABLE_F16 -DFLASHINFER_MAMBA_ENABLE_SM90), with the constants its
// selective_state_update_customize_config.jinja defines (DIM, DSTATE, NTOKENS_MTP, PHILOX_ROUNDS).
//
// Usage: ssu_driver OUT_DIR NAME STATE(fp32|bf16|fp16|int16) INPUT(bf16|fp32) K(1: STP, else MTP = NTOK)
//                   ALGO(simple|vertical|horizontal|auto) BATCH H G TOKENS_PER_SEQ SEED Z(0|1) SR(0|1|2)
// SR 1: stochastic rounding with one Philox seed for every launch; 2: a new seed per launch.
// STATE int16: FlashInfer's scaled 16-bit integer state (state_scale_t = float): each (slot, head,
// dim) row of N codes has one fp32 decode scale, state_scale [slots, H, P]; the initial pool is
// quantized on the host as the kernel quantizes (encode = 32767/max|row|, decode = 1/encode,
// code = rint(clip(v·encode, ±32767))), and initial_states_scale / final_states_scale are dumped
// beside the codes.
// dt = FI_DT_MEAN + FI_DT_STD·N(0, 1) (environment; default -4 and 3: δ = softplus(dt + dt_bias)
// from about 1e-4 to 5, so A·δ reaches the range where __expf flushes), rounded to the input format.
// FI_INPUT_DIR: read the inputs instead (x, B, C, z in the input format's bits, dt, A, D, dt_bias as
// fp32, initial_states in the state format's bits; .npy in the packed layout, as written by
// make_handoff.py): the decode half of a hand-off from another kernel's stored state.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#ifndef NTOK
#define NTOK 4
#endif
#ifndef PHILOX
#define PHILOX 0
#endif
#ifndef FI_DIM
#define FI_DIM 64
#endif
#ifndef FI_DSTATE
#define FI_DSTATE 128
#endif
using cuSeqlensIndex_t = int32_t;
using numAcceptedIndex_t = int32_t;
constexpr int DIM = FI_DIM;
constexpr int DSTATE = FI_DSTATE;
constexpr int NTOKENS_MTP = NTOK;
constexpr int PHILOX_ROUNDS = PHILOX;

#include <flashinfer/mamba/selective_state_update.cuh>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace fi = flashinfer::mamba;

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// .npy writer (format 1.0, C order).
void save_npy(const std::string& path, const char* descr, size_t itemsize, const void* data,
              const std::vector<int64_t>& shape) {
  std::string s = "(";
  size_t n = 1;
  for (int64_t d : shape) {
    s += std::to_string(d) + ",";
    n *= size_t(d);
  }
  if (shape.size() > 1) s.pop_back();
  s += ")";
  std::string header = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': " + s + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  const char magic[] = "\x93NUMPY\x01\x00";
  f.write(magic, 8);
  const uint16_t len = uint16_t(header.size());
  f.write(reinterpret_cast<const char*>(&len), 2);
  f.write(header.data(), std::streamsize(header.size()));
  f.write(static_cast<const char*>(data), std::streamsize(n * itemsize));
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::exit(1);
  }
}

float round_bf16(float v) { return __bfloat162float(__float2bfloat16(v)); }

// A .npy file (format 1.0, C order) of exactly `count` items of `itemsize` bytes (the writer is
// make_handoff.py: the shapes are this program's).
template <class T>
std::vector<T> load_npy(const std::string& path, size_t count) {
  std::ifstream f(path, std::ios::binary);
  char head[10];
  if (!f.read(head, 10) || std::memcmp(head, "\x93NUMPY\x01\x00", 8) != 0) {
    std::fprintf(stderr, "%s: not a .npy 1.0 file\n", path.c_str());
    std::exit(1);
  }
  const uint16_t len = uint16_t(uint8_t(head[8]) | (uint8_t(head[9]) << 8));
  f.seekg(10 + len);
  std::vector<T> v(count);
  if (!f.read(reinterpret_cast<char*>(v.data()), std::streamsize(count * sizeof(T))) || f.peek() != EOF) {
    std::fprintf(stderr, "%s: not %zu items of %zu bytes\n", path.c_str(), count, sizeof(T));
    std::exit(1);
  }
  return v;
}

template <class T> T from_float(float v);
template <> float from_float<float>(float v) { return v; }
template <> __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16(v); }
template <> __half from_float<__half>(float v) { return __float2half(v); }
template <class T> const char* npy_descr() {
  return sizeof(T) == 4 ? "<f4" : std::is_same_v<T, __half> ? "<f2" : std::is_same_v<T, int16_t> ? "<i2" : "<u2";
}

// One row of the initial int16 pool, quantized as convertAndStore(int16_t*) and the kernel's
// block scale do it (conversion.cuh, kernel_selective_state_update_stp.cuh): returns the decode
// scale written beside the codes (1 for an all-zero row).
float quantize_row(const float* v, int16_t* q, int n) {
  float m = 0.f;
  for (int i = 0; i < n; ++i) m = std::fmax(m, std::fabs(v[i]));
  const float enc = m == 0.f ? 1.f : 32767.f / m;
  for (int i = 0; i < n; ++i) q[i] = int16_t(std::nearbyint(std::fmin(std::fmax(v[i] * enc, -32767.f), 32767.f)));
  return 1.f / enc;
}

template <class T>
struct Dev {
  T* p = nullptr;
  size_t n = 0;
  explicit Dev(const std::vector<T>& h) : n(h.size()) {
    check(cudaMalloc(&p, n * sizeof(T) + 256), "cudaMalloc");
    check(cudaMemcpy(p, h.data(), n * sizeof(T), cudaMemcpyHostToDevice), "H2D");
  }
  std::vector<T> get() const {
    std::vector<T> h(n);
    check(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost), "D2H");
    return h;
  }
  ~Dev() { cudaFree(p); }
};

fi::SSUAlgorithm algo_of(const std::string& a) {
  if (a == "simple") return fi::SSUAlgorithm::kSimple;
  if (a == "vertical") return fi::SSUAlgorithm::kVertical;
  if (a == "horizontal") return fi::SSUAlgorithm::kHorizontal;
  return fi::SSUAlgorithm::kAuto;
}

struct Args {
  std::string out, name, state, input, algo;
  int K, batch, H, G, T, z, sr;
  uint64_t seed;
};

// One dump: `T` tokens per sequence (batch sequences), launched K tokens at a time (K = 1:
// the single-token kernel invokeSelectiveStateUpdate; K > 1: invokeSelectiveStateUpdateMTP with
// ntokens_mtp = K = NTOKENS_MTP), the state kept in a pool of batch + 3 slots in the cache
// format between launches.
template <class input_t, class state_t, class scale_t = void>
void run(const Args& a) {
  constexpr bool scaled = !std::is_same_v<scale_t, void>;
  const int P = DIM, N = DSTATE, H = a.H, G = a.G, batch = a.batch, T = a.T, K = a.K;
  if (T % K != 0) { std::fprintf(stderr, "tokens per sequence must be a multiple of K\n"); std::exit(2); }
  const int slots = batch + 3;
  std::mt19937_64 rng(a.seed);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::uniform_real_distribution<float> ud(0.f, 1.f);
  auto in_val = [&](float v) { return std::is_same_v<input_t, float> ? v : round_bf16(v); };
  const size_t TT = size_t(batch) * T;  // packed tokens: sequence b owns [b*T, (b+1)*T)
  std::vector<float> x(TT * H * P), B(TT * G * N), C(TT * G * N), z(TT * H * P), dt(TT * H);
  for (auto& v : x) v = in_val(nd(rng));
  for (auto& v : B) v = in_val(nd(rng));
  for (auto& v : C) v = in_val(nd(rng));
  for (auto& v : z) v = in_val(nd(rng));
  const char* dt_mean = std::getenv("FI_DT_MEAN");
  const char* dt_std = std::getenv("FI_DT_STD");
  const float mu = dt_mean ? std::strtof(dt_mean, nullptr) : -4.f, sd = dt_std ? std::strtof(dt_std, nullptr) : 3.f;
  for (auto& v : dt) v = in_val(mu + sd * nd(rng));
  std::vector<float> A(H), D(H), dt_bias(H);
  for (int h = 0; h < H; ++h) {
    A[h] = -std::exp(std::log(1.f) + std::log(16.f) * ud(rng));  // -exp(U(0, ln 16)), Mamba2's A init
    D[h] = nd(rng);
    dt_bias[h] = std::log(std::expm1(0.001f + 0.099f * ud(rng)));  // inverse softplus of U(0.001, 0.1)
  }
  std::vector<int32_t> slot(batch);
  for (int b = 0; b < batch; ++b) slot[b] = (b * 7 + 2) % slots;  // a permutation into the pool
  std::vector<state_t> pool(size_t(slots) * H * P * N);
  std::vector<float> pool_scale(scaled ? size_t(slots) * H * P : 0);  // [slots, H, P] decode scales
  if constexpr (scaled) {
    std::vector<float> row(N);
    for (size_t r = 0; r < pool_scale.size(); ++r) {
      for (auto& v : row) v = 0.5f * nd(rng);
      pool_scale[r] = quantize_row(row.data(), &pool[r * N], N);
    }
  } else {
    for (auto& v : pool) v = from_float<state_t>(0.5f * nd(rng));
  }
  const size_t HPN = size_t(H) * P * N, HP = size_t(H) * P;
  std::vector<state_t> init(size_t(batch) * HPN);
  std::vector<float> init_scale(scaled ? batch * HP : 0);
  for (int b = 0; b < batch; ++b) std::memcpy(&init[b * HPN], &pool[slot[b] * HPN], HPN * sizeof(state_t));
  if constexpr (scaled) {
    for (int b = 0; b < batch; ++b) std::memcpy(&init_scale[b * HP], &pool_scale[slot[b] * HP], HP * sizeof(float));
  }

  // Device tensors in the kernel's types: inputs input_t, dt/D/dt_bias (weight_t) and A fp32.
  std::vector<input_t> xi(x.size()), Bi(B.size()), Ci(C.size()), zi(z.size());
  for (size_t i = 0; i < x.size(); ++i) xi[i] = from_float<input_t>(x[i]), zi[i] = from_float<input_t>(z[i]);
  for (size_t i = 0; i < B.size(); ++i) Bi[i] = from_float<input_t>(B[i]), Ci[i] = from_float<input_t>(C[i]);
  if (const char* in = std::getenv("FI_INPUT_DIR")) {
    if (scaled) { std::fprintf(stderr, "FI_INPUT_DIR takes fp32, bf16 or fp16 states, not int16\n"); std::exit(2); }
    const std::string d(in);
    xi = load_npy<input_t>(d + "/x.npy", xi.size());
    zi = load_npy<input_t>(d + "/z.npy", zi.size());
    Bi = load_npy<input_t>(d + "/B.npy", Bi.size());
    Ci = load_npy<input_t>(d + "/C.npy", Ci.size());
    dt = load_npy<float>(d + "/dt.npy", dt.size());
    A = load_npy<float>(d + "/A.npy", A.size());
    D = load_npy<float>(d + "/D.npy", D.size());
    dt_bias = load_npy<float>(d + "/dt_bias.npy", dt_bias.size());
    init = load_npy<state_t>(d + "/initial_states.npy", init.size());
    for (int b = 0; b < batch; ++b) std::memcpy(&pool[slot[b] * HPN], &init[b * HPN], HPN * sizeof(state_t));
  }
  // The kernel reads token blocks [batch, K, ...]: reorder from the packed sequence layout.
  auto block = [&](const auto& src, size_t row, int launch) {
    using V = typename std::decay_t<decltype(src)>::value_type;
    std::vector<V> dst(size_t(batch) * K * row);
    for (int b = 0; b < batch; ++b)
      for (int k = 0; k < K; ++k)
        std::memcpy(&dst[(size_t(b) * K + k) * row], &src[(size_t(b) * T + launch * K + k) * row], row * sizeof(V));
    return dst;
  };
  Dev<state_t> d_pool(pool);
  Dev<float> d_scale(scaled ? pool_scale : std::vector<float>(1));
  Dev<float> d_A(A), d_D(D), d_dtb(dt_bias);
  Dev<int32_t> d_slot(slot);
  std::vector<input_t> y(TT * H * P);
  for (int launch = 0; launch < T / K; ++launch) {
    std::vector<int64_t> seed_h{int64_t(a.seed * 2654435761ull) + (a.sr == 2 ? launch : 0)};
    Dev<int64_t> d_seed(seed_h);
    Dev<input_t> d_x(block(xi, size_t(H) * P, launch)), d_z(block(zi, size_t(H) * P, launch)),
        d_B(block(Bi, size_t(G) * N, launch)), d_C(block(Ci, size_t(G) * N, launch));
    Dev<float> d_dt(block(dt, size_t(H), launch));
    Dev<input_t> d_y(std::vector<input_t>(size_t(batch) * K * H * P));
    fi::mtp::SelectiveStateMTPParams p;
    p.batch = batch; p.nheads = H; p.dim = P; p.dstate = N; p.ngroups = G; p.state_cache_size = slots;
    p.pad_slot_id = -1;
    p.state = d_pool.p; p.x = d_x.p; p.dt = d_dt.p; p.dt_bias = d_dtb.p; p.A = d_A.p; p.B = d_B.p; p.C = d_C.p;
    p.D = d_D.p; p.z = a.z ? d_z.p : nullptr; p.output = d_y.p; p.state_batch_indices = d_slot.p;
    p.state_stride_batch = int64_t(HPN);
    if (scaled) p.state_scale = d_scale.p, p.state_scale_stride_batch = int64_t(HP);
    p.dt_softplus = true; p.update_state = true;
    p.rand_seed = a.sr ? d_seed.p : nullptr;
    p.x_stride_batch = int64_t(K) * H * P; p.z_stride_batch = p.x_stride_batch; p.out_stride_batch = p.x_stride_batch;
    p.dt_stride_batch = int64_t(K) * H; p.B_stride_batch = int64_t(K) * G * N; p.C_stride_batch = p.B_stride_batch;
    if (K == 1) {
      fi::invokeSelectiveStateUpdate<input_t, float, float, state_t, int32_t, scale_t>(p, algo_of(a.algo), nullptr);
    } else {
      p.ntokens_mtp = K; p.cache_steps = 0;
      p.x_stride_mtp = int64_t(H) * P; p.z_stride_mtp = p.x_stride_mtp; p.out_stride_mtp = p.x_stride_mtp;
      p.dt_stride_mtp = H; p.B_stride_mtp = int64_t(G) * N; p.C_stride_mtp = p.B_stride_mtp;
      fi::mtp::invokeSelectiveStateUpdateMTP<input_t, float, float, state_t, int32_t, scale_t>(p, algo_of(a.algo),
                                                                                              nullptr);
    }
    check(cudaGetLastError(), "launch");
    check(cudaDeviceSynchronize(), "sync");
    const std::vector<input_t> yl = d_y.get();
    for (int b = 0; b < batch; ++b)
      for (int k = 0; k < K; ++k)
        std::memcpy(&y[(size_t(b) * T + launch * K + k) * H * P], &yl[(size_t(b) * K + k) * H * P],
                    size_t(H) * P * sizeof(input_t));
  }
  const std::vector<state_t> pool_after = d_pool.get();
  std::vector<state_t> fin(size_t(batch) * HPN);
  for (int b = 0; b < batch; ++b) std::memcpy(&fin[b * HPN], &pool_after[slot[b] * HPN], HPN * sizeof(state_t));
  const std::vector<float> scale_after = d_scale.get();
  std::vector<float> fin_scale(scaled ? batch * HP : 0);
  if constexpr (scaled) {
    for (int b = 0; b < batch; ++b) std::memcpy(&fin_scale[b * HP], &scale_after[slot[b] * HP], HP * sizeof(float));
  }

  const std::string dir = a.out + "/" + a.name;
  if (std::system(("mkdir -p '" + dir + "'").c_str()) != 0) std::exit(1);
  const int64_t TTi = int64_t(TT);
  save_npy(dir + "/x.npy", npy_descr<input_t>(), sizeof(input_t), xi.data(), {TTi, H, P});
  save_npy(dir + "/B.npy", npy_descr<input_t>(), sizeof(input_t), Bi.data(), {TTi, G, N});
  save_npy(dir + "/C.npy", npy_descr<input_t>(), sizeof(input_t), Ci.data(), {TTi, G, N});
  if (a.z) save_npy(dir + "/z.npy", npy_descr<input_t>(), sizeof(input_t), zi.data(), {TTi, H, P});
  save_npy(dir + "/dt.npy", "<f4", 4, dt.data(), {TTi, H});  // input-format values held in fp32
  save_npy(dir + "/A.npy", "<f4", 4, A.data(), {H});
  save_npy(dir + "/D.npy", "<f4", 4, D.data(), {H});
  save_npy(dir + "/dt_bias.npy", "<f4", 4, dt_bias.data(), {H});
  std::vector<int32_t> cu(batch + 1);
  for (int b = 0; b <= batch; ++b) cu[b] = b * T;
  save_npy(dir + "/cu_seqlens.npy", "<i4", 4, cu.data(), {batch + 1});
  save_npy(dir + "/initial_states.npy", npy_descr<state_t>(), sizeof(state_t), init.data(), {batch, H, P, N});
  save_npy(dir + "/final_states.npy", npy_descr<state_t>(), sizeof(state_t), fin.data(), {batch, H, P, N});
  if (scaled) {
    save_npy(dir + "/initial_states_scale.npy", "<f4", 4, init_scale.data(), {batch, H, P});
    save_npy(dir + "/final_states_scale.npy", "<f4", 4, fin_scale.data(), {batch, H, P});
  }
  save_npy(dir + "/y.npy", npy_descr<input_t>(), sizeof(input_t), y.data(), {TTi, H, P});
  std::ofstream m(dir + "/meta.json");
  m << "{\"state_format\": \"" << a.state << "\", \"input_format\": \"" << a.input << "\", \"tokens_per_launch\": " << K
    << ", \"algorithm\": \"" << a.algo << "\", \"batch\": " << batch << ", \"H\": " << H << ", \"G\": " << G
    << ", \"P\": " << P << ", \"N\": " << N << ", \"tokens_per_sequence\": " << T << ", \"z\": " << a.z
    << ", \"stochastic_rounding\": " << a.sr << ", \"philox_rounds\": " << PHILOX_ROUNDS << ", \"seed\": " << a.seed
    << ", \"pool_slots\": " << slots << ", \"dt_mean\": " << mu << ", \"dt_std\": " << sd << "}\n";
  std::printf("%s: %d launches of %d token(s), batch %d, H %d, G %d, P %d, N %d, state %s, input %s, algo %s\n",
              a.name.c_str(), T / K, K, batch, H, G, P, N, a.state.c_str(), a.input.c_str(), a.algo.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 14) {
    std::fprintf(stderr, "usage: %s OUT NAME STATE INPUT K ALGO BATCH H G T SEED Z SR\n", argv[0]);
    return 2;
  }
  Args a{argv[1], argv[2], argv[3], argv[4], argv[6], std::atoi(argv[5]), std::atoi(argv[7]), std::atoi(argv[8]),
         std::atoi(argv[9]), std::atoi(argv[10]), std::atoi(argv[12]), std::atoi(argv[13]), std::strtoull(argv[11], nullptr, 10)};
  if (a.K != 1 && a.K != NTOK) {
    std::fprintf(stderr, "this build runs K = 1 or K = %d\n", NTOK);
    return 2;
  }
  const bool bf16_in = a.input == "bf16";
#if PHILOX > 0
  if (a.state != "fp16" || !a.sr) { std::fprintf(stderr, "a PHILOX build runs fp16 states with SR only\n"); return 2; }
  if (bf16_in) run<__nv_bfloat16, __half>(a); else run<float, __half>(a);
#else
  if (a.sr) { std::fprintf(stderr, "stochastic rounding needs a PHILOX build\n"); return 2; }
  if (a.state == "int16") { if (bf16_in) run<__nv_bfloat16, int16_t, float>(a); else run<float, int16_t, float>(a); }
  else if (a.state == "fp32") { if (bf16_in) run<__nv_bfloat16, float>(a); else run<float, float>(a); }
  else if (a.state == "bf16") { if (bf16_in) run<__nv_bfloat16, __nv_bfloat16>(a); else run<float, __nv_bfloat16>(a); }
  else { if (bf16_in) run<__nv_bfloat16, __half>(a); else run<float, __half>(a); }
#endif
  return 0;
}
