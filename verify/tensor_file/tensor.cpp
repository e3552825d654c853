#include "verify/tensor_file/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "spec/parallel.h"

namespace ssmv::tensor_file {
namespace {

std::string compose(const std::string& file, const std::string& tensor, const std::string& field,
                    const std::string& detail) {
  std::string m = file.empty() ? std::string("<memory>") : file;
  if (!tensor.empty()) m += ": tensor '" + tensor + "'";
  if (!field.empty()) m += ": " + field;
  return m + ": " + detail;
}

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g (%a)", v, v);
  return buf;
}

template <typename T>
T load_le(const uint8_t* p) {
  // Host and file are both little-endian (x86-64, aarch64; checked in tensor_file.cpp).
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename T>
void store_le(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

// Element i as a double and whether that double is exact (only 64-bit integers beyond
// 2^53 can be inexact).
double element(const Tensor& t, int64_t i, bool& exact) {
  const uint8_t* p = t.bytes().data() + size_t(i) * dtype_size(t.dtype);
  exact = true;
  switch (t.dtype) {
    case DType::boolean: return p[0] != 0 ? 1.0 : 0.0;
    case DType::u8: return p[0];
    case DType::i8: return int8_t(p[0]);
    case DType::i16: return load_le<int16_t>(p);
    case DType::u16: return load_le<uint16_t>(p);
    case DType::i32: return load_le<int32_t>(p);
    case DType::u32: return load_le<uint32_t>(p);
    case DType::i64: {
      const int64_t v = load_le<int64_t>(p);
      const double d = double(v);
      // d == 2^63 when v is near INT64_MAX: int64_t(d) would be undefined; compare first.
      exact = d < 0x1p63 && int64_t(d) == v;
      return d;
    }
    case DType::u64: {
      const uint64_t v = load_le<uint64_t>(p);
      const double d = double(v);
      exact = d < 0x1p64 && uint64_t(d) == v;
      return d;
    }
    case DType::f16: return decode(Format::fp16, load_le<uint16_t>(p));
    case DType::bf16: return decode(Format::bf16, load_le<uint16_t>(p));
    case DType::f32: return load_le<float>(p);
    case DType::f64: return load_le<double>(p);
  }
  return 0.0;
}

void check_data_size(const Tensor& t) {
  const int64_t n = t.element_count();
  if (n < 0 || t.bytes().size() != size_t(n) * dtype_size(t.dtype)) {
    t.where().fail("data", std::to_string(t.bytes().size()) + " bytes do not hold shape " +
                               shape_string(t.shape) + " of " + std::string(dtype_name(t.dtype)));
  }
}

// Calls body(lo, hi) for the elements [0, n), stretch by stretch on the process's worker threads
// (spec/parallel.h: a 546 MB decode dump's states are converted on every core, not one), and
// hands each finished stretch of the tensor's bytes back (Tensor::release): converting a mapped
// tensor then keeps at most one stretch per worker of it resident besides the converted
// values, instead of all of it. 4 MiB stretches make the release calls (one madvise each)
// negligible against the conversion. A body that throws (a bad element) stops nothing else;
// the exception of the first failing stretch is rethrown, so the element named is the first
// bad one, as in one pass in order.
template <typename Body>
void for_each_stretch(const Tensor& t, size_t n, Body&& body) {
  const size_t es = dtype_size(t.dtype);
  const size_t stretch = std::max<size_t>(1, (size_t(4) << 20) / es);
  const int64_t stretches = int64_t((n + stretch - 1) / stretch);
  for_each_task(stretches, process_threads(), [&](int64_t k, int64_t) {
    const size_t lo = size_t(k) * stretch, hi = std::min(n, lo + stretch);
    body(lo, hi);
    t.release(t.bytes().subspan(lo * es, (hi - lo) * es));
  });
}

// The same, element by element: body(i) for each i of each stretch.
template <typename Body>
void for_each_element(const Tensor& t, size_t n, Body&& body) {
  for_each_stretch(t, n, [&](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; ++i) body(i);
  });
}

}  // namespace

TensorFileError::TensorFileError(std::string file, std::string tensor, std::string field,
                                 std::string detail)
    : std::runtime_error(compose(file, tensor, field, detail)),
      file_(std::move(file)),
      tensor_(std::move(tensor)),
      field_(std::move(field)),
      detail_(std::move(detail)) {}

void Where::fail(std::string field, std::string detail) const {
  throw TensorFileError(file, tensor, std::move(field), std::move(detail));
}

size_t dtype_size(DType t) {
  switch (t) {
    case DType::boolean:
    case DType::u8:
    case DType::i8: return 1;
    case DType::i16:
    case DType::u16:
    case DType::f16:
    case DType::bf16: return 2;
    case DType::i32:
    case DType::u32:
    case DType::f32: return 4;
    case DType::i64:
    case DType::u64:
    case DType::f64: return 8;
  }
  return 1;
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::boolean: return "bool";
    case DType::u8: return "u8";
    case DType::i8: return "i8";
    case DType::i16: return "i16";
    case DType::u16: return "u16";
    case DType::i32: return "i32";
    case DType::u32: return "u32";
    case DType::i64: return "i64";
    case DType::u64: return "u64";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::f32: return "f32";
    case DType::f64: return "f64";
  }
  return "?";
}

