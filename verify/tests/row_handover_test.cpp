// bound::RowHandover (verify/bound/row_handover.h): the chunked bound beside the reference hands
// rows to the judging piece by piece; the bound stays within its lead of every pair's reading,
// the judging never reads a row before it is written, and a failure on either side wakes the
// other.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "verify/bound/row_handover.h"

namespace ssmv::bound {
namespace {

// Two sequences of two heads: a bound thread writes 16-token pieces, head after head, and one
// judging thread per pair reads its rows in order. Whenever the bound starts a piece, the
// pair has read up to the lead before it; whenever a pair reads a row, the row is written.
TEST(RowHandover, BoundStaysWithinItsLeadAndJudgingReadsOnlyWrittenRows) {
  const std::vector<int64_t> cu{0, 300, 517};
  const int64_t H = 2, lead = 20, piece = 16;
  RowHandover handover(cu, H, lead);
  std::vector<std::atomic<int64_t>> written(H), read(4);
  for (auto& w : written) w = 0;
  for (int64_t k = 0; k < 4; ++k) read[size_t(k)] = cu[size_t(k / H)];
  std::atomic<int> lead_broken{0}, unwritten_read{0};
  std::thread bound([&] {
    for (int64_t s = 0; s < 2; ++s) {
      for (int64_t t0 = cu[s]; t0 < cu[s + 1]; t0 += piece) {
        const int64_t t1 = std::min(t0 + piece, cu[s + 1]);
        for (int64_t h = 0; h < H; ++h) {
          handover.wait_room(s, h, t0);
          if (read[size_t(s * H + h)].load() < t0 - lead) ++lead_broken;
          written[size_t(h)] = t1;
          handover.produced(h, t1);
        }
      }
      handover.sequence_done(s);
    }
  });
  std::vector<std::thread> judging;
  for (int64_t s = 0; s < 2; ++s) {
    for (int64_t h = 0; h < H; ++h) {
      judging.emplace_back([&, s, h] {
        for (int64_t t = cu[s]; t < cu[s + 1]; ++t) {
          handover.wait_row(t, h);
          if (written[size_t(h)].load() <= t) ++unwritten_read;
          read[size_t(s * H + h)] = t + 1;
          handover.consumed(s, h, t + 1);
        }
        handover.wait_sequence(s);
      });
    }
  }
  for (std::thread& j : judging) j.join();
  bound.join();
  EXPECT_EQ(lead_broken.load(), 0);
  EXPECT_EQ(unwritten_read.load(), 0);
}

// A bound that fails wakes a judging waiting for a row, which throws instead of reading it.
TEST(RowHandover, FailedBoundStopsAWaitingJudging) {
  RowHandover handover({0, 100}, 1, 0);
  std::atomic<bool> stopped{false};
  std::thread judging([&] {
    try {
      handover.wait_row(5, 0);
    } catch (const RowHandoverStopped&) {
      stopped = true;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // most likely waiting by now
  handover.fail();
  judging.join();
  EXPECT_TRUE(stopped.load());
  EXPECT_THROW(handover.wait_sequence(0), RowHandoverStopped);
}

// A reference that fails (or ends) unthrottles the bound: a piece that waits for room goes on.
TEST(RowHandover, UnthrottledBoundStopsWaitingForRoom) {
  RowHandover handover({0, 1000}, 1, 10);
  std::atomic<bool> went_on{false};
  std::thread bound([&] {
    handover.wait_room(0, 0, 500);  // the pair has read nothing: waits
    went_on = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(went_on.load());
  handover.unthrottle();
  bound.join();
  EXPECT_TRUE(went_on.load());
  handover.wait_room(0, 0, 900);  // and later pieces do not wait
}

}  // namespace
}  // namespace ssmv::bound
