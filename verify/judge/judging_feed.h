// What a reader beside a streamed check (the sharp verdict's first pass,
// verify/sharp/sharp_verdict.h SharpBeside) takes from the judging while it runs: every element's
// sharp weight (verify/judge/sharp_weight.h), and how far each (sequence, head) pair has been
// judged, so that the reader reads a weight only after the judging has written it.
//
// The reference hands a pair's y rows to the judging in token order and its final state last
// (ref::Sink), so a pair's progress is one number: the tokens whose y is judged, then "all" once
// its final state is. The weights themselves stay where the judges keep them (TensorReport::
// sharp_weights, whose pages do not move when the report does); the readers, which read a pair's
// rows in token order too, may give y's back behind them (release_behind_readers).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "spec/problem.h"

namespace ssmv::verify {

// What a reader beside a check that stopped (threw) throws, once out of its waits.
struct JudgingStopped : std::runtime_error {
  JudgingStopped() : std::runtime_error("the check stopped before judging what the sharp verdict reads") {}
};

class JudgingFeed {
 public:
  // A check of `pairs` (sequence, head) pairs (pair u = s·H + h).
  explicit JudgingFeed(int64_t pairs);
  JudgingFeed(const JudgingFeed&) = delete;
  JudgingFeed& operator=(const JudgingFeed&) = delete;

  // --- the check's side ---
  // The judges' weights in flat order (y; the final states, or null without them), before any
  // pair is judged.
  void open(const uint16_t* y_weights, const uint16_t* state_weights);
  // Pair u's first `tokens` tokens of y are judged; `last`: they are all its tokens. The readers
  // are woken every kWakeTokens tokens and at the last (each wake-up is a system call when
  // someone waits).
  void rows_judged(int64_t u, int64_t tokens, bool last);
  // Pair u's final state is judged (after all its rows).
  void state_judged(int64_t u);
  // The check has ended: `completed` (every element judged), or stopped by an error (readers'
  // waits, now or later, return false).
  void close(bool completed);
  static constexpr int64_t kWakeTokens = 64;

  // --- the reader's side ---
  // Wait until pair u's first `tokens` tokens of y are judged (or the check completed): true,
  // or false when the check stopped. No exception: a reader may wait inside code that cannot
  // pass one on (the emulation's target_clones functions, spec/vector_clones.h).
  bool wait_rows(int64_t u, int64_t tokens) const;
  // The same for pair u's final state.
  bool wait_state(int64_t u) const;
  // The weights (after a wait that returned true): y's and the final states' in flat order.
  const uint16_t* y_weights() const { return y_weights_; }
  const uint16_t* state_weights() const { return state_weights_; }
  // Set when the check stopped; a reader's long work may poll it to end early.
  const std::atomic<bool>& stopped() const { return stopped_; }

  // --- the y weights given back behind the readers (optional) ---
  // Every pair's y weights are read in token order by `readers` readers (the sharp verdict's
  // tasks of the pair); from now on, once every reader of every pair of a sequence has read its
  // first t tokens, the weights' whole pages before token t of the sequence go back to the system
  // (spec/zero_pages.h: the weights live on such pages, from y_weights() on). Call before any
  // reader reads. A released weight reads as 0 afterwards: a pass that reads the weights again
  // needs them judged again (released()).
  void release_behind_readers(const Shape& shape, int64_t readers);
  // Reader r of pair u has read its first `tokens` tokens' weights (`last`: all of them); every
  // kWakeTokens tokens and at the last, the pages behind every reader go back.
  void rows_read(int64_t u, int64_t r, int64_t tokens, bool last);
  // Whether some page went back.
  bool released() const { return released_.load(); }

 private:
  static constexpr int64_t kAll = INT64_MAX;  // every token and the final state
  std::unique_ptr<std::atomic<int64_t>[]> judged_;  // [pair] tokens judged, or kAll
  int64_t pairs_;
  std::atomic<bool> stopped_{false};
  const uint16_t* y_weights_ = nullptr;
  const uint16_t* state_weights_ = nullptr;
  // Release behind the readers: the shape's sequences, the readers per pair, what each has read
  // ([pair · readers + r] tokens), and per sequence where the next release starts (a byte offset
  // into the y weights: the sequence's start, then the last release's page boundary).
  std::vector<int64_t> cu_seqlens_;
  int64_t H_ = 0, P_ = 0, readers_ = 0;
  std::unique_ptr<std::atomic<int64_t>[]> read_;
  std::vector<size_t> released_bytes_;
  std::mutex release_mutex_;
  std::atomic<bool> released_{false};
};

}  // namespace ssmv::verify
