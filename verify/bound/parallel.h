// The bounds' worker threads: independent tasks 0..count-1 spread over `threads` threads.
// Each task writes only its own outputs, so the results do not depend on the thread count
// (verify/tests/bound_test.cpp, BoundThreads). Internal to verify/bound/.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace ssmv::bound {

// Calls fn(task, worker) for every task in [0, count), worker in [0, min(threads, count)),
// one worker per thread, tasks handed out in order. When tasks throw, every task still
// runs and the exception of the lowest-numbered failing task is rethrown: the same one for
// any thread count.
template <class Fn>
void for_each_task(int64_t count, int threads, Fn&& fn) {
  const int64_t workers = std::max<int64_t>(1, std::min<int64_t>(threads, count));
  if (workers == 1) {
    for (int64_t i = 0; i < count; ++i) fn(i, int64_t{0});
    return;
  }
  std::atomic<int64_t> next{0};
  std::mutex failure_mutex;
  int64_t failed_task = count;
  std::exception_ptr failure;
  const auto work = [&](int64_t worker) {
    for (int64_t i = next++; i < count; i = next++) {
      try {
        fn(i, worker);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (i < failed_task) {
          failed_task = i;
          failure = std::current_exception();
        }
      }
    }
  };
  std::vector<std::thread> pool;
  for (int64_t w = 1; w < workers; ++w) pool.emplace_back(work, w);
  work(0);
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace ssmv::bound
