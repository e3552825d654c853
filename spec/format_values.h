// Values of one number format held at the format's width: the problem's tensors (x, dt, B, C,
// z), a kernel's outputs (y, final states) and the sharp verdict's emulated outputs. A tensor of
// a 16-bit format (bf16, fp16: format_info(f).total_bits == 16) keeps each value as its bits,
// 2 bytes an element; any other format keeps floats (every value of every format is a float,
// so reading gives the exact value either way). A 65,536-token chunk_scan dump's x and y are
// then 67 MB each in memory, as in the file, not 134 MB.
//
// Two states:
//   * loose: floats written by a test or a generator, with no format yet; written like a
//     std::vector<float> (set, push_back, resize, assign, writable());
//   * narrowed: the values of a format f, exact in it by construction (narrow(f), of_bits):
//     16-bit formats as bits, others as floats. Only a value of f can enter (store_nearest
//     rounds to it, append copies another narrowed tensor of f); every other write throws
//     std::logic_error — a narrowed tensor is never changed behind its format's back.
// Reading is the same in both: operator[] (exact), read() (a row at once), const iteration.
// There is no non-const operator[]: a read never throws, and a write says so (set).
//
// Included by CUDA sources through spec/problem.h: C++17 only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <utility>
#include <vector>

#include "spec/format.h"

namespace ssmv {

// The float of a bf16 pattern: its bits shifted up 16 (bf16 is fp32's top half). A NaN
// pattern gives the quiet NaN with the pattern's sign and no payload, as float(decode(bf16, b))
// does, so that a value reads the same through decode and through this.
inline float bf16_to_float(uint16_t b) {
  uint32_t w = uint32_t(b) << 16;
  if ((b & 0x7fffu) > 0x7f80u) w = (w & 0x80000000u) | 0x7fc00000u;
  float v;
  std::memcpy(&v, &w, sizeof v);
  return v;
}

// The float of an fp16 pattern, in integer arithmetic only (no rounding mode or flush-to-zero
// can change it): a normal value moves its exponent (bias 15 to 127) and its 10 significand
// bits up; a subnormal m·2^-24 is normalised at its top bit; Inf stays Inf; a NaN gives the
// quiet NaN with the pattern's sign, as float(decode(fp16, b)) does.
inline float fp16_to_float(uint16_t b) {
  const uint32_t sign = uint32_t(b & 0x8000u) << 16, e = (b >> 10) & 0x1fu, m = b & 0x3ffu;
  uint32_t w;
  if (e == 0x1f) {
    w = sign | (m == 0 ? 0x7f800000u : 0x7fc00000u);
  } else if (e != 0) {
    w = sign | ((e + 112) << 23) | (m << 13);
  } else if (m == 0) {
    w = sign;
  } else {
    int k = 9;  // the top bit of m: m·2^-24 = 1.f·2^(k-24), biased exponent k + 103
    while (!(m >> k)) --k;
    w = sign | (uint32_t(k + 103) << 23) | ((m << (23 - k)) & 0x7fffffu);
  }
  float v;
  std::memcpy(&v, &w, sizeof v);
  return v;
}

// The float of each of n patterns of the 16-bit format f into out (bits and out do not overlap):
// bf16 in a loop without branches (it vectorises, AVX2 where the CPU has it: a dump's rows are
// decoded this way), fp16 through fp16_to_float.
void decode16(Format f, const uint16_t* bits, size_t n, float* out);

class FormatValues {
 public:
  class const_iterator;

  // Loose floats (implicit, so that writer code keeps `p.x = values;`).
  FormatValues() = default;
  FormatValues(std::vector<float> values) noexcept : wide_(std::move(values)) {}
  FormatValues(std::initializer_list<float> values) : wide_(values) {}

  // Narrowed values of a 16-bit format `f` from their bits (std::invalid_argument for another
  // format). Any pattern is taken: NaN and Inf among them (a kernel's outputs may hold them;
  // validate() refuses them in a problem's inputs).
  static FormatValues of_bits(Format f, std::vector<uint16_t> bits);
  // n zeros (+0) of `f`, narrowed: a buffer for store_nearest.
  static FormatValues zeros(Format f, size_t n);
  // Narrows to `f`: a loose tensor's floats become f's values (bits for a 16-bit f, floats
  // otherwise); a tensor narrowed to another format is converted. NaN and ±Inf are kept
  // (NaN as the quiet NaN of its sign). Throws std::invalid_argument naming the first element
  // not exact in f (nothing changes then).
  void narrow(Format f);

  bool narrowed() const { return kind_ != Kind::loose; }
  // Narrowed to a 16-bit format: bits() holds the values.
  bool holds_bits() const { return kind_ == Kind::bits; }
  // The format it was narrowed to; std::logic_error for a loose tensor.
  Format format() const;

  size_t size() const { return kind_ == Kind::bits ? bits_.size() : wide_.size(); }
  bool empty() const { return size() == 0; }

