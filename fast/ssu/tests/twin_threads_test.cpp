// The SSU twin gives the same bits on any number of worker threads: y and the whole state
// pool, with pad requests, repeated read slots and per-token states, in each state format,
// on batches large enough that the twin does split its work (fast/common/parallel.h).
#include <gtest/gtest.h>

#include "fast/common/parallel.h"
#include "fast/ssu/tests/problem_gen.h"
#include "fast/ssu/twin.h"

namespace ssmv::ssu {
namespace {

TEST(SsuTwinThreads, SameBitsForAnyThreadCount) {
  for (Format state : {Format::fp32, Format::bf16, Format::fp16}) {
    testing::ProblemConfig c;
    c.requests = 8;
    c.min_tokens = 1;
    c.max_tokens = 3;
    c.H = 4, c.P = 64, c.N = 128, c.G = 2;
    c.formats = Formats{Format::bf16, state, Format::bf16};
    c.pad_fraction = 0.2;
    c.repeated_reads = true;
    c.token_states = true;
    testing::GeneratedProblem g = testing::make_problem(c, 4242 + uint64_t(state));
    const Shape& s = g.decode.problem.shape;
    const int64_t work = s.num_tokens() * s.H * s.P * s.N;
    ASSERT_GT(fast::worker_count(2, s.num_sequences() * s.H, work), 1) << "too small to split: " << g.description;

    g.config.threads = 1;
    const Result one = run_twin(g.decode, g.config);
    for (int threads : {2, 3, 8}) {
      g.config.threads = threads;
      const Result r = run_twin(g.decode, g.config);
      EXPECT_EQ(r.y, one.y) << threads << " threads, " << g.description;
      EXPECT_EQ(r.state_pool, one.state_pool) << threads << " threads, " << g.description;
    }
  }
}

}  // namespace
}  // namespace ssmv::ssu