bool is_float_dtype(DType t) {
  return t == DType::f16 || t == DType::bf16 || t == DType::f32 || t == DType::f64;
}

bool is_integer_dtype(DType t) { return !is_float_dtype(t); }

int64_t Tensor::element_count() const {
  int64_t n = 1;
  for (const int64_t d : shape) {
    if (d < 0 || (d != 0 && n > std::numeric_limits<int64_t>::max() / d)) return -1;
    n *= d;
  }
  return n;
}

std::span<uint8_t> Tensor::mutable_bytes() {
  // use_count() == 1: no copy of this tensor shares the buffer (a copy made concurrently
  // with this call would be a data race on this tensor anyway).
  if (owned_ == nullptr || owned_.use_count() != 1) {
    owned_ = std::make_shared<std::vector<uint8_t>>(bytes_.begin(), bytes_.end());
    source_.reset();
    bytes_ = *owned_;
  }
  return *owned_;
}

void Tensor::set_bytes(std::vector<uint8_t> bytes) {
  owned_ = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
  source_.reset();
  bytes_ = *owned_;
}

void Tensor::set_view(std::span<const uint8_t> bytes, std::shared_ptr<const ByteSource> source) {
  if (source == nullptr) {
    set_bytes(std::vector<uint8_t>(bytes.begin(), bytes.end()));
    return;
  }
  owned_.reset();
  source_ = std::move(source);
  bytes_ = bytes;
}

int64_t checked_element_count(const std::vector<int64_t>& shape, size_t elem_size,
                              uint64_t max_bytes, const Where& where, const std::string& field) {
  // Bytes so far, kept <= max_bytes (<= 2^64 / 2), so bytes * d cannot overflow unchecked.
  uint64_t count = 1;
  bool zero = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {
      where.fail(field, "dimension " + std::to_string(i) + " is " + std::to_string(shape[i]) +
                            ": must be >= 0");
    }
    if (shape[i] == 0) zero = true;
  }
  if (zero) return 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    const uint64_t d = uint64_t(shape[i]);
    const uint64_t limit = max_bytes / elem_size;
    if (count > limit / d) {
      where.fail(field, shape_string(shape) + " of " + std::to_string(elem_size) +
                            "-byte elements needs more than the " + std::to_string(max_bytes) +
                            " bytes available");
    }
    count *= d;
  }
  return int64_t(count);
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

namespace {

// A tensor without bytes yet, for `count` values: their number must match the shape.
Tensor tensor_for(std::string name, DType dtype, std::vector<int64_t> shape, size_t count) {
  Tensor t;
  t.name = std::move(name);
  t.dtype = dtype;
  t.shape = std::move(shape);
  const int64_t n = t.element_count();
  if (n < 0 || size_t(n) != count) {
    t.where().fail("values", std::to_string(count) + " values for shape " + shape_string(t.shape));
  }
  return t;
}

}  // namespace

