// How many workers a host-twin call uses; the workers themselves are spec/parallel.h's
// for_each_task (independent items — (chunk, head), (sequence, head), (request, head) — each
// writing only its own outputs: the same bits for any thread count; tests:
// fast/chunk_scan/tests/twin_threads_test, fast/ssu/tests/twin_threads_test). Host only.
#pragma once

#include <algorithm>
#include <cstdint>

#include "spec/parallel.h"

namespace ssmv::fast {

// Below this much work (state updates, or multiply-adds: about a millisecond of twin time)
// the twins stay on the calling thread: starting a worker costs tens of microseconds, and the
// property suites' small cases would pay that many times over.
inline constexpr int64_t kMinParallelWork = int64_t(1) << 18;

// The workers a twin call uses: `threads` (0: every core, as the certified reference's
// default), at most `items`, and 1 below kMinParallelWork.
inline int worker_count(int threads, int64_t items, int64_t work) {
  if (work < kMinParallelWork || items <= 1) return 1;
  return int(std::min<int64_t>(resolve_threads(threads), items));
}

}  // namespace ssmv::fast
