#include "verify/bound/y_before_dx.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ssmv::bound {
namespace {

// About 1 MiB of floats per block: 128 blocks of 4096 tokens at 65,536 tokens of 8 heads, P = 64
// (134 MB), so that the blocks drain in small steps; each block is rounded up to whole pages.
constexpr int64_t kBlockFloats = int64_t(1) << 18;

}  // namespace

void YBeforeDx::assign(int64_t T, int64_t H, int64_t P) {
  clear();
  if (T <= 0 || H <= 0 || P <= 0) return;
  T_ = T;
  H_ = H;
  P_ = P;
  block_tokens_ = std::max<int64_t>(1, std::min<int64_t>(T, kBlockFloats / P));
  blocks_per_head_ = (T + block_tokens_ - 1) / block_tokens_;
  const int64_t page_floats = int64_t(ZeroPages::page_size() / sizeof(float));
  block_floats_ = (block_tokens_ * P + page_floats - 1) / page_floats * page_floats;
  const int64_t blocks = H * blocks_per_head_;
  pages_ = ZeroPages(size_t(blocks * block_floats_) * sizeof(float));
  rows_left_ = std::make_unique<std::atomic<int64_t>[]>(size_t(blocks));
  released_ = std::make_unique<std::atomic<bool>[]>(size_t(T * H));  // value-initialised: false
  for (int64_t h = 0; h < H; ++h) {
    for (int64_t b = 0; b < blocks_per_head_; ++b) {
      rows_left_[size_t(h * blocks_per_head_ + b)] = std::min(block_tokens_, T - b * block_tokens_);
    }
  }
}

void YBeforeDx::clear() {
  pages_ = ZeroPages();
  rows_left_.reset();
  released_.reset();
  T_ = H_ = P_ = 0;
  block_tokens_ = 1;
  blocks_per_head_ = block_floats_ = 0;
}

void YBeforeDx::release(int64_t t, int64_t h) {
  if (released_[size_t(t * H_ + h)].exchange(true, std::memory_order_relaxed)) {
    throw std::logic_error("y_before_dx: row of token " + std::to_string(t) + ", head " + std::to_string(h) +
                           " released twice");
  }
  const int64_t block = h * blocks_per_head_ + t / block_tokens_;
  if (rows_left_[size_t(block)].fetch_sub(1, std::memory_order_acq_rel) == 1) {
    pages_.release(size_t(block * block_floats_) * sizeof(float), size_t(block_floats_) * sizeof(float));
  }
}

}  // namespace ssmv::bound