Tensor make_tensor(std::string name, DType dtype, std::vector<int64_t> shape,
                   const std::vector<double>& values) {
  Tensor t = tensor_for(std::move(name), dtype, std::move(shape), values.size());
  const int64_t n = t.element_count();
  const size_t es = dtype_size(dtype);
  std::vector<uint8_t> bytes(size_t(n) * es);
  for (size_t i = 0; i < values.size(); ++i) {
    const double v = values[i];
    uint8_t* p = bytes.data() + i * es;
    auto need_integer = [&](double lo, double hi) {
      if (!(v == std::floor(v) && v >= lo && v <= hi)) {
        t.where().fail("values", "element " + std::to_string(i) + " = " + num(v) + " is not a " +
                                     std::string(dtype_name(dtype)) + " value");
      }
    };
    switch (dtype) {
      case DType::boolean: need_integer(0, 1); p[0] = uint8_t(v); break;
      case DType::u8: need_integer(0, 255); p[0] = uint8_t(v); break;
      case DType::i8: need_integer(-128, 127); p[0] = uint8_t(int8_t(v)); break;
      case DType::i16: need_integer(-32768, 32767); store_le(p, int16_t(v)); break;
      case DType::u16: need_integer(0, 65535); store_le(p, uint16_t(v)); break;
      case DType::i32: need_integer(-0x1p31, 0x1p31 - 1); store_le(p, int32_t(v)); break;
      case DType::u32: need_integer(0, 0x1p32 - 1); store_le(p, uint32_t(v)); break;
      // 2^63 - 1 is not a double: the largest double below 2^63 is 2^63 - 1024.
      case DType::i64: need_integer(-0x1p63, 0x1p63 - 1024); store_le(p, int64_t(v)); break;
      case DType::u64: need_integer(0, 0x1p64 - 2048); store_le(p, uint64_t(v)); break;
      case DType::f16:
      case DType::bf16: {
        const Format f = dtype == DType::f16 ? Format::fp16 : Format::bf16;
        const Bits b = std::isnan(v) ? round_nearest_even(f, v) : 0;
        if (!std::isnan(v) && !representable(f, v)) {
          t.where().fail("values", "element " + std::to_string(i) + " = " + num(v) +
                                       " is not exact in " + std::string(format_name(f)));
        }
        store_le(p, uint16_t(std::isnan(v) ? b : encode_exact(f, v)));
        break;
      }
      case DType::f32:
        if (!std::isnan(v) && double(float(v)) != v) {
          t.where().fail("values", "element " + std::to_string(i) + " = " + num(v) + " is not exact in fp32");
        }
        store_le(p, float(v));
        break;
      case DType::f64: store_le(p, v); break;
    }
  }
  t.set_bytes(std::move(bytes));
  return t;
}

Tensor make_format_tensor(std::string name, Format f, std::vector<int64_t> shape, const FormatValues& values) {
  if (block_scaled(f)) {
    throw std::invalid_argument("make_format_tensor: '" + name + "': " + std::string(format_name(f)) +
                                " values are written as codes and scales, not as one tensor");
  }
  const DType dt = f == Format::fp32 ? DType::f32 : f == Format::bf16 ? DType::bf16 : DType::f16;
  if (!(values.holds_bits() && values.format() == f)) {
    return make_tensor(std::move(name), dt, std::move(shape), std::vector<double>(values.begin(), values.end()));
  }
  // Bits of f already: copied as they are, a NaN as f's canonical quiet NaN (as make_tensor
  // writes one).
  Tensor t = tensor_for(std::move(name), dt, std::move(shape), values.size());
  const size_t n = values.size();
  const uint16_t inf = f == Format::bf16 ? 0x7f80u : 0x7c00u, nan = uint16_t(round_nearest_even(f, std::nan("")));
  std::vector<uint8_t> bytes(n * 2);
  const uint16_t* bits = values.bits();
  for (size_t i = 0; i < n; ++i) {
    const uint16_t b = (bits[i] & 0x7fffu) > inf ? nan : bits[i];
    store_le(bytes.data() + 2 * i, b);
  }
  t.set_bytes(std::move(bytes));
  return t;
}

std::vector<double> to_double(const Tensor& t) {
  check_data_size(t);
  std::vector<double> out(size_t(t.element_count()));
  for_each_element(t, out.size(), [&](size_t i) {
    bool exact;
    out[i] = element(t, int64_t(i), exact);
    if (!exact) {
      t.where().fail("values", "element " + std::to_string(i) + " of " + std::string(dtype_name(t.dtype)) +
                                   " is beyond 2^53 and has no exact double");
    }
  });
  return out;
}

