#include "fast/mamba3/twin.h"

#include <vector>

#include "fast/common/parallel.h"
#include "fast/mamba3/arithmetic.h"
#include "fast/mamba3/check.h"
#include "fast/mamba3/pack.h"

namespace ssmv::mamba3_step {

void run_twin(const Params& p, int threads) {
  check_params(p);
  const int64_t items = p.batch * p.H;
  const int workers = fast::worker_count(threads, items, items * p.P * p.N);
  // Per worker: the block's shared memory of the kernel (q, k, old k_prev).
  std::vector<std::vector<float>> scratch(size_t(workers), std::vector<float>(size_t(3 * p.N)));
  for_each_task(items, workers, [&](int64_t item, int64_t worker) {
    const int64_t b = item / p.H, h = item % p.H, t = p.token[b];
    if (t < 0) return;
    float* q = scratch[size_t(worker)].data();
    float* k = q + p.N;
    float* kprev = k + p.N;
    for (int64_t r = 0; r < p.N / 2; ++r) pair_step(p, b, h, t, r, q, k, kprev);
    const Gates g = gates(p, t, h);
    for (int64_t pp = 0; pp < p.P; ++pp) row_step(p, b, h, t, pp, g, q, k, kprev);
    for (int64_t n = 0; n < p.N; ++n) store_b_prev(p, b, h, n, k);
  });
}

Result run_twin(const ssmv::mamba3::Problem& pr, int threads) {
  HostLaunch host(pr);
  for (int64_t k = 0; k < host.launches(); ++k) run_twin(host.params(k), threads);
  return host.result();
}

}  // namespace ssmv::mamba3_step
