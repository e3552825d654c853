// Matrix products whose every element is a sum in a fixed order: the chunked bound's stages
// (docs/bounds.md §3: the chunk state over k, the inter-chunk term over n, the intra-chunk
// terms over k ≤ m) and the sharp verdict's chunked emulation (its noisy runs' chunk state and
// inter-chunk sums) are products of a [rows, K] matrix and a [K, cols] matrix, each element's
// terms added in k order onto a zero start:
//
//   out[r·ldo + c] = (((0 + a[r,0]·b[0,c]) + a[r,1]·b[1,c]) + …) + a[r,K−1]·b[K−1,c],
//
// or, with `onto`, the same terms added onto out's value instead of 0 (the sharp runs' y rows:
// each row's intra-chunk terms go onto its inter-chunk term).
//
// Each product is rounded, then added (the build's -ffp-contract=off: no fused a·b + c), so
// an element's bits are those of K calls of y += a·x in k order, however the elements are
// grouped. The double product (rows_product.cpp) computes tiles of 4 rows × 8 columns (32
// with AVX-512) in registers — one load of a b row per 4 rows, no accumulator load or store
// per term — where a loop of y += a·x over one row at a time was bound by those loads and
// stores; the template is the same sums for other value types (the bound's attribution run's
// tagged values).
#pragma once

#include <cstdint>
#include <vector>

namespace ssmv {

// Where the product reads and writes: a [rows, K] with rows lda apart, b [K, cols] with rows
// ldb apart, out [rows, cols] with rows ldo apart. The arrays do not overlap out.
template <class A, class B, class O>
struct Product {
  int64_t rows = 0, K = 0, cols = 0;
  const A* a = nullptr;
  int64_t lda = 0;
  const B* b = nullptr;
  int64_t ldb = 0;
  O* out = nullptr;
  int64_t ldo = 0;
  bool onto = false;  // start each element from out's value instead of 0
};

// The double product, tiled (rows_product.cpp), its vectors as wide as the CPU's registers.
void rows_product(const Product<double, double, double>& p);
// The same with vectors of `lanes` doubles (8: AVX-512, 4: AVX2, 2: SSE2; the CPU must have
// them): the same bits for every width (its test). Throws std::invalid_argument for a width
// not built here.
void rows_product_in_lanes(int lanes, const Product<double, double, double>& p);
// The widths rows_product_in_lanes can run on this CPU, narrowest first (x86-64: 2 always; 4
// with AVX2, 8 with AVX-512).
std::vector<int> rows_product_lanes_here();

// Any value types (Tagged terms): element by element, the same order.
template <class A, class B, class O>
void rows_product(const Product<A, B, O>& p) {
  for (int64_t r = 0; r < p.rows; ++r) {
    for (int64_t c = 0; c < p.cols; ++c) {
      O acc = p.onto ? p.out[r * p.ldo + c] : O{};
      for (int64_t k = 0; k < p.K; ++k) acc += p.a[r * p.lda + k] * p.b[k * p.ldb + c];
      p.out[r * p.ldo + c] = acc;
    }
  }
}

}  // namespace ssmv
