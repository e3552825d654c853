// verify/judge/judging_feed.h: a reader beside the judging gets a pair's weights only once the
// judging has said its rows (or its final state) are judged; a check that stops wakes it with
// false; one that completes wakes it too.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "verify/judge/judging_feed.h"

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

}  // namespace
}  // namespace ssmv::verify
