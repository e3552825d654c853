// The ZIP archive subset that .npz files use (PKWARE APPNOTE 6.3): local headers, the
// central directory, ZIP64 records and extra fields (np.savez writes every entry with
// force_zip64=True), entries stored (method 0, np.savez) or deflated (method 8,
// np.savez_compressed, inflated with zlib). The central directory is authoritative; each
// entry's local header must agree with it on the name and the method. Checked: record
// signatures, every offset and length against the file, entries not overlapping one
// another nor the central directory, CRC-32 of every entry, exact inflated sizes, and
// declared sizes against deflate's maximum ratio of 1032:1 (so a hostile size field
// cannot make us allocate more than 1032 times the file size). Not supported (clear
// errors): encryption, multi-disk archives, other compression methods.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "verify/tensor_file/tensor.h"

namespace ssmv::tensor_file {

// An entry to write.
struct ZipEntry {
  std::string name;           // the name stored in the archive, e.g. "dt.npy"
  std::vector<uint8_t> data;  // uncompressed contents
};

// An entry read: its uncompressed contents and what keeps them alive. A stored entry is a
// view into the archive's bytes (with the archive's source, null when the archive is the
// caller's memory); a deflated one is inflated into a buffer of its own, its source.
struct ZipEntryView {
  std::string name;
  std::span<const uint8_t> data;
  std::shared_ptr<const ByteSource> source;
};

// All entries of the archive, in central-directory order, every entry's CRC-32 checked.
// `source`, when given, keeps `bytes` alive; the pages of each entry are released to it
// (ByteSource::release) once its CRC is checked or it is inflated. Errors name where.file,
// the entry (as where.tensor, minus its ".npy") and the structure ("zip end of central
// directory", "zip central directory entry 3", "zip local header", "zip data").
std::vector<ZipEntryView> read_zip(std::span<const uint8_t> bytes, const Where& where,
                                   const std::shared_ptr<const ByteSource>& source = nullptr);

// A zip archive of stored (uncompressed) entries, with fixed timestamps (1980-01-01) so
// the same entries always give the same bytes. Entries must be below 4 GiB in all
// (the writer does not produce ZIP64 records) and names unique.
std::vector<uint8_t> write_zip_stored(const std::vector<ZipEntry>& entries, const Where& where);

}  // namespace ssmv::tensor_file
