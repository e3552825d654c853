// ZeroPages: zeros until written, and release() gives back exactly the whole pages inside the
// range (they read as zeros again; the bytes outside the range keep their values).
#include "spec/zero_pages.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <utility>

namespace ssmv {
namespace {

TEST(ZeroPages, ReadsZerosUntilWritten) {
  const size_t page = ZeroPages::page_size();
  ZeroPages z(3 * page + 5);
  ASSERT_NE(z.data(), nullptr);
  EXPECT_EQ(z.size(), 3 * page + 5);
  const auto* b = static_cast<const unsigned char*>(z.data());
  for (size_t i = 0; i < z.size(); ++i) ASSERT_EQ(b[i], 0) << i;
}

TEST(ZeroPages, ReleaseZeroesWholePagesInsideTheRangeOnly) {
  const size_t page = ZeroPages::page_size();
  ZeroPages z(4 * page);
  auto* b = static_cast<unsigned char*>(z.data());
  std::memset(b, 0xab, z.size());
  // [page/2, 3·page + 1): only pages 1 and 2 lie wholly inside.
  z.release(page / 2, 3 * page + 1 - page / 2);
  for (size_t i = 0; i < z.size(); ++i) {
    const bool released = i >= page && i < 3 * page;
    ASSERT_EQ(b[i], released ? 0 : 0xab) << i;
  }
  // A range past the end is clipped; one inside a single page releases nothing.
  z.release(3 * page, 10 * page);
  EXPECT_EQ(b[3 * page], 0);
  b[0] = 7;
  z.release(1, page - 2);
  EXPECT_EQ(b[0], 7);
}

TEST(ZeroPages, EmptyAndMoved) {
  ZeroPages none(0);
  EXPECT_EQ(none.data(), nullptr);
  none.release(0, 100);  // nothing to release
  ZeroPages a(100);
  static_cast<unsigned char*>(a.data())[99] = 1;
  ZeroPages b = std::move(a);
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(static_cast<unsigned char*>(b.data())[99], 1);
  a = std::move(b);
  EXPECT_EQ(static_cast<unsigned char*>(a.data())[99], 1);
}

}  // namespace
}  // namespace ssmv
