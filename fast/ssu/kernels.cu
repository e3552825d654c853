// The SSU (selective_state_update) CUDA kernels for sm_90 and their launcher.
//
// Work: a warp owns G groups (kGroups: 1 for fp32 states, 2 for 16-bit ones) of
// kRowsPerWarp = 8 consecutive rows of one (request, head). A row is split among L lanes
// (arithmetic.h lane_layout: 32, or 16 so that a warp instruction covers two rows, e.g. a
// bf16 row of N = 128 as 16 lanes × one 16-byte access); lane u of a row owns
// n = (j·L + u)·V + v and loads them with one vector access of V elements per chunk where
// the pool is aligned for it (warp_rows.cuh Place).
// Per token: δ and a = exp(δA) (every thread, identical), dB = δ·B[n] and C[n] for the
// lane's n, then per row S = fma(dB, x, a·S), a per-lane fma chain over n for Σ C·S and
// an xor-butterfly over the row's L lanes (run as reduce_rows, warp_rows.cuh: the same
// bits with fewer shuffles); one lane per row finishes and stores y.
// Paths, all with the same arithmetic per row (hence the same bits):
// * advance_group (every case): a group's state in fp32 registers across the request's
//   tokens, rounded to the state format (cvt.rn) only when stored: per-token states
//   after their token, the final state after the last token.
// * advance_single (ssu_kernel; 16-bit states, one token, no per-token states, no pad,
//   aligned pool): the warp's G groups held as raw state bits, two elements per register,
//   each row decoded, advanced and re-encoded in turn: twice the bytes in flight per
//   register.
// * the streamed kernel (stream.cuh; 16-bit states and inputs, aligned pool and B/C,
//   no per-token states): persistent warps loop over items, computing one item while the
//   next one's raw state flies into shared memory; multi-token and pad items take
//   advance_group in their turn. H200, bf16, batch 256: 97.5 → 83.7 µs, 70 % → 82 % of
//   the copy bandwidth (bench/NOTES.md, SSU call 6).
// * the tokens kernel (tokens.cuh; launches of more tokens than requests that neither the
//   streamed nor the octet kernel takes): each block stages a window of tokens' inputs in shared memory,
//   decoded once, and its warps run the tokens from there with the state in registers
//   (advance_row, reduce_rows).
// * the octet kernel (octet.cuh; every launch where N is a whole number of the layout's
//   chunks and the inputs come in aligned 16-byte chunks): a row
//   on 8 lanes, each running 2 or 4 of the layout's logical lanes' chains and the butterfly
//   levels between them, then 3 shuffle levels: the same sums, 16 state elements per lane for
//   N = 128 instead of 64.
// Kernel ssu_kernel: grid (R·ceil(P/(kRowsPerBlock·G)), H), 128 threads (arithmetic.h:
// 4 warps, registers capped for 6 resident blocks per SM), one warp per G groups of rows
// (G = 1 for every state in launches of several tokens per request);
// its only dependent loads are the request's indices (cu_seqlens, slots); the per-head
// scalars, the first token's inputs and the state then go out together, as raw bits,
// before any arithmetic waits on one of them (each later token: one more round trip).
// No atomics, and no shared memory between threads (the streamed kernel's lanes each read
// back only their own copies): every output element is computed by one warp in a fixed
// order.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <string>

#include "fast/common/cuda_check.h"
#include "fast/ssu/check.h"
#include "fast/ssu/launch.h"
#include "fast/ssu/arithmetic.h"
#include "fast/ssu/octet.cuh"
#include "fast/ssu/stream.cuh"
#include "fast/ssu/tokens.cuh"
#include "fast/ssu/warp_rows.cuh"

