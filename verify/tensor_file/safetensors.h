// The safetensors format (huggingface/safetensors, docs "format"):
//   8 bytes: N, the header length (uint64 LE); N bytes: a UTF-8 JSON object
//   {"name": {"dtype": "BF16", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
//    "__metadata__": {"key": "value"}} (optionally padded with trailing spaces);
//   then the byte buffer, little-endian, C order; offsets are relative to its start.
// Accepted dtypes: BOOL U8 I8 I16 U16 I32 U32 I64 U64 F16 BF16 F32 F64 (F8_* and others are
// rejected by name). Checked as the reference implementation does: every offset pair within
// the buffer, end - begin = elements * itemsize, and the tensors, sorted by offset, tile
// the buffer exactly (no overlap, no hole, nothing left over); headers of at most 100 MB
// (the reference implementation's limit), shapes of at most 64 dimensions.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "verify/tensor_file/tensor.h"

namespace ssmv::tensor_file {

// The tensors of a safetensors image; its "__metadata__" strings go to *metadata when
// given. Throws TensorFileError with fields "header size", "header" (JSON syntax, with
// line and column), "header field 'dtype'|'shape'|'data_offsets'", "__metadata__", "data".
// With a `source` keeping `bytes` alive, the tensors view their data in the buffer (no
// copy); without one they copy it.
TensorMap parse_safetensors(std::span<const uint8_t> bytes, const Where& where,
                            std::map<std::string, std::string>* metadata = nullptr,
                            const std::shared_ptr<const ByteSource>& source = nullptr);

// The safetensors image of `tensors` (in name order, consecutive, header padded with
// spaces to a multiple of 8 bytes so the buffer is 8-byte aligned).
std::vector<uint8_t> write_safetensors(const TensorMap& tensors,
                                       const std::map<std::string, std::string>& metadata = {});

// "BF16" <-> DType. safetensors_dtype_name(DType) is the writer's spelling.
bool parse_safetensors_dtype(const std::string& name, DType& out);
std::string safetensors_dtype_name(DType t);

}  // namespace ssmv::tensor_file
