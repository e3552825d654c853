// The ssmv command gives freed blocks of 256 KiB and more back to the system. glibc's malloc
// serves a block that large with mmap, but raises that threshold to the size of each mmapped
// block freed (up to 32 MiB on 64-bit): after the first large temporaries are freed, blocks up to
// that size come from the threads' arenas and, freed, stay resident there. A check runs up to 16
// reference and 16 sharp-verdict threads, each with its arena: that kept 22–25 MB of a
// 65,536-token chunk_scan check resident (302 → 277 MB with the threshold fixed; bench/NOTES.md
// "Session 31"). Setting the threshold (mallopt) fixes it and stops the rise. Executable only,
// like huge_pages.cpp, and not under the sanitizers, whose allocator stays theirs.
#include <malloc.h>

namespace {

constexpr int kMmapThreshold = 256 << 10;
// Before main, so before the dump's tensors are allocated; mallopt returns 1 on success, and a
// refusal leaves glibc's own policy.
[[maybe_unused]] const int kFixed = mallopt(M_MMAP_THRESHOLD, kMmapThreshold);

}  // namespace
