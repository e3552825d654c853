// Worker threads over independent tasks, for every part that splits its work: the host
// twins (fast/), the bounds (verify/bound/). Each task writes only its own outputs and reads
// nothing another task writes, so results are the same bits for any thread count and any
// interleaving (tested by each caller: fast/*/tests/twin_threads_test, verify/tests/
// bound_test BoundThreads). Host only; CUDA kernels never include it. The certified
// reference keeps its own pool (reference/driver.cpp): its workers own MPFR state and free
// MPFR's per-thread caches before they end.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace ssmv {

// `threads` resolved: 0 means every core.
inline int resolve_threads(int threads) {
  return threads > 0 ? threads : int(std::max(1u, std::thread::hardware_concurrency()));
}

// The process's worker count for work that is given none (0: every core; `ssmv check --threads N`
// sets it through ref::set_default_threads): the reference's pairs, and reading a dump's
// tensors (verify/tensor_file/).
inline std::atomic<int>& process_threads_setting() {
  static std::atomic<int> threads{0};
  return threads;
}
inline int process_threads() { return resolve_threads(process_threads_setting()); }

// Calls fn(task, worker) for every task in [0, count), with worker in [0, workers'), where
// workers' = min(workers, count) and the calling thread is worker 0 (worker indexes
// per-worker scratch). Tasks are handed out in order through one atomic counter. When tasks
// throw, every task still runs and the exception of the lowest-numbered failing task is
// rethrown once all workers have returned: the same exception for any thread count. If the
// system refuses a thread, the workers already running (and the caller) do every task.
template <class Fn>
void for_each_task(int64_t count, int64_t workers, Fn&& fn) {
  workers = std::max<int64_t>(1, std::min<int64_t>(workers, count));
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
  pool.reserve(size_t(workers - 1));
  for (int64_t w = 1; w < workers; ++w) {
    try {
      pool.emplace_back(work, w);
    } catch (const std::system_error&) {
      break;
    }
  }
  work(0);
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace ssmv
