#include "spec/rows_product.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "spec/vector_clones.h"

namespace ssmv {
namespace {

// The tile's columns go as W-double vectors, W the widest register of the CPU: 8 (AVX-512),
// 4 (AVX2), 2 (SSE2). GCC splits a wider generic vector into what the target has, but not
// well: 8-double vectors on AVX2 went through the stack, 0.78–0.95 ns per term against 0.12
// for 4-double ones, and 4-double ones on SSE2 took 3.3 ns (this dev box, L = 256, N = 128,
// P = 64; bench/NOTES.md session 21). So each target gets its own width (rows_product
// below picks by the CPU, as target_clones would).
// (Spelled out per width: GCC drops a vector_size that depends on a template parameter.)
template <int W>
struct Lanes;
template <>
struct Lanes<8> {
  using V = double __attribute__((vector_size(64)));
};
template <>
struct Lanes<4> {
  using V = double __attribute__((vector_size(32)));
};
template <>
struct Lanes<2> {
  using V = double __attribute__((vector_size(16)));
};

// (By reference: a vector returned by value from a function compiled without AVX changes the ABI.)
template <class V>
[[gnu::always_inline]] inline void load(V& v, const double* p) {
  std::memcpy(&v, p, sizeof v);
}
template <class V>
[[gnu::always_inline]] inline void store(double* p, const V& v) {
  std::memcpy(p, &v, sizeof v);
}

// Columns of a tile: 8 where the registers are 4 (AVX2: 16 of them) or 2 doubles wide (SSE2),
// 32 where they are 8 (AVX-512: 32 registers; 4 rows × 4 vectors of accumulators). With 8
// columns the 4 accumulator chains are bound by the adds' latency: 32 columns took the product
// from 0.088–0.096 to 0.067–0.072 ns per term (this dev box, Zen 4; shapes 4 × 256 × 64, 64 ×
// 256 × 128, 256 × 128 × 64; 16 columns 0.077–0.083; bench/NOTES.md session 26).
template <int W>
inline constexpr int kTileCols = W == 8 ? 32 : 8;

// R rows × Cols columns starting at column c, as Cols / W vectors of W lanes: R·Cols/W
// accumulators in registers over the K terms, starting from 0 or (onto) from out.
template <int W, int R, int Cols>
[[gnu::always_inline]] inline void tile(const Product<double, double, double>& p, int64_t r0, int64_t c) {
  using V = typename Lanes<W>::V;
  static_assert(sizeof(V) == 8 * W && Cols % W == 0);
  constexpr int kParts = Cols / W;
  V acc[R][kParts];
  for (int r = 0; r < R; ++r) {
    for (int j = 0; j < kParts; ++j) {
      if (p.onto) {
        load(acc[r][j], p.out + (r0 + r) * p.ldo + c + j * W);
      } else {
        acc[r][j] = V{} + 0.0;
      }
    }
  }
  const double* a = p.a + r0 * p.lda;
  for (int64_t k = 0; k < p.K; ++k) {
    V b[kParts];
    for (int j = 0; j < kParts; ++j) load(b[j], p.b + k * p.ldb + c + j * W);
    for (int r = 0; r < R; ++r) {
      const double ar = a[r * p.lda + k];
      for (int j = 0; j < kParts; ++j) acc[r][j] += ar * b[j];
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int j = 0; j < kParts; ++j) store(p.out + (r0 + r) * p.ldo + c + j * W, acc[r][j]);
  }
}

// R rows, every column: tiles of kTileCols<W>, then of 8, then the last cols mod 8 one by one.
template <int W, int R>
[[gnu::always_inline]] inline void row_block(const Product<double, double, double>& p, int64_t r0) {
  int64_t c = 0;
  if constexpr (kTileCols<W> > 8) {
    for (; c + kTileCols<W> <= p.cols; c += kTileCols<W>) tile<W, R, kTileCols<W>>(p, r0, c);
  }
  for (; c + 8 <= p.cols; c += 8) tile<W, R, 8>(p, r0, c);
  for (; c < p.cols; ++c) {
    for (int r = 0; r < R; ++r) {
      double acc = p.onto ? p.out[(r0 + r) * p.ldo + c] : 0.0;
      for (int64_t k = 0; k < p.K; ++k) acc += p.a[(r0 + r) * p.lda + k] * p.b[k * p.ldb + c];
      p.out[(r0 + r) * p.ldo + c] = acc;
    }
  }
}

template <int W>
[[gnu::always_inline]] inline void product(const Product<double, double, double>& p) {
  int64_t r = 0;
  for (; r + 4 <= p.rows; r += 4) row_block<W, 4>(p, r);
  for (; r < p.rows; ++r) row_block<W, 1>(p, r);
}

#if SSMV_X86_TARGETS
__attribute__((target("arch=x86-64-v4"))) void product_avx512(const Product<double, double, double>& p) {
  product<8>(p);
}
__attribute__((target("avx2"))) void product_avx2(const Product<double, double, double>& p) { product<4>(p); }
void product_sse2(const Product<double, double, double>& p) { product<2>(p); }

using ProductFn = void (*)(const Product<double, double, double>&);
ProductFn product_for_this_cpu() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v4")) return product_avx512;
  if (__builtin_cpu_supports("avx2")) return product_avx2;
  return product_sse2;
}
#endif

}  // namespace

void rows_product_in_lanes(int lanes, const Product<double, double, double>& p) {
#if SSMV_X86_TARGETS
  if (lanes == 8) return product_avx512(p);
  if (lanes == 4) return product_avx2(p);
  if (lanes == 2) return product_sse2(p);
#else
  if (lanes == 2) return product<2>(p);
#endif
  throw std::invalid_argument("rows_product_in_lanes: lanes = " + std::to_string(lanes) + ": not built here");
}

std::vector<int> rows_product_lanes_here() {
  std::vector<int> lanes{2};
#if SSMV_X86_TARGETS
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) lanes.push_back(4);
  if (__builtin_cpu_supports("x86-64-v4")) lanes.push_back(8);
#endif
  return lanes;
}

void rows_product(const Product<double, double, double>& p) {
#if SSMV_X86_TARGETS
  static const ProductFn chosen = product_for_this_cpu();
  chosen(p);
#else
  product<2>(p);
#endif
}

}  // namespace ssmv