  // Element i, exact (NaN as the quiet NaN of its sign when held as bits). No bounds check.
  float operator[](size_t i) const {
    if (kind_ != Kind::bits) return wide_[i];
    return format_ == Format::bf16 ? bf16_to_float(bits_[i]) : fp16_to_float(bits_[i]);
  }
  // Elements [first, first + count): a pointer into the floats when they are held as floats,
  // else `buffer` (count floats) filled by decode16. For hot loops that read a row.
  const float* read(size_t first, size_t count, float* buffer) const {
    if (kind_ != Kind::bits) return wide_.data() + first;
    decode16(format_, bits_.data() + first, count, buffer);
    return buffer;
  }
  // The same with a buffer the caller keeps between rows (grown to count when needed).
  const float* read(size_t first, size_t count, std::vector<float>& buffer) const {
    if (kind_ != Kind::bits) return wide_.data() + first;
    if (buffer.size() < count) buffer.resize(count);
    return read(first, count, buffer.data());
  }
  // Elements [first, first + count) as doubles into out (for loops that work in double).
  void to_doubles(size_t first, size_t count, double* out) const;
  // The bits of a tensor that holds_bits() (std::logic_error otherwise): size() of them.
  const uint16_t* bits() const;
  // The floats of one that does not (std::logic_error otherwise): size() of them.
  const float* floats() const;
  // Every value as a float (a copy: for tests and small tensors, not for a dump's).
  std::vector<float> to_vector() const;

  const_iterator begin() const;
  const_iterator end() const;

  // Narrowed only (std::logic_error otherwise): elements [first, first + count) become
  // values[0, count) rounded to nearest even in the format (float(v) for a format held as
  // floats) — the sharp verdict's emulated outputs. Distinct elements may be stored from
  // distinct threads.
  void store_nearest(size_t first, const double* values, size_t count);
  // Appends src's elements [first, first + count) (a slice of the problem along its tokens):
  // an empty tensor takes src's state and format; otherwise both must be loose, or narrowed to
  // one format (std::logic_error otherwise).
  void append(const FormatValues& src, size_t first, size_t count);
  // Empties the tensor (a problem drops an optional tensor); it is loose afterwards.
  void clear() noexcept;
  // Makes a narrowed tensor loose floats again, its values unchanged (a test that edits a
  // generated problem says so with this); a loose one stays as it is.
  void loosen();

  // Replaces every value, as `= std::vector<float>(n, v)` does: n loose copies of v.
  void assign(size_t n, float v);

  // Loose only (std::logic_error on a narrowed tensor): the std::vector<float> writes.
  void set(size_t i, float v) { writable()[i] = v; }
  void push_back(float v) { writable().push_back(v); }
  void resize(size_t n, float v = 0.0f) { writable().resize(n, v); }
  void reserve(size_t n) { writable().reserve(n); }
  std::vector<float>& writable();

  // Equal sizes and every element equal as floats (NaN unequal, +0 == -0: std::vector's ==),
  // whichever way each side holds them.
  friend bool operator==(const FormatValues& a, const FormatValues& b);
  friend bool operator!=(const FormatValues& a, const FormatValues& b) { return !(a == b); }

 private:
  enum class Kind : uint8_t { loose, floats, bits };
  Kind kind_ = Kind::loose;
  Format format_ = Format::fp32;  // narrowed only
  std::vector<float> wide_;       // loose, or narrowed to a format of more than 16 bits
  std::vector<uint16_t> bits_;    // narrowed to a 16-bit format
};

// Reads element by element (operator[]); the values, not references to them.
class FormatValues::const_iterator {
 public:
  using iterator_category = std::random_access_iterator_tag;
  using value_type = float;
  using difference_type = std::ptrdiff_t;
  using pointer = void;
  using reference = float;

  const_iterator() = default;
  const_iterator(const FormatValues* v, size_t i) : v_(v), i_(i) {}
  float operator*() const { return (*v_)[i_]; }
  float operator[](difference_type k) const { return (*v_)[size_t(difference_type(i_) + k)]; }
  const_iterator& operator++() { ++i_; return *this; }
  const_iterator operator++(int) { const_iterator o = *this; ++i_; return o; }
  const_iterator& operator--() { --i_; return *this; }
  const_iterator operator--(int) { const_iterator o = *this; --i_; return o; }
  const_iterator& operator+=(difference_type k) { i_ = size_t(difference_type(i_) + k); return *this; }
  const_iterator& operator-=(difference_type k) { i_ = size_t(difference_type(i_) - k); return *this; }
  friend const_iterator operator+(const_iterator a, difference_type k) { return a += k; }
  friend const_iterator operator+(difference_type k, const_iterator a) { return a += k; }
  friend const_iterator operator-(const_iterator a, difference_type k) { return a -= k; }
  friend difference_type operator-(const const_iterator& a, const const_iterator& b) {
    return difference_type(a.i_) - difference_type(b.i_);
  }
  friend bool operator==(const const_iterator& a, const const_iterator& b) { return a.i_ == b.i_; }
  friend bool operator!=(const const_iterator& a, const const_iterator& b) { return a.i_ != b.i_; }
  friend bool operator<(const const_iterator& a, const const_iterator& b) { return a.i_ < b.i_; }
  friend bool operator>(const const_iterator& a, const const_iterator& b) { return a.i_ > b.i_; }
  friend bool operator<=(const const_iterator& a, const const_iterator& b) { return a.i_ <= b.i_; }
  friend bool operator>=(const const_iterator& a, const const_iterator& b) { return a.i_ >= b.i_; }

 private:
  const FormatValues* v_ = nullptr;
  size_t i_ = 0;
};

inline FormatValues::const_iterator FormatValues::begin() const { return const_iterator(this, 0); }
inline FormatValues::const_iterator FormatValues::end() const { return const_iterator(this, size()); }

}  // namespace ssmv
