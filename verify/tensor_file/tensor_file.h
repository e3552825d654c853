// Whole tensor files: load a .npy, .npz or .safetensors file into a name -> tensor map,
// and write them atomically. The entry point for `ssmv check` and for reports.
//
//   .npy          one tensor, named after the file's stem ("dt.npy" -> "dt")
//   .npz          a zip of "<name>.npy" entries (np.savez stored, np.savez_compressed deflate)
//   .safetensors  a JSON header and a byte buffer
//
// The kind comes from the extension; a file with another extension is recognised by its
// first bytes ("\x93NUMPY", "PK", or else safetensors). Every failure is a
// TensorFileError naming the file, the tensor and the field (see tensor.h).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "verify/tensor_file/tensor.h"

namespace ssmv::tensor_file {

enum class FileKind : uint8_t { npy, npz, safetensors };

// By extension, else by content. `label` names the file in messages.
FileKind detect_kind(const std::string& path, std::span<const uint8_t> head);

// Parses an in-memory file image; `label` is the file name used in messages (for a .npy
// image, its stem also names the tensor). .npz entries not ending in ".npy" and entries
// with an empty name are errors; duplicate names are errors.
// The file's metadata (docs/tensor-files.md "Self-describing dumps"): a safetensors
// header's "__metadata__" strings, or an .npz entry "__metadata__.npy" (1-D uint8: the
// UTF-8 bytes of a JSON object of strings), goes to *metadata when given; that entry is never
// a tensor of the map.
TensorMap parse_tensor_bytes(std::span<const uint8_t> bytes, FileKind kind, const std::string& label,
                             std::map<std::string, std::string>* metadata = nullptr);

// Reads and parses a file. The file's size is taken before reading, so a file that is
// not regular or cannot be read is an error, not a partial map. The file is mapped
// read-only: tensors of .npy files, stored .npz entries and .safetensors view their bytes in
// the mapping (Tensor::maps_file), which they keep alive, so the data is copied once, by
// the conversion to values; deflated entries are inflated into buffers of their own. A file
// that cannot be mapped is read into memory instead. Parsed like parse_tensor_bytes, with
// the same checks and messages.
TensorMap load_tensor_file(const std::string& path, std::map<std::string, std::string>* metadata = nullptr);

// Writers. Each writes a temporary file in the destination's directory and renames it
// over the destination, so a reader never sees a partial file and a failure leaves the
// destination as it was.
void save_npy(const std::string& path, const Tensor& t);
// Stored entries "<name>.npy", and "__metadata__.npy" when `metadata` is not empty.
void save_npz(const std::string& path, const TensorMap& tensors,
              const std::map<std::string, std::string>& metadata = {});
void save_safetensors(const std::string& path, const TensorMap& tensors,
                      const std::map<std::string, std::string>& metadata = {});

// The atomic write under the writers above (also for reports): temp file + fsync + rename.
void write_file_atomically(const std::string& path, std::span<const uint8_t> bytes);

}  // namespace ssmv::tensor_file
