// verify/judge/judging_feed.h: a reader beside the judging gets a pair's weights only once the
// judging has said its rows (or its final state) are judged; a check that stops wakes it with
// false; one that completes wakes it too; the weights go back behind the readers.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "verify/judge/judging_feed.h"
#include "verify/judge/sharp_weight.h"

namespace ssmv::verify {
namespace {

TEST(JudgingFeed, AReaderWaitsForItsRowsAndItsFinalState) {
  JudgingFeed feed(2);
  const uint16_t y[4] = {1, 2, 3, 4}, state[2] = {5, 6};
  std::atomic<int64_t> judged{0};  // what the judging has said, as the reader may see it
  std::thread judging([&] {
    feed.open(y, state);
    for (int64_t t = 1; t <= 130; ++t) {  // pair 1's 130 tokens: wakes at 64, 128 and the last
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      judged.store(t);
      feed.rows_judged(1, t, t == 130);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    judged.store(131);
    feed.state_judged(1);
  });
  EXPECT_TRUE(feed.wait_rows(1, 100));
  EXPECT_GE(judged.load(), 100);
  EXPECT_EQ(feed.y_weights(), y);
  EXPECT_TRUE(feed.wait_rows(1, 130));
  EXPECT_GE(judged.load(), 130);
  EXPECT_TRUE(feed.wait_state(1));
  EXPECT_EQ(judged.load(), 131) << "the final state is read only once judged";
  EXPECT_EQ(feed.state_weights(), state);
  judging.join();
  feed.close(true);
  EXPECT_TRUE(feed.wait_state(0)) << "a completed check wakes every reader";
  EXPECT_FALSE(feed.stopped().load());
}

TEST(JudgingFeed, ACheckThatStopsWakesItsReadersWithFalse) {
  JudgingFeed feed(3);
  std::atomic<int> answer{-1};
  std::thread reader([&] { answer = feed.wait_rows(2, 10) ? 1 : 0; });
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(answer.load(), -1) << "nothing judged yet: the reader waits";
  feed.close(false);
  reader.join();
  EXPECT_EQ(answer.load(), 0);
  EXPECT_FALSE(feed.wait_state(0)) << "and readers that come later";
  EXPECT_TRUE(feed.stopped().load());
}

// Behind the slowest reader of every pair of a sequence, the y weights' whole pages go back (read
// as 0); ahead of it, and in the other sequence, they stay.
TEST(JudgingFeed, WeightsGoBackBehindTheSlowestReaderOfTheSequence) {
  // Two sequences of 512 tokens, H = 2, P = 64: 65,536 weights per sequence, 32 pages of 4 KiB.
  const Shape shape{{0, 512, 1024}, 2, 64, 16, 1};
  const int64_t row = shape.H * shape.P;
  SharpWeights w(size_t(shape.num_tokens() * row));
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0x3f80;  // 1.0
  JudgingFeed feed(shape.num_sequences() * shape.H);
  feed.open(w.data(), nullptr);
  feed.release_behind_readers(shape, 2);  // two readers per pair
  const auto weight_at = [&](int64_t token) { return w[size_t(token * row)]; };
  // Sequence 0: pair 0's readers at 256 and 128 tokens, pair 1's at 192 and 256: behind 128.
  feed.rows_read(0, 0, 256, false);
  feed.rows_read(0, 1, 128, false);
  feed.rows_read(1, 0, 192, false);
  EXPECT_FALSE(feed.released()) << "pair 1's second reader has read nothing";
  feed.rows_read(1, 1, 256, false);
  ASSERT_TRUE(feed.released());
  EXPECT_EQ(weight_at(0), 0) << "behind every reader: given back";
  EXPECT_EQ(weight_at(127), 0);
  EXPECT_EQ(weight_at(128), 0x3f80) << "a reader has not passed it";
  EXPECT_EQ(weight_at(512), 0x3f80) << "another sequence";
  // Every reader of sequence 0 done: all of it goes back, sequence 1 still untouched.
  for (int64_t u : {0, 1}) {
    for (int64_t r : {0, 1}) feed.rows_read(u, r, 512, true);
  }
  EXPECT_EQ(weight_at(511), 0);
  EXPECT_EQ(weight_at(512), 0x3f80);
  EXPECT_EQ(weight_at(1023), 0x3f80);
}

}  // namespace
}  // namespace ssmv::verify
