// The chunk_scan twin gives the same bits on any number of worker threads: outputs, states
// and every intermediate, for both contracts and the three input formats, on problems large
// enough that the twin does split its work (fast/common/parallel.h).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "fast/chunk_scan/tests/problem_gen.h"
#include "fast/chunk_scan/twin.h"
#include "fast/common/parallel.h"

namespace ssmv::chunk_scan {
namespace {

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

TEST(TwinThreads, SameBitsForAnyThreadCount) {
  struct Case {
    ContractKind contract;
    Format input;
    int64_t L;
  };
  const Case cases[] = {{ContractKind::production, Format::bf16, 64}, {ContractKind::production, Format::fp16, 128},
                        {ContractKind::production, Format::fp32, 256}, {ContractKind::fp32, Format::bf16, 64}};
  for (const Case& k : cases) {
    testing::GenOptions o;
    o.input = k.input;
    o.H = 4, o.G = 2, o.P = 16, o.N = 32;
    o.seq_lens = {1, k.L - 1, k.L, k.L + 1, 2 * k.L + 3};
    o.z = true;
    o.initial_state = true;
    const Problem p = testing::make_problem(o, 0x7EAD + uint64_t(k.L));
    const ChunkPlan plan = plan_chunks(p.shape.cu_seqlens, k.L);
    const int64_t work = p.shape.num_tokens() * o.H * o.P * o.N;
    ASSERT_GT(fast::worker_count(2, plan.num_chunks() * o.H, work), 1) << "too small to split: " << testing::describe(p);

    Config cfg{k.contract, k.L, true, true};
    cfg.threads = 1;
    const Result one = run_twin(p, cfg);
    for (int threads : {2, 3, 8}) {
      cfg.threads = threads;
      const Result r = run_twin(p, cfg);
      const std::string ctx = std::to_string(threads) + " threads, " + testing::describe(p);
      EXPECT_TRUE(same_bits(r.y, one.y)) << "y, " << ctx;
      EXPECT_TRUE(same_bits(r.final_state, one.final_state)) << "final_state, " << ctx;
      EXPECT_TRUE(same_bits(r.boundary_states, one.boundary_states)) << "boundary_states, " << ctx;
      EXPECT_TRUE(same_bits(r.stages.chunk_state, one.stages.chunk_state)) << "chunk_state, " << ctx;
      EXPECT_TRUE(same_bits(r.stages.state_in, one.stages.state_in)) << "state_in, " << ctx;
      EXPECT_TRUE(same_bits(r.stages.cb, one.stages.cb)) << "cb, " << ctx;
      EXPECT_EQ(r.boundary_positions, one.boundary_positions) << ctx;
    }
  }
}

}  // namespace
}  // namespace ssmv::chunk_scan
