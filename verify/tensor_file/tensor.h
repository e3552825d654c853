// In-memory tensors read from or written to tensor files (.npy, .npz, .safetensors), and
// the one error type of every tensor-file operation. A tensor is a name, an element type,
// a shape and its raw bytes: row-major (C order), little-endian, exactly
// element_count() * dtype_size(dtype) bytes. The bytes are either owned by the tensor (built
// in memory, inflated, or byte-swapped) or a read-only view into the file they were read from
// (load_tensor_file maps the file: no copy between the file and the converted values).
//
// Values leave a tensor only through the checked accessors below: to_double / to_float /
// to_int64 convert and refuse what does not convert exactly; as_format_values reads a
// tensor as values of a declared number format (spec/format.h, held at the format's width:
// spec/format_values.h), which is how bf16 data saved by NumPy (no bf16 dtype: int16/uint16
// bit patterns) becomes bf16 values again.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "spec/format.h"
#include "spec/format_values.h"

namespace ssmv::tensor_file {

// Every failure to read, interpret or write a tensor file. what() is
//   "<file>: tensor '<tensor>': <field>: <detail>"
// with the tensor and field parts left out when empty, e.g.
//   "x.npz: tensor 'dt': header field 'shape': dimension 1 is -3: must be >= 0".
class TensorFileError : public std::runtime_error {
 public:
  TensorFileError(std::string file, std::string tensor, std::string field, std::string detail);
  const std::string& file() const { return file_; }
  const std::string& tensor() const { return tensor_; }
  const std::string& field() const { return field_; }
  const std::string& detail() const { return detail_; }

 private:
  std::string file_, tensor_, field_, detail_;
};

// Where an error happened: the file (as the user named it) and the tensor, when known.
struct Where {
  std::string file;
  std::string tensor;
  [[noreturn]] void fail(std::string field, std::string detail) const;
  Where with_tensor(std::string name) const { return Where{file, std::move(name)}; }
};

enum class DType : uint8_t { boolean, u8, i8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64 };

size_t dtype_size(DType t);             // bytes per element
std::string_view dtype_name(DType t);   // "bool", "u8", ..., "f16", "bf16", "f32", "f64"
bool is_float_dtype(DType t);           // f16, bf16, f32, f64
bool is_integer_dtype(DType t);         // bool and the integer types

// What keeps a view's bytes alive: a file mapping (tensor_file.cpp) or a buffer the readers
// filled (an inflated .npz entry). Tensors viewing it hold it through a shared_ptr, so a
// tensor kept after its map, file or archive is gone still reads valid bytes.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // A reader is done with `part` (bytes of this source) for now. A file mapping gives the
  // pages under it back to the kernel so that converted data does not stay in the process's
  // resident set; reading them again later is still allowed (they come back from the file).
  // Memory the process filled itself keeps its pages.
  virtual void release(std::span<const uint8_t> part) const noexcept { (void)part; }
  // Whether the bytes are a mapping of a file (not memory this process filled).
  virtual bool maps_file() const noexcept { return false; }
};

struct Tensor {
  std::string name;
  std::string file;  // the file it was read from (for messages); empty when built in memory
  DType dtype = DType::f32;
  std::vector<int64_t> shape;  // row-major; [] is a scalar (one element)

  int64_t element_count() const;  // product of shape (1 for a scalar)
  Where where() const { return Where{file, name}; }

  // The bytes, little-endian; element_count() * dtype_size(dtype) of them in a well-formed
  // tensor (the readers check; the accessors below check again). Every reader goes through
  // this, owned or viewed alike. Copies of a tensor share its bytes (they are immutable).
  std::span<const uint8_t> bytes() const { return bytes_; }
  // The bytes, writable: a view, or bytes still shared with a copy of this tensor, is first
  // copied into bytes of this tensor's own (so a copy never sees the write).
  std::span<uint8_t> mutable_bytes();
  // Owns `bytes` from now on.
  void set_bytes(std::vector<uint8_t> bytes);
  // Views `bytes`, which `source` keeps alive (a null source is not a view: the bytes are
  // copied, for a caller whose memory may go away).
  void set_view(std::span<const uint8_t> bytes, std::shared_ptr<const ByteSource> source);
  // Whether the bytes are a view of a mapped file (load_tensor_file on a stored entry).
  bool maps_file() const { return source_ != nullptr && source_->maps_file(); }
  // Done with `part` of bytes() for now (ByteSource::release); a no-op for owned bytes.
  void release(std::span<const uint8_t> part) const {
    if (source_ != nullptr) source_->release(part);
  }

