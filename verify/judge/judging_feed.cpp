#include "verify/judge/judging_feed.h"

#include <algorithm>

#include "spec/zero_pages.h"

namespace ssmv::verify {

JudgingFeed::JudgingFeed(int64_t pairs)
    : judged_(std::make_unique<std::atomic<int64_t>[]>(size_t(pairs))), pairs_(pairs) {
  for (int64_t u = 0; u < pairs; ++u) judged_[size_t(u)].store(0, std::memory_order_relaxed);
}

// The weights' pointers are written before any pair's count (a release store), and a reader
// reads them only after an acquire load of a count that says its rows are judged.
void JudgingFeed::open(const uint16_t* y_weights, const uint16_t* state_weights) {
  y_weights_ = y_weights;
  state_weights_ = state_weights;
}

void JudgingFeed::rows_judged(int64_t u, int64_t tokens, bool last) {
  std::atomic<int64_t>& c = judged_[size_t(u)];
  c.store(tokens, std::memory_order_release);
  if (last || tokens % kWakeTokens == 0) c.notify_all();
}

void JudgingFeed::state_judged(int64_t u) {
  std::atomic<int64_t>& c = judged_[size_t(u)];
  c.store(kAll, std::memory_order_release);
  c.notify_all();
}

void JudgingFeed::close(bool completed) {
  if (!completed) stopped_.store(true, std::memory_order_release);
  for (int64_t u = 0; u < pairs_; ++u) {
    judged_[size_t(u)].store(kAll, std::memory_order_release);
    judged_[size_t(u)].notify_all();
  }
}

bool JudgingFeed::wait_rows(int64_t u, int64_t tokens) const {
  const std::atomic<int64_t>& c = judged_[size_t(u)];
  for (int64_t seen = c.load(std::memory_order_acquire); seen < tokens; seen = c.load(std::memory_order_acquire)) {
    c.wait(seen, std::memory_order_acquire);
  }
  return !stopped_.load(std::memory_order_acquire);
}

bool JudgingFeed::wait_state(int64_t u) const { return wait_rows(u, kAll); }

void JudgingFeed::release_behind_readers(const Shape& shape, int64_t readers) {
  cu_seqlens_ = shape.cu_seqlens;
  H_ = shape.H;
  P_ = shape.P;
  readers_ = readers;
  read_ = std::make_unique<std::atomic<int64_t>[]>(size_t(pairs_ * readers));
  for (int64_t i = 0; i < pairs_ * readers; ++i) read_[size_t(i)].store(0, std::memory_order_relaxed);
  released_bytes_.clear();
  for (size_t s = 0; s + 1 < cu_seqlens_.size(); ++s) {
    released_bytes_.push_back(size_t(cu_seqlens_[s] * H_ * P_) * sizeof(uint16_t));
  }
}

// Every reader of a pair reads a token's weights only after the judging wrote them, so behind
// the slowest reader of a sequence's pairs no weight is written or read any more.
void JudgingFeed::rows_read(int64_t u, int64_t r, int64_t tokens, bool last) {
  if (!read_ || y_weights_ == nullptr) return;
  read_[size_t(u * readers_ + r)].store(tokens, std::memory_order_release);
  if (!last && tokens % kWakeTokens != 0) return;
  const int64_t s = u / H_;
  int64_t behind = INT64_MAX;
  for (int64_t i = s * H_ * readers_; i < (s + 1) * H_ * readers_; ++i) {
    behind = std::min(behind, read_[size_t(i)].load(std::memory_order_acquire));
  }
  // y [T, H, P]: the sequence's tokens before t0 + behind are the elements before (t0 + behind)·H·P.
  const size_t end = size_t((cu_seqlens_[size_t(s)] + behind) * H_ * P_) * sizeof(uint16_t);
  std::lock_guard<std::mutex> lock(release_mutex_);
  size_t& from = released_bytes_[size_t(s)];
  if (end <= from) return;
  // Whole pages only; the next release starts at the last one's page boundary, so that no page
  // that straddles two releases is kept.
  ZeroPages::release_within(y_weights_, from, end - from);
  from = std::max(from, end / ZeroPages::page_size() * ZeroPages::page_size());
  released_.store(true);
}

}  // namespace ssmv::verify
