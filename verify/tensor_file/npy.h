// NumPy .npy images (format versions 1.0, 2.0 and 3.0; numpy/lib/format.py):
//   "\x93NUMPY" major minor, header length (uint16 LE in 1.0, uint32 LE in 2.0/3.0),
//   a Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
//   padded with spaces and '\n', then the raw data.
// Accepted descr: b1, i1, u1, i2, u2, i4, u4, i8, u8, f2, f4, f8 with byte order '<',
// '>' (converted to little-endian) or '|' (one-byte types). fortran_order True is
// accepted and transposed to C order. The data must be exactly element_count * itemsize
// bytes: a short or a long data section is an error, never silently cut or padded.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "verify/tensor_file/tensor.h"

namespace ssmv::tensor_file {

// Parses one .npy image into a tensor named where.tensor (file recorded from where.file).
// Throws TensorFileError with fields "magic", "version", "header length", "header",
// "header field 'descr'|'fortran_order'|'shape'", "data".
// With a `source` keeping `bytes` alive, the tensor views its data in place (no copy) when it
// is little-endian C order; big-endian or Fortran-order data is reordered into bytes the
// tensor owns, and the source's pages are then released. Without a source the data is copied.
Tensor parse_npy(std::span<const uint8_t> bytes, const Where& where,
                 std::shared_ptr<const ByteSource> source = nullptr);

// The .npy image of `t`: version 1.0 (2.0 when the header exceeds 65535 bytes), descr
// '<..', C order, header padded to a multiple of 64 bytes as NumPy does. NumPy has no
// bf16: a bf16 tensor is written as '<u2' holding its bit patterns (read it back with
// as_format_values(t, Format::bf16)).
std::vector<uint8_t> write_npy(const Tensor& t);

}  // namespace ssmv::tensor_file