std::vector<float> to_float(const Tensor& t) {
  check_data_size(t);
  std::vector<float> out(size_t(t.element_count()));
  for_each_element(t, out.size(), [&](size_t i) {
    bool exact;
    const double d = element(t, int64_t(i), exact);
    const float f = float(d);
    // NaN converts to NaN; every other value must survive the narrowing unchanged.
    if (!exact || (!std::isnan(d) && double(f) != d)) {
      t.where().fail("values", "element " + std::to_string(i) + " = " + num(d) + " of " +
                                   std::string(dtype_name(t.dtype)) + " is not exact in a float");
    }
    out[i] = f;
  });
  return out;
}

std::vector<int64_t> to_int64(const Tensor& t) {
  check_data_size(t);
  if (!is_integer_dtype(t.dtype)) {
    t.where().fail("dtype", "dtype " + std::string(dtype_name(t.dtype)) + " is not an integer type");
  }
  const size_t es = dtype_size(t.dtype);
  const uint8_t* data = t.bytes().data();
  std::vector<int64_t> out(size_t(t.element_count()));
  for_each_element(t, out.size(), [&](size_t i) {
    const uint8_t* p = data + i * es;
    switch (t.dtype) {
      case DType::i64: out[i] = load_le<int64_t>(p); break;
      case DType::u64: {
        const uint64_t v = load_le<uint64_t>(p);
        if (v > uint64_t(std::numeric_limits<int64_t>::max())) {
          t.where().fail("values", "element " + std::to_string(i) + " = " + std::to_string(v) +
                                       " of u64 exceeds 2^63 - 1");
        }
        out[i] = int64_t(v);
        break;
      }
      default: {
        bool exact;
        out[i] = int64_t(element(t, int64_t(i), exact));  // every narrower integer is exact
      }
    }
  });
  return out;
}

namespace {

[[noreturn]] void not_exact(const Tensor& t, size_t i, double v, const std::string& fname) {
  t.where().fail("values", "element " + std::to_string(i) + " = " + num(v) + " of " + std::string(dtype_name(t.dtype)) +
                               " is not exact in the declared format " + fname);
}

// The checks every reading of a tensor as values of `f` starts with: a block-scaled format is
// read with its scales; i16/u16 patterns need a 16-bit format; no other integer dtype.
void expect_format_dtype(const Tensor& t, Format f) {
  check_data_size(t);
  const std::string fname(format_name(f));
  if (block_scaled(f)) {
    t.where().fail("dtype", "the block-scaled format " + fname + " is read with its scale tensor");
  }
  if (t.dtype == DType::i16 || t.dtype == DType::u16) {
    if (format_info(f).total_bits != 16) {
      t.where().fail("dtype", "dtype " + std::string(dtype_name(t.dtype)) + " holds 16-bit patterns; the declared format " +
                                  fname + " has 32 bits");
    }
  } else if (!is_float_dtype(t.dtype)) {
    t.where().fail("dtype", "dtype " + std::string(dtype_name(t.dtype)) + " cannot hold " + fname + " values");
  }
}

// The bits of a 16-bit format f, straight from the file's bytes: a pattern of f's own dtype
// (or of i16/u16, how NumPy stores bf16) is copied; a value of another float dtype must be
// exact in f and is encoded (NaN as the quiet NaN of its sign). No float copy of the tensor.
std::vector<uint16_t> bits_of(const Tensor& t, Format f) {
  const std::string fname(format_name(f));
  const uint8_t* data = t.bytes().data();
  std::vector<uint16_t> out(size_t(t.element_count()));
  const DType own = f == Format::bf16 ? DType::bf16 : DType::f16;
  if (t.dtype == DType::i16 || t.dtype == DType::u16 || t.dtype == own) {
    for_each_element(t, out.size(), [&](size_t i) { out[i] = load_le<uint16_t>(data + 2 * i); });
    return out;
  }
  const uint16_t quiet = f == Format::bf16 ? 0x7fc0u : 0x7e00u;
  if (t.dtype == DType::f32) {  // the common case, without element()'s dispatch per element
    for_each_element(t, out.size(), [&](size_t i) {
      const uint32_t w = load_le<uint32_t>(data + 4 * i);
      float v;
      std::memcpy(&v, &w, sizeof v);
      if (std::isnan(v)) {
        out[i] = uint16_t(quiet | ((w >> 16) & 0x8000u));
      } else if (!representable(f, v)) {
        not_exact(t, i, double(v), fname);
      } else {
        out[i] = f == Format::bf16 ? uint16_t(w >> 16) : uint16_t(round_nearest_even(f, double(v)));
      }
    });
    return out;
  }
  for_each_element(t, out.size(), [&](size_t i) {
    bool exact;
    const double d = element(t, int64_t(i), exact);
    if (std::isnan(d)) {
      out[i] = uint16_t(quiet | (std::signbit(d) ? 0x8000u : 0u));
    } else if (!representable(f, d)) {
      not_exact(t, i, d, fname);
    } else {
      out[i] = uint16_t(round_nearest_even(f, d));  // exact: no rounding happens
    }
  });
  return out;
}

}  // namespace