namespace ssmv::ssu {
namespace {

using namespace warp;

// The decode step's common case: one token, no per-token states, not a pad, an aligned
// pool with N a multiple of V. The warp's G groups of rows stay in registers as the raw
// state bits (a 16-bit state: two elements per register), each row decoded, advanced and
// re-encoded in turn, so a warp has G groups' bytes in flight for about the registers of
// one group in fp32. Per row the arithmetic is advance_group's: the same bits.
template <Format SF, int V, int J, int L, int G>
__device__ __forceinline__ void advance_single(const Params& p, const Head& hd, const Place<L>& pl, int row0) {
  using E = typename StateBits<SF>::T;
  constexpr int K = Place<L>::K;
  const int32_t t = hd.t0;
  float D[G];
#pragma unroll
  for (int i = 0; i < G; ++i) D[i] = load_D(p, hd, pl, row0 + i * kRowsPerWarp);
  const TokenInputs<J * V, G> in = load_token<V, J, L, G>(p, hd, t, pl, row0);

  Chunk<SF, V> raw[G * K][J];
  const E* const src = static_cast<const E*>(p.state) + int64_t(hd.slot_in) * p.state_stride_slot +
                       int64_t(hd.h) * p.state_stride_head;
  for_each_chunk<V, J, L, G>(p, pl, row0, [&](int k, int j, int64_t offset) {
    raw[k][j] = *reinterpret_cast<const Chunk<SF, V>*>(src + offset);
  });

  const TokenScalars ts = token_scalars(decode_raw(p.input_format, in.dt), hd.has_bias, hd.dt_bias, p.dt_softplus,
                                        p.dt_limit_lo, p.dt_limit_hi, hd.A);
  float dB[J * V], c[J * V];
  token_bc<V, J, L, G>(p, in, ts.delta, pl, dB, c);
  advance_raw_rows<SF, V, J, L, G>(p, hd, pl, row0, ts, dB, c, in.x, in.z, D,
                                   [&](int k, int j) { return raw[k][j]; });
}

// J: the chunks per lane (1 or 2) and L: the lanes per row (32 or 16), from lane_layout,
// fixed at compile time so that a lane's arrays hold exactly J·V elements per row in
// registers. A warp owns G groups of kRowsPerWarp consecutive rows: kGroups(SF), or 1 for
// a 16-bit state in a launch of several tokens per request (launch_typed).
template <Format SF, int V, int J, int L, int G>
__global__ void __launch_bounds__(kWarpsPerBlock* kWarp, SSMV_SSU_MIN_BLOCKS)
    ssu_kernel(const __grid_constant__ Params p, bool vector) {
  static_assert(J * V <= kMaxLaneElements);
  const int tiles = (p.P + kRowsPerBlock * G - 1) / (kRowsPerBlock * G);
  const int r = blockIdx.x / tiles;
  const int tile = blockIdx.x % tiles;
  const int warp = threadIdx.x / kWarp;
  const Place<L> pl(threadIdx.x % kWarp);
  const int row0 = (tile * kWarpsPerBlock + warp) * kRowsPerWarp * G;
  if (row0 >= p.P) return;  // the whole warp: no row of this warp exists
  // The request's indices are a warp's only loads that other loads wait on.
  const Head hd = load_head(p, r, blockIdx.y);
  if constexpr (G > 1) {
    if (vector && p.N % V == 0 && hd.t1 - hd.t0 == 1 && p.token_state_slots == nullptr && !hd.pad) {
      return advance_single<SF, V, J, L, G>(p, hd, pl, row0);
    }
  }
  if constexpr (G == 1) {
    advance_group<SF, V, J, L>(p, hd, pl, row0, vector);
  } else {
    advance_groups_call<SF, V, J, L, G>(p, hd, pl, row0, vector);
  }
}

// Whether a layout has a streamed kernel: cp.async copies chunks of 4 bytes or more.
__host__ __device__ constexpr bool streams(Format f, int V) {
  return (f != Format::fp32 || SSMV_SSU_STREAM_FP32 != 0) &&
         V * storage_bytes(f) >= 4;
}

// One access of V elements needs the pool, its strides and hence every chunk start (a
// multiple of V) aligned to V elements.
bool vector_pool(const Params& p, int V) {
  return aligned_for_chunks(p.state, V, storage_bytes(p.state_format), p.state_stride_slot,
                            p.state_stride_head, p.state_stride_p);
}

// 16-bit inputs whose B and C chunks of V elements are aligned accesses (load_token16).
bool inputs_chunked(const Params& p, int V) {
  return p.input_format != Format::fp32 && aligned_for_chunks(p.B, V, 2, p.B_stride_token, p.B_stride_group) &&
         aligned_for_chunks(p.C, V, 2, p.C_stride_token, p.C_stride_group);
}

// The device's multiprocessors (the current device's; each launcher asks once).
int multiprocessor_count() {
  int device = 0, count = 0;
  SSMV_CUDA_CHECK(cudaGetDevice(&device));
  SSMV_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
  return count;
}

// The streamed kernel's work items: kRowsPerWarp·kStreamGroups rows of one (request, head).
int64_t stream_items(const Params& p) {
  const int rows = kRowsPerWarp * kStreamGroups(p.state_format);
  return int64_t(p.num_requests) * p.H * ((p.P + rows - 1) / rows);
}

// Whether `variant` runs p on the streamed kernel (Variant::streamed was checked by launch).
bool use_streamed(const Params& p, Variant variant) {
  return variant == Variant::streamed || (variant == Variant::automatic && takes_streamed_kernel(p));
}

// The streamed kernel on a persistent grid: as many blocks as fit on the device at once
// (its occupancy, asked once per kernel), fewer when there are fewer items or when
// options.max_stream_blocks caps them.
template <Format SF, int V, int J, int L>
void launch_streamed(const Params& p, int64_t items, cudaStream_t stream, const LaunchOptions& options) {
  constexpr int smem = stream_smem_bytes<SF, V, J, L>();
  static const int resident = [] {
    const int sms = multiprocessor_count();
    int per_sm = 0;
    SSMV_CUDA_CHECK(
        cudaFuncSetAttribute(ssu_stream_kernel<SF, V, J, L>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    SSMV_CUDA_CHECK(cudaFuncSetAttribute(ssu_stream_kernel<SF, V, J, L>,
                                         cudaFuncAttributePreferredSharedMemoryCarveout,
                                         int(cudaSharedmemCarveoutMaxShared)));
    SSMV_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, ssu_stream_kernel<SF, V, J, L>,
                                                                  kWarpsPerBlock * kWarp, smem));
    return sms * (per_sm > 0 ? per_sm : 1);
  }();
  const int needed = int((items + kWarpsPerBlock - 1) / kWarpsPerBlock);
  const int most = options.max_stream_blocks;
  const int cap = most > 0 && most < resident ? most : resident;
  const int blocks = needed < cap ? needed : cap;
  ssu_stream_kernel<SF, V, J, L><<<blocks, kWarpsPerBlock * kWarp, smem, stream>>>(p, int32_t(items));
  SSMV_CUDA_CHECK(cudaGetLastError());
}

// The per-item kernel with G groups of rows per warp.
template <Format SF, int V, int J, int L, int G>
void launch_per_item(const Params& p, cudaStream_t stream) {
  const bool vector = vector_pool(p, V);
  const int rows_per_block = kRowsPerBlock * G;
  const int tiles = (p.P + rows_per_block - 1) / rows_per_block;
  const dim3 grid(static_cast<unsigned>(p.num_requests * tiles), static_cast<unsigned>(p.H));
  ssu_kernel<SF, V, J, L, G><<<grid, kWarpsPerBlock * kWarp, 0, stream>>>(p, vector);
  SSMV_CUDA_CHECK(cudaGetLastError());
}

// The tokens kernel: kTokenGroups groups of rows per warp, one block per kRowsPerBlock·G
// rows of up to kBlockHeads heads of one group of a request (tokens.cuh).
template <Format SF, int V, int J, int L>
void launch_tokens(const Params& p, cudaStream_t stream) {
  constexpr int G = kTokenGroups(SF, Place<L>::K * J * V), rows = kRowsPerBlock * G;
  constexpr auto kernel = ssu_tokens_kernel<SF, V, J, L, G>;
  const int smem = tokens_smem_bytes<SF, V, J, L, G>(p.N);
  static const bool sized = [] {  // the largest N (kMaxN) asked once
    SSMV_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         tokens_smem_bytes<SF, V, J, L, G>(kMaxN)));
    return true;
  }();
  (void)sized;
  const int tiles = (p.P + rows - 1) / rows;
  const int chunks = (p.H / p.G + kBlockHeads - 1) / kBlockHeads;
  const dim3 grid(static_cast<unsigned>(p.num_requests * tiles), static_cast<unsigned>(p.G * chunks));
  kernel<<<grid, kWarpsPerBlock * kWarp, smem, stream>>>(p, vector_pool(p, V), chunks_aligned(p));
  SSMV_CUDA_CHECK(cudaGetLastError());
}

