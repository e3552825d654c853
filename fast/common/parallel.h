// Worker threads for the host twins: independent work items — (chunk, head), (sequence,
// head), (request, head) — handed out through one atomic counter. Each item writes only
// its own outputs and reads nothing another item writes, so the results are the same bits
// for any thread count and any interleaving (tests: fast/chunk_scan/tests/twin_threads_test,
// fast/ssu/tests/twin_threads_test). Host only; the CUDA kernels never include it.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace ssmv::fast {

// Below this much work (state updates, or multiply-adds: about a millisecond of twin time)
// the twins stay on the calling thread: starting a worker costs tens of microseconds, and the
// property suites' small cases would pay that many times over.
inline constexpr int64_t kMinParallelWork = int64_t(1) << 18;

// The workers a twin call uses: `threads` (0: every core, as the certified reference's
// default), at most `items`, and 1 below kMinParallelWork.
inline int worker_count(int threads, int64_t items, int64_t work) {
  if (work < kMinParallelWork || items <= 1) return 1;
  const int64_t want = threads > 0 ? threads : int64_t(std::max(1u, std::thread::hardware_concurrency()));
  return int(std::min(want, items));
}

// Runs body(item, worker) for every item in [0, count) on `workers` threads (the calling
// thread is worker 0; worker < workers indexes per-worker scratch). An exception thrown by
// a body stops the hand-out and is rethrown here once every worker has returned.
template <class Body>
void parallel_for(int64_t count, int workers, Body&& body) {
  if (workers <= 1) {
    for (int64_t i = 0; i < count; ++i) body(i, 0);
    return;
  }
  std::atomic<int64_t> next{0};
  std::mutex failure_mutex;
  std::exception_ptr failure;
  auto work = [&](int worker) {
    try {
      for (int64_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) body(i, worker);
    } catch (...) {
      next.store(count);
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(size_t(workers - 1));
  for (int w = 1; w < workers; ++w) {
    try {
      pool.emplace_back(work, w);
    } catch (const std::system_error&) {
      break;  // no more threads to be had: the workers started (and this one) do every item
    }
  }
  work(0);
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace ssmv::fast
