// The ssmv command's large allocations on transparent huge pages (Linux, 2 MiB): a check of a
// production dump allocates hundreds of MB of per-element arrays (the converted tensors, the
// bounds the sharp verdict reads: 537 MB of them at 256 decode requests), and touching them
// a 4 KiB page fault at a time was a tenth of such a check on a virtual machine (64 x 4-token
// dump, 2 cores: 2.85 -> 2.55 s, bench/NOTES.md). Where the kernel's THP mode is "madvise",
// as on the machines measured, a region is eligible only when asked: every allocation of
// 8 MiB or more asks for the 2 MiB-aligned part of itself (madvise(MADV_HUGEPAGE) before any
// of it is touched; glibc's malloc tunable glibc.malloc.hugetlb=1 does the same, but only when
// set in the environment before the program starts). A refused madvise changes nothing.
// Only the executable replaces operator new; the libraries never do, and the sanitizer build
// keeps its own allocator (verify/cli/CMakeLists.txt).
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <new>

namespace {

constexpr std::uintptr_t kHugePage = std::uintptr_t(2) << 20;
constexpr std::size_t kLarge = std::size_t(8) << 20;

void* allocate(std::size_t n) {
  for (;;) {
    if (void* p = std::malloc(n == 0 ? 1 : n)) {
      if (n >= kLarge) {
        const std::uintptr_t lo = (std::uintptr_t(p) + kHugePage - 1) & ~(kHugePage - 1);
        const std::uintptr_t hi = (std::uintptr_t(p) + n) & ~(kHugePage - 1);
        if (hi > lo) (void)::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
      }
      return p;
    }
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

}  // namespace

void* operator new(std::size_t n) { return allocate(n); }
void* operator new[](std::size_t n) { return allocate(n); }
