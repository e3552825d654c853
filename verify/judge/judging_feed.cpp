#include "verify/judge/judging_feed.h"

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

}  // namespace ssmv::verify
