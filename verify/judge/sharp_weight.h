// The sharp verdict's weight of one element (verify/sharp/sharp_verdict.h): its rigorous
// bound rounded to nearest bf16, two bytes where the bound is eight. The verdict divides
// every residual by the same weights, in the kernel's energy and in each Monte Carlo run's
// alike, so any fixed positive weights keep its false-alarm bound; the bound makes them
// comparable across elements, and 2^-9 relative (bf16's half ULP) changes the energies in
// their third digit at most. Memory is what decides: a 256-request decode step's final
// state has 67 M elements, 134 MB of weights against 537 MB of doubles.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "spec/format.h"
#include "spec/zero_pages.h"

namespace ssmv::verify {

// A bound that is not a positive finite number weighs 0 (the verdict leaves the element
// out); the others are kept inside bf16's finite normal range, so every element a double
// bound would count is counted.
inline uint16_t sharp_weight_bits(double bound) {
  constexpr uint16_t kMinNormal = 0x0080, kMaxFinite = 0x7f7f;  // 2^-126 and (2 − 2^-7)·2^127
  if (!(bound > 0) || !std::isfinite(bound)) return 0;
  const Bits b = round_nearest_even(Format::bf16, bound);
  if (b < kMinNormal) return kMinNormal;
  return b > kMaxFinite ? kMaxFinite : uint16_t(b);
}

// bf16 is the upper half of fp32: the weight is its bits shifted up (no branch, so loops over
// weights vectorise), the same value as decode(Format::bf16, bits).
inline double sharp_weight(uint16_t bits) { return double(std::bit_cast<float>(uint32_t(bits) << 16)); }

// A tensor's weights, in its flat order: zeros (a weight of 0 leaves the element out) until
// the judging writes them, on pages taken only as they are written (spec/zero_pages.h), so
// that they fill in step with the judging instead of all at once: in the chunked check they
// fill while the bound's per-element floats drain (verify/bound/y_before_dx.h); where the sharp
// verdict's first pass runs beside the check, y's go back behind its readers
// (verify/judge/judging_feed.h), so that only the band between the judging and the slowest
// reader is held.
class SharpWeights {
 public:
  SharpWeights() = default;
  explicit SharpWeights(size_t n) : pages_(n * sizeof(uint16_t)), size_(n) {}
  SharpWeights(const SharpWeights& other) : SharpWeights(other.size_) {
    if (size_ > 0) std::memcpy(pages_.data(), other.data(), size_ * sizeof(uint16_t));
  }
  SharpWeights& operator=(const SharpWeights& other) {
    if (this != &other) *this = SharpWeights(other);
    return *this;
  }
  SharpWeights(SharpWeights&&) noexcept = default;
  SharpWeights& operator=(SharpWeights&&) noexcept = default;

  uint16_t* data() { return static_cast<uint16_t*>(pages_.data()); }
  const uint16_t* data() const { return static_cast<const uint16_t*>(pages_.data()); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  uint16_t& operator[](size_t i) { return data()[i]; }
  uint16_t operator[](size_t i) const { return data()[i]; }
  // Frees the weights.
  void clear() { *this = SharpWeights(); }

  friend bool operator==(const SharpWeights& a, const SharpWeights& b) {
    return a.size_ == b.size_ && (a.size_ == 0 || std::memcmp(a.data(), b.data(), a.size_ * sizeof(uint16_t)) == 0);
  }

 private:
  ZeroPages pages_;
  size_t size_ = 0;
};

}  // namespace ssmv::verify