// The octet kernel (octet.cuh) for inputs of format IF: one block per (request, head, split of its rows), the rows
// split so that the grid has about 8 blocks per multiprocessor where R·H alone has fewer
// (a split is a multiple of kOctetRows rows), or as options.octet_splits asks.
template <Format SF, Format IF, int V, int J, int L>
void launch_octet_with(const Params& p, cudaStream_t stream, const LaunchOptions& options) {
  constexpr auto kernel = ssu_octet_kernel<SF, IF, V, J, L>;
  static const int sms = [] {
    SSMV_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         OctetWindow::bytes(kMaxN, kMaxP, 4)));
    // The whole carveout for shared memory, as the streamed kernel asks: 8 blocks of 16.5 KB
    // (bf16 inputs, N = 128, P = 64) need 132 KB of it.
    SSMV_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                         int(cudaSharedmemCarveoutMaxShared)));
    return multiprocessor_count();
  }();
  const int64_t pairs = int64_t(p.num_requests) * p.H;
  const int most = (p.P + kOctetRows - 1) / kOctetRows;
  const int64_t wanted = (int64_t(sms) * 8 + pairs - 1) / pairs;
  const int64_t asked = options.octet_splits > 0 ? options.octet_splits : wanted;
  const int splits = int(asked < 1 ? 1 : asked > most ? most : asked);
  const int rows = ((p.P + splits - 1) / splits + kOctetRows - 1) / kOctetRows * kOctetRows;
  const int blocks_per_pair = (p.P + rows - 1) / rows;
  const int smem = OctetWindow::bytes(p.N, rows, storage_bytes(p.input_format));
  const dim3 grid(static_cast<unsigned>(p.num_requests * blocks_per_pair), static_cast<unsigned>(p.H));
  kernel<<<grid, kWarpsPerBlock * kWarp, smem, stream>>>(p, rows);
  SSMV_CUDA_CHECK(cudaGetLastError());
}

