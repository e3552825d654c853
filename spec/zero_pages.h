// Memory that costs only what has been written: an anonymous private mapping reads as zeros
// and takes a page of RAM only when the page is first written, and release() hands whole
// pages back to the system at once (they read as zeros again). The checks' per-element arrays
// use it where they fill or drain in step with the judging, so that two of them do not add
// up in the peak: the sharp verdict's weights (verify/judge/sharp_weight.h) fill as the
// judging drains the chunked bound's per-element floats (verify/bound/y_before_dx.h).
// Linux (mmap, madvise); host only.
#pragma once

#include <cstddef>

namespace ssmv {

class ZeroPages {
 public:
  ZeroPages() = default;
  // `bytes` of zeros (none for 0); throws std::bad_alloc when the system refuses the mapping.
  explicit ZeroPages(size_t bytes);
  ~ZeroPages();
  ZeroPages(ZeroPages&& other) noexcept;
  ZeroPages& operator=(ZeroPages&& other) noexcept;
  ZeroPages(const ZeroPages&) = delete;
  ZeroPages& operator=(const ZeroPages&) = delete;

  void* data() const { return data_; }
  size_t size() const { return bytes_; }
  // The pages lying wholly inside [offset, offset + bytes) go back to the system; their bytes
  // read as zeros afterwards. Safe beside threads that touch other pages.
  void release(size_t offset, size_t bytes);
  // The same for the pages of a mapping that starts at `data` (a ZeroPages' data(), which a
  // holder of its address but not of the object may give back: verify/judge/judging_feed.h).
  static void release_within(const void* data, size_t offset, size_t bytes);

  static size_t page_size();

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace ssmv