std::vector<float> as_format_floats(const Tensor& t, Format f) {
  expect_format_dtype(t, f);
  const std::string fname(format_name(f));
  const uint8_t* data = t.bytes().data();
  std::vector<float> out(size_t(t.element_count()));
  if (t.dtype == DType::i16 || t.dtype == DType::u16) {
    for_each_element(t, out.size(), [&](size_t i) {
      const uint16_t b = load_le<uint16_t>(data + 2 * i);
      out[i] = f == Format::bf16 ? bf16_to_float(b) : fp16_to_float(b);
    });
    return out;
  }
  if (t.dtype == DType::f32) {  // the common case, without element()'s dispatch per element
    // Every float is a value of fp32 (and int16_scaled's values are fp32 values): those
    // stretches are copied as they are (host and file are both little-endian, load_le), the
    // 268 MB states of a 256-request decode dump at memory speed; another format's floats are
    // checked one by one.
    const bool every_float_exact = f == Format::fp32 || f == Format::int16_scaled;
    for_each_stretch(t, out.size(), [&](size_t lo, size_t hi) {
      if (every_float_exact) {
        std::memcpy(out.data() + lo, data + 4 * lo, (hi - lo) * sizeof(float));
        return;
      }
      for (size_t i = lo; i < hi; ++i) {
        const uint32_t w = load_le<uint32_t>(data + 4 * i);
        float v;
        std::memcpy(&v, &w, sizeof v);
        if (!std::isnan(v) && !representable(f, v)) not_exact(t, i, double(v), fname);
        out[i] = v;
      }
    });
    return out;
  }
  for_each_element(t, out.size(), [&](size_t i) {
    bool exact;
    const double d = element(t, int64_t(i), exact);
    if (!std::isnan(d) && !representable(f, d)) not_exact(t, i, d, fname);
    out[i] = float(d);
  });
  return out;
}

FormatValues as_format_values(const Tensor& t, Format f) {
  if (format_info(f).total_bits != 16) {
    FormatValues v(as_format_floats(t, f));
    v.narrow(f);  // a float is a value of f: nothing is checked or copied
    return v;
  }
  expect_format_dtype(t, f);
  return FormatValues::of_bits(f, bits_of(t, f));
}

std::vector<float> as_scaled_values(const Tensor& codes, const Tensor& scales, Format f) {
  check_data_size(codes);
  const std::string fname(format_name(f));
  if (codes.dtype != DType::i16) {
    codes.where().fail("dtype", "dtype " + std::string(dtype_name(codes.dtype)) + " cannot hold the codes of " + fname +
                                    " (expected i16)");
  }
  const std::vector<float> d = as_format_floats(scales, Format::fp32);
  for (size_t b = 0; b < d.size(); ++b) {
    if (!(std::isfinite(d[b]) && d[b] >= 0)) {
      scales.where().fail("values", "element " + std::to_string(b) + " = " + num(d[b]) +
                                        ": a decode scale must be finite and >= 0");
    }
  }
  const size_t n = size_t(codes.element_count()), block = codes.shape.empty() ? 1 : size_t(codes.shape.back());
  if (block == 0 ? !d.empty() : n / block != d.size()) {
    scales.where().fail("shape", shape_string(scales.shape) + ": " + std::to_string(d.size()) +
                                     " scales for the " + std::to_string(block == 0 ? 0 : n / block) + " blocks of " +
                                     codes.name + " " + shape_string(codes.shape));
  }
  const uint8_t* data = codes.bytes().data();
  std::vector<float> out(n);
  for_each_element(codes, n, [&](size_t i) { out[i] = decode_scaled(f, load_le<int16_t>(data + 2 * i), d[i / block]); });
  return out;
}

}  // namespace ssmv::tensor_file