// The octet kernel for the launch's input format (a template parameter of the kernel: its
// decoding and shared-memory offsets fold at compile time; bench/NOTES.md, session 28).
template <Format SF, int V, int J, int L>
void launch_octet(const Params& p, cudaStream_t stream, const LaunchOptions& options) {
  switch (p.input_format) {
    case Format::bf16: return launch_octet_with<SF, Format::bf16, V, J, L>(p, stream, options);
    case Format::fp16: return launch_octet_with<SF, Format::fp16, V, J, L>(p, stream, options);
    case Format::fp32: return launch_octet_with<SF, Format::fp32, V, J, L>(p, stream, options);
    case Format::int16_scaled: break;  // not an input format (check_params)
  }
  throw ProblemError("ssu: field 'input_format' = " + std::string(format_name(p.input_format)) +
                     ": not an input format of the octet kernel");
}

template <Format SF, int V, int J, int L>
void launch_typed(const Params& p, cudaStream_t stream, const LaunchOptions& options) {
  if constexpr (streams(SF, V)) {
    if (use_streamed(p, options.variant)) return launch_streamed<SF, V, J, L>(p, stream_items(p), stream, options);
  }
  // Automatic: the octet kernel wherever it applies (ahead of the streamed kernel at every
  // single-token bf16 row in three H100 runs; bench/NOTES.md, session 28), the streamed one
  // where only it applies.
  const bool automatic = options.variant == Variant::automatic;
  if (options.variant == Variant::octet || (automatic && why_not_octet(p) == nullptr)) {
    return launch_octet<SF, V, J, L>(p, stream, options);
  }
  const bool several = automatic && p.num_tokens > p.num_requests;
  if (options.variant == Variant::tokens || several) {
    return launch_tokens<SF, V, J, L>(p, stream);
  }
  // Variant::per_item with several tokens per request gives a 16-bit state's warp one group
  // of rows: its general path then runs inline, as fp32's (two groups call it out of line,
  // one after the other; bench/NOTES.md, SSU call 7: 20 % of the copy bandwidth at 2 tokens).
  if constexpr (kGroups(SF) > 1) {
    if (p.num_tokens > p.num_requests) return launch_per_item<SF, V, J, L, 1>(p, stream);
  }
  launch_per_item<SF, V, J, L, kGroups(SF)>(p, stream);
}

