#include "spec/zero_pages.h"

#include <sys/mman.h>
#include <unistd.h>

#include <new>
#include <utility>

namespace ssmv {

size_t ZeroPages::page_size() {
  static const size_t size = size_t(::sysconf(_SC_PAGESIZE));
  return size;
}

ZeroPages::ZeroPages(size_t bytes) {
  if (bytes == 0) return;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  data_ = p;
  bytes_ = bytes;
}

ZeroPages::~ZeroPages() {
  if (data_ != nullptr) ::munmap(data_, bytes_);
}

ZeroPages::ZeroPages(ZeroPages&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

ZeroPages& ZeroPages::operator=(ZeroPages&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(data_, bytes_);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void ZeroPages::release(size_t offset, size_t bytes) {
  if (data_ == nullptr || offset >= bytes_) return;
  if (bytes > bytes_ - offset) bytes = bytes_ - offset;
  release_within(data_, offset, bytes);
}

void ZeroPages::release_within(const void* data, size_t offset, size_t bytes) {
  if (data == nullptr) return;
  const size_t page = page_size();
  const size_t lo = (offset + page - 1) / page * page, hi = (offset + bytes) / page * page;
  // MADV_DONTNEED on a private anonymous mapping frees the pages now; a later read gives zeros.
  // A refusal changes nothing but the memory held.
  if (hi > lo) (void)::madvise(const_cast<char*>(static_cast<const char*>(data)) + lo, hi - lo, MADV_DONTNEED);
}

}  // namespace ssmv
