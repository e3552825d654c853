#include "spec/format_values.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "spec/vector_clones.h"

namespace ssmv {
namespace {

bool sixteen(Format f) { return format_info(f).total_bits == 16; }

// The quiet NaN of a 16-bit format with the given sign: what a NaN becomes when narrowed.
uint16_t quiet_nan(Format f, bool negative) {
  const uint16_t q = f == Format::bf16 ? 0x7fc0u : 0x7e00u;
  return uint16_t(negative ? q | 0x8000u : q);
}

[[noreturn]] void misuse(const std::string& what) { throw std::logic_error("FormatValues: " + what); }

}  // namespace

SSMV_VECTOR_CLONES void decode16(Format f, const uint16_t* __restrict bits, size_t n, float* __restrict out) {
  if (f == Format::bf16) {
    // bf16_to_float without its branch: a NaN lane's word is replaced under a mask.
    for (size_t i = 0; i < n; ++i) {
      const uint32_t b = bits[i], w = b << 16;
      const uint32_t nan = uint32_t(0) - uint32_t((b & 0x7fffu) > 0x7f80u);
      const uint32_t r = (w & ~nan) | (((w & 0x80000000u) | 0x7fc00000u) & nan);
      std::memcpy(&out[i], &r, sizeof r);
    }
    return;
  }
  if (f != Format::fp16) misuse("decode16 of " + std::string(format_name(f)) + ", which is not a 16-bit format");
  for (size_t i = 0; i < n; ++i) out[i] = fp16_to_float(bits[i]);
}

FormatValues FormatValues::of_bits(Format f, std::vector<uint16_t> bits) {
  if (!sixteen(f)) {
    throw std::invalid_argument("FormatValues::of_bits: " + std::string(format_name(f)) + " is not a 16-bit format");
  }
  FormatValues v;
  v.kind_ = Kind::bits;
  v.format_ = f;
  v.bits_ = std::move(bits);
  return v;
}

FormatValues FormatValues::zeros(Format f, size_t n) {
  if (sixteen(f)) return of_bits(f, std::vector<uint16_t>(n, 0));
  FormatValues v(std::vector<float>(n, 0.0f));
  v.narrow(f);
  return v;
}

void FormatValues::narrow(Format f) {
  if (kind_ != Kind::loose) {
    if (format_ == f) return;
    FormatValues loose(to_vector());  // another format: through its exact values
    loose.narrow(f);
    *this = std::move(loose);
    return;
  }
  if (!sixteen(f)) {  // fp32, and int16_scaled's decoded values (fp32's): every float is one
    kind_ = Kind::floats;
    format_ = f;
    return;
  }
  std::vector<uint16_t> bits(wide_.size());
  for (size_t i = 0; i < wide_.size(); ++i) {
    const float v = wide_[i];
    if (std::isnan(v)) {
      bits[i] = quiet_nan(f, std::signbit(v));
    } else if (representable(f, v)) {
      bits[i] = uint16_t(round_nearest_even(f, double(v)));  // exact: no rounding happens
    } else {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.9g (%a)", double(v), double(v));
      throw std::invalid_argument("FormatValues::narrow: element " + std::to_string(i) + " = " + buf +
                                  " is not exact in " + std::string(format_name(f)));
    }
  }
  kind_ = Kind::bits;
  format_ = f;
  bits_ = std::move(bits);
  std::vector<float>().swap(wide_);
}

Format FormatValues::format() const {
  if (kind_ == Kind::loose) misuse("format() of loose values (narrow them to a format first)");
  return format_;
}

const uint16_t* FormatValues::bits() const {
  if (kind_ != Kind::bits) misuse("bits() of values held as floats");
  return bits_.data();
}

const float* FormatValues::floats() const {
  if (kind_ == Kind::bits) misuse("floats() of " + std::string(format_name(format_)) + " values held as bits");
  return wide_.data();
}

void FormatValues::to_doubles(size_t first, size_t count, double* out) const {
  if (kind_ != Kind::bits) {
    for (size_t i = 0; i < count; ++i) out[i] = double(wide_[first + i]);
    return;
  }
  constexpr size_t kBlock = 256;
  float buffer[kBlock];
  for (size_t i0 = 0; i0 < count; i0 += kBlock) {
    const size_t n = std::min(kBlock, count - i0);
    decode16(format_, bits_.data() + first + i0, n, buffer);
    for (size_t i = 0; i < n; ++i) out[i0 + i] = double(buffer[i]);
  }
}

std::vector<float> FormatValues::to_vector() const {
  if (kind_ != Kind::bits) return wide_;
  std::vector<float> out(bits_.size());
  decode16(format_, bits_.data(), bits_.size(), out.data());
  return out;
}

void FormatValues::store_nearest(size_t first, const double* values, size_t count) {
  switch (kind_) {
    case Kind::loose: misuse("store_nearest into loose values, which have no format");
    case Kind::floats:  // a float's rounding: fp32's (and int16_scaled's values')
      for (size_t i = 0; i < count; ++i) wide_[first + i] = float(values[i]);
      return;
    case Kind::bits:
      for (size_t i = 0; i < count; ++i) bits_[first + i] = uint16_t(round_nearest_even(format_, values[i]));
      return;
  }
}

void FormatValues::append(const FormatValues& src, size_t first, size_t count) {
  if (empty()) {
    kind_ = src.kind_;
    format_ = src.format_;
  } else if (kind_ != src.kind_ || (kind_ != Kind::loose && format_ != src.format_)) {
    misuse("append of " + std::string(src.narrowed() ? format_name(src.format_) : "loose") + " values to " +
           std::string(narrowed() ? format_name(format_) : "loose") + " values");
  }
  if (kind_ == Kind::bits) {
    bits_.insert(bits_.end(), src.bits_.begin() + std::ptrdiff_t(first),
                 src.bits_.begin() + std::ptrdiff_t(first + count));
  } else {
    wide_.insert(wide_.end(), src.wide_.begin() + std::ptrdiff_t(first),
                 src.wide_.begin() + std::ptrdiff_t(first + count));
  }
}

void FormatValues::clear() noexcept {
  kind_ = Kind::loose;
  format_ = Format::fp32;
  std::vector<float>().swap(wide_);
  std::vector<uint16_t>().swap(bits_);
}

void FormatValues::assign(size_t n, float v) {
  clear();
  wide_.assign(n, v);
}

void FormatValues::loosen() {
  if (kind_ == Kind::loose) return;
  std::vector<float> v = to_vector();
  clear();
  wide_ = std::move(v);
}

std::vector<float>& FormatValues::writable() {
  if (kind_ != Kind::loose) {
    misuse("writing " + std::string(format_name(format_)) +
           " values that were narrowed to their format (only a loose tensor is written element by element)");
  }
  return wide_;
}

bool operator==(const FormatValues& a, const FormatValues& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(a[i] == b[i])) return false;
  }
  return true;
}

}  // namespace ssmv