template <Format SF, int V>
void launch_vector(const Params& p, const LaneLayout& l, cudaStream_t stream, const LaunchOptions& options) {
  if constexpr (V >= 2) {
    if (l.L == 16) return launch_typed<SF, V, 1, 16>(p, stream, options);  // N = 16·V exactly
  }
  if constexpr (V == 8) {
    return launch_typed<SF, V, 1, kWarp>(p, stream, options);  // N = 256 exactly
  } else {
    return l.J == 1 ? launch_typed<SF, V, 1, kWarp>(p, stream, options)
                    : launch_typed<SF, V, 2, kWarp>(p, stream, options);
  }
}

template <Format SF>
void launch_format(const Params& p, cudaStream_t stream, const LaunchOptions& options) {
  const LaneLayout l = lane_layout(p.N, storage_bytes(SF));
  switch (l.V) {
    case 1: return launch_vector<SF, 1>(p, l, stream, options);
    case 2: return launch_vector<SF, 2>(p, l, stream, options);
    case 4: return launch_vector<SF, 4>(p, l, stream, options);
    default:
      if constexpr (SF != Format::fp32) return launch_vector<SF, 8>(p, l, stream, options);
  }
}

}  // namespace

const char* why_not_streamed(const Params& p) {
  const LaneLayout l = lane_layout(p.N, storage_bytes(p.state_format));
  if (!streams(p.state_format, l.V)) return "the state format or its chunk size (fp32 states, chunks under 4 bytes)";
  if (!vector_pool(p, l.V)) return "the state pool or its strides are not aligned to a chunk";
  if (p.N % l.V != 0) return "N is not a multiple of the chunk";
  if (p.token_state_slots != nullptr) return "per-token states are requested";
  // The kernel's item numbers reach items + 32·W (W resident warps) and stay below 2^31.
  if (stream_items(p) > INT32_MAX / 4) return "too many (request, head, row tile) items";
  if (!inputs_chunked(p, l.V)) return "inputs are fp32, or B or C are not aligned to a chunk";
  return nullptr;
}

const char* why_not_octet(const Params& p) {
  const LaneLayout l = lane_layout(p.N, storage_bytes(p.state_format));
  if (l.J * l.L * l.V != p.N) return "N is not a whole number of the lane layout's chunks";
  if (!vector_pool(p, l.V)) return "the state pool or its strides are not aligned to a chunk";
  if (!chunks_aligned(p)) return "B, C, x or z are not in aligned 16-byte chunks, or N or P is not a multiple of one";
  return nullptr;
}

bool takes_streamed_kernel(const Params& p) {
  return why_not_streamed(p) == nullptr && p.num_tokens <= p.num_requests && why_not_octet(p) != nullptr;
}

void launch(const Params& p, cudaStream_t stream, const LaunchOptions& options) {
  check_params(p);
  if (options.variant == Variant::streamed) {
    if (const char* why = why_not_streamed(p)) throw ProblemError(std::string("ssu: streamed kernel: ") + why);
  }
  if (options.variant == Variant::octet) {
    if (const char* why = why_not_octet(p)) throw ProblemError(std::string("ssu: octet kernel: ") + why);
  }
  if (p.num_requests == 0) return;
  switch (p.state_format) {
    case Format::fp32: return launch_format<Format::fp32>(p, stream, options);
    case Format::bf16: return launch_format<Format::bf16>(p, stream, options);
    case Format::fp16: return launch_format<Format::fp16>(p, stream, options);
    case Format::int16_scaled: break;  // refused by validate (fast/ssu/pack.cpp)
  }
  throw ProblemError("ssu: field 'state_format' = " + std::string(format_name(p.state_format)) + ": not launchable");
}

}  // namespace ssmv::ssu
