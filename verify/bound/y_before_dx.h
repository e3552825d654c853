// The streamed chunked check's one float per y element (ChunkedBounds::y_before_dx: each
// element's error before D·x, the gate and the output rounding, as before_dx_kept rounds it),
// stored so that it drains as the judging reads it. The bound writes every element; the
// judging reads each (token, head) row once, as the reference hands the token over, and then
// releases it. Rows are kept head by head in blocks of tokens, each block on pages of its own,
// and a block's pages go back to the system when its last row is released. The reference runs
// every head's tokens in order, so the floats drain while the sharp verdict's weights
// (verify/judge/sharp_weight.h), written as the elements are judged, fill, instead of both
// being whole at once (6 bytes per y element beside the dump; bench/NOTES.md, Session 23).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "spec/zero_pages.h"

namespace ssmv::bound {

class YBeforeDx {
 public:
  // Zeros for T tokens of H heads of P rows; what was held before is dropped.
  void assign(int64_t T, int64_t H, int64_t P);
  // Drops everything.
  void clear();
  bool empty() const { return T_ * H_ * P_ == 0; }

  // The P floats of token t, head h (writable while the bound runs).
  float* row(int64_t t, int64_t h) { return base() + offset(t, h); }
  const float* row(int64_t t, int64_t h) const { return base() + offset(t, h); }
  // Row (t, h) will not be read again; releasing each row once, from any thread, hands a
  // block's pages back once all of its rows are released. A row released twice throws
  // std::logic_error: its block would otherwise go back while other rows are still unread
  // (the reference hands each token over once: reference/driver.cpp).
  void release(int64_t t, int64_t h);

 private:
  float* base() const { return static_cast<float*>(pages_.data()); }
  int64_t offset(int64_t t, int64_t h) const {
    return (h * blocks_per_head_ + t / block_tokens_) * block_floats_ + (t % block_tokens_) * P_;
  }

  int64_t T_ = 0, H_ = 0, P_ = 0;
  int64_t block_tokens_ = 1, blocks_per_head_ = 0, block_floats_ = 0;  // block_floats_: whole pages
  ZeroPages pages_;
  std::unique_ptr<std::atomic<int64_t>[]> rows_left_;  // per block: rows not yet released
  std::unique_ptr<std::atomic<bool>[]> released_;     // per row [t, h]: one byte per P floats
};

}  // namespace ssmv::bound
