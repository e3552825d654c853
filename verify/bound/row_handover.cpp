#include "verify/bound/row_handover.h"

#include <limits>

namespace ssmv::bound {
namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

}  // namespace

RowHandover::RowHandover(const std::vector<int64_t>& cu_seqlens, int64_t H, int64_t lead_tokens)
    : S_(int64_t(cu_seqlens.size()) - 1), H_(H), lead_(lead_tokens) {
  if (S_ < 0 || H_ < 0 || lead_ < 0) throw std::invalid_argument("RowHandover: no sequences, heads or lead");
  produced_ = std::make_unique<std::atomic<int64_t>[]>(size_t(H_));
  consumed_ = std::make_unique<std::atomic<int64_t>[]>(size_t(S_ * H_));
  wanted_ = std::make_unique<std::atomic<int64_t>[]>(size_t(S_ * H_));
  for (int64_t h = 0; h < H_; ++h) produced_[size_t(h)].store(0);
  for (int64_t s = 0; s < S_; ++s) {
    for (int64_t h = 0; h < H_; ++h) {
      pair(consumed_, s, h).store(cu_seqlens[size_t(s)]);  // nothing of the pair read yet
      pair(wanted_, s, h).store(kNever);
    }
  }
}

// The bound publishes `wanted` before it reads `consumed`, the judging stores `consumed` before
// it reads `wanted` (all sequentially consistent): one of the two sees the other's store, so
// either the bound does not wait or the judging wakes it.
void RowHandover::wait_room(int64_t seq, int64_t h, int64_t t0) {
  const int64_t target = t0 - lead_;
  std::atomic<int64_t>& read = pair(consumed_, seq, h);
  std::atomic<int64_t>& wanted = pair(wanted_, seq, h);
  wanted.store(target);
  for (int64_t c = read.load(); c < target && !unthrottled_.load(); c = read.load()) read.wait(c);
  wanted.store(kNever);
}

void RowHandover::produced(int64_t h, int64_t t_end) {
  produced_[size_t(h)].store(t_end, std::memory_order_release);
  produced_[size_t(h)].notify_all();
}

void RowHandover::sequence_done(int64_t seq) {
  sequences_done_.store(seq + 1, std::memory_order_release);
  sequences_done_.notify_all();
}

// failed_ is set before the counters jump to kNever, so a judging woken by the jump sees it.
void RowHandover::fail() {
  failed_.store(true);
  for (int64_t h = 0; h < H_; ++h) {
    produced_[size_t(h)].store(kNever);
    produced_[size_t(h)].notify_all();
  }
  sequences_done_.store(kNever);
  sequences_done_.notify_all();
}

void RowHandover::wait_row(int64_t t, int64_t h) {
  std::atomic<int64_t>& written = produced_[size_t(h)];
  for (int64_t c = written.load(std::memory_order_acquire); c <= t; c = written.load(std::memory_order_acquire)) {
    written.wait(c, std::memory_order_acquire);
  }
  if (failed_.load()) throw RowHandoverStopped();
}

void RowHandover::wait_sequence(int64_t seq) {
  for (int64_t c = sequences_done_.load(std::memory_order_acquire); c <= seq;
       c = sequences_done_.load(std::memory_order_acquire)) {
    sequences_done_.wait(c, std::memory_order_acquire);
  }
  if (failed_.load()) throw RowHandoverStopped();
}

void RowHandover::consumed(int64_t seq, int64_t h, int64_t t_end) {
  std::atomic<int64_t>& read = pair(consumed_, seq, h);
  read.store(t_end);
  if (t_end >= pair(wanted_, seq, h).load()) read.notify_all();
}

// unthrottled_ is set before the counters jump to kNever, so a bound woken by the jump (or
// about to wait on the old value, which wait() then does not block on) stops waiting.
void RowHandover::unthrottle() {
  unthrottled_.store(true);
  for (int64_t k = 0; k < S_ * H_; ++k) {
    consumed_[size_t(k)].store(kNever);
    consumed_[size_t(k)].notify_all();
  }
}

}  // namespace ssmv::bound