 private:
  std::shared_ptr<std::vector<uint8_t>> owned_;  // owned bytes, or null for a view
  std::shared_ptr<const ByteSource> source_;     // a view's keep-alive, or null when owned
  std::span<const uint8_t> bytes_;
};

// Tensors of one file by name (names are unique within a file).
using TensorMap = std::map<std::string, Tensor>;

// The number of elements of `shape`, checked: every dimension >= 0 and the byte count
// element_count * elem_size at most max_bytes (so no product overflows int64 and no
// allocation can exceed what the file holds). Fails through `where` with field `field`.
int64_t checked_element_count(const std::vector<int64_t>& shape, size_t elem_size,
                              uint64_t max_bytes, const Where& where, const std::string& field);

// "[2, 3, 4]"
std::string shape_string(const std::vector<int64_t>& shape);

// Builders for in-memory tensors (writers, tests). The value count must match the shape.
Tensor make_tensor(std::string name, DType dtype, std::vector<int64_t> shape,
                   const std::vector<double>& values);
// A tensor of a format's bit patterns: dtype f32 for fp32, bf16 for bf16, f16 for fp16 (values
// held as f's bits are copied as they are, a NaN as f's canonical quiet NaN).
Tensor make_format_tensor(std::string name, Format f, std::vector<int64_t> shape, const FormatValues& values);

// Element i as the exact double it denotes (bool -> 0/1; f16/bf16 via spec/format.h's
// decode). 64-bit integers beyond 2^53 in magnitude that a double cannot hold fail.
std::vector<double> to_double(const Tensor& t);
// Every element as a float: float dtypes whose values a float holds exactly (NaN and
// ±Inf pass through), integers of magnitude a float holds exactly. Fails at the first
// element that would round, naming its index and value.
std::vector<float> to_float(const Tensor& t);
// Integer dtypes and bool only (a float tensor fails: "dtype f32 is not an integer
// type"); u64 above 2^63 - 1 fails.
std::vector<int64_t> to_int64(const Tensor& t);

// The tensor's elements as values of the declared format `f` (the explicit
// reinterpretation API for formats NumPy lacks), narrowed to f (spec/format_values.h): a
// 16-bit f's values as their bits, built straight from the file's bytes (no float copy of the
// tensor), any other f's as floats:
//   * float dtypes (f16, bf16, f32, f64): each value must be exact in `f` (NaN passes
//     through, so kernel outputs with NaN still load and can be judged INVALID; a NaN of a
//     wider dtype becomes the quiet NaN of its sign);
//   * i16 or u16 with a 16-bit format (bf16, fp16): each element is a bit pattern of `f`
//     and is taken as it is (it reads as spec/format.h's decode gives it);
//   * anything else fails (e.g. "dtype i32 cannot hold bf16 values"); so does a block-scaled
//     format, whose values need their scales (as_scaled_values).
FormatValues as_format_values(const Tensor& t, Format f);
// The same values as floats (the same checks and messages): for the small fp32 tensors
// (A, D, dt_bias, scales) and for readers that keep floats (Mamba-3's dumps).
std::vector<float> as_format_floats(const Tensor& t, Format f);

// The values of a block-scaled format `f` (spec/format.h int16_scaled): `codes` (dtype i16) holds
// the integer codes, blocks of its last axis; `scales` (any float dtype holding fp32 values) one
// decode scale per block, codes.shape[:-1] elements (shapes are the caller's to check). Each value
// is decode_scaled(f, code, scale): NaN for a code outside the format (-32768), which a kernel's
// output may hold (judged INVALID) and validate() refuses in an input. Fails naming the tensor
// and element for another dtype, or a scale that is not finite or is negative.
std::vector<float> as_scaled_values(const Tensor& codes, const Tensor& scales, Format f);

}  // namespace ssmv::tensor_file
