#include "verify/tensor_file/zip.h"

#include <zlib.h>

#include <algorithm>
#include <limits>
#include <set>
#include <vector>

#include "spec/parallel.h"

namespace ssmv::tensor_file {
namespace {

constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEndSig = 0x06054b50;
constexpr uint32_t kZip64EndSig = 0x06064b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;
constexpr size_t kEndLen = 22, kCentralLen = 46, kLocalLen = 30, kZip64EndLen = 56, kZip64LocatorLen = 20;
// zlib's documented bound: deflate never compresses better than 1032:1.
constexpr uint64_t kMaxDeflateRatio = 1032;

uint64_t le(std::span<const uint8_t> b, size_t at, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | b[at + size_t(i)];
  return v;
}

std::string tensor_of(const std::string& entry) {
  const std::string suffix = ".npy";
  if (entry.size() > suffix.size() && entry.compare(entry.size() - suffix.size(), suffix.size(), suffix) == 0) {
    return entry.substr(0, entry.size() - suffix.size());
  }
  return entry;
}

struct CentralEntry {
  std::string name;
  uint16_t flags = 0, method = 0;
  uint32_t crc = 0;
  uint64_t compressed = 0, uncompressed = 0, local_offset = 0;
};

struct EndRecord {
  uint64_t entries = 0, cd_size = 0, cd_offset = 0;
  uint64_t end_of_data = 0;  // where the central directory must end (the end records start)
};

EndRecord find_end(std::span<const uint8_t> b, const Where& where) {
  const std::string field = "zip end of central directory";
  if (b.size() < kEndLen) where.fail(field, "file of " + std::to_string(b.size()) + " bytes is too short for a zip archive");
  // The record is the last 22 bytes plus a comment of up to 65535 bytes; search backwards
  // for a signature whose comment length reaches exactly the end of the file.
  size_t at = b.size() - kEndLen;
  const size_t lowest = b.size() > kEndLen + 65535 ? b.size() - kEndLen - 65535 : 0;
  while (true) {
    if (le(b, at, 4) == kEndSig && at + kEndLen + le(b, at + 20, 2) == b.size()) break;
    if (at == lowest) where.fail(field, "not found (not a zip archive, or a truncated one)");
    --at;
  }
  const uint64_t disk = le(b, at + 4, 2), cd_disk = le(b, at + 6, 2);
  const uint64_t on_disk = le(b, at + 8, 2);
  EndRecord e{le(b, at + 10, 2), le(b, at + 12, 4), le(b, at + 16, 4), at};
  if (disk != 0 || cd_disk != 0 || on_disk != e.entries) {
    where.fail(field, "multi-disk archives are not supported");
  }
  if (e.entries != 0xFFFF && e.cd_size != 0xFFFFFFFF && e.cd_offset != 0xFFFFFFFF) return e;

  // ZIP64: a locator just before the end record points to the ZIP64 end record.
  const std::string f64 = "zip64 end of central directory";
  if (at < kZip64LocatorLen || le(b, at - kZip64LocatorLen, 4) != kZip64LocatorSig) {
    where.fail(f64, "the end record has ZIP64 markers (0xFFFF...) but no ZIP64 locator precedes it");
  }
  const size_t loc = at - kZip64LocatorLen;
  const uint64_t rec = le(b, loc + 8, 8);
  if (le(b, loc + 4, 4) != 0 || le(b, loc + 16, 4) != 1) where.fail(f64, "multi-disk archives are not supported");
  if (rec > loc || loc - rec < kZip64EndLen || le(b, size_t(rec), 4) != kZip64EndSig) {
    where.fail(f64, "locator points to offset " + std::to_string(rec) + ", where no ZIP64 end record lies");
  }
  const size_t r = size_t(rec);
  if (le(b, r + 16, 4) != 0 || le(b, r + 20, 4) != 0 || le(b, r + 24, 8) != le(b, r + 32, 8)) {
    where.fail(f64, "multi-disk archives are not supported");
  }
  return EndRecord{le(b, r + 32, 8), le(b, r + 40, 8), le(b, r + 48, 8), rec};
}

// Replaces 0xFFFFFFFF fields of a central entry by the ZIP64 extra field's values, which
// appear in the order: uncompressed size, compressed size, local header offset.
void apply_zip64_extra(CentralEntry& e, std::span<const uint8_t> extra, const Where& where, const std::string& field) {
  const bool need_u = e.uncompressed == 0xFFFFFFFF, need_c = e.compressed == 0xFFFFFFFF,
             need_o = e.local_offset == 0xFFFFFFFF;
  size_t at = 0;
  bool found = false;
  while (extra.size() - at >= 4) {
    const uint64_t id = le(extra, at, 2), len = le(extra, at + 2, 2);
    if (len > extra.size() - at - 4) where.fail(field, "extra field 0x" + std::to_string(id) + " runs past the extra data");
    if (id == 0x0001) {
      found = true;
      size_t p = at + 4;
      const size_t end = p + size_t(len);
      auto take = [&](uint64_t& v, bool need) {
        if (!need) return;
        if (end - p < 8) where.fail(field, "ZIP64 extra field is too short for the values it must hold");
        v = le(extra, p, 8);
        p += 8;
      };
      take(e.uncompressed, need_u);
      take(e.compressed, need_c);
      take(e.local_offset, need_o);
    }
    at += 4 + size_t(len);
  }
  if (at != extra.size()) where.fail(field, "extra data ends inside a field header");
  if ((need_u || need_c || need_o) && !found) {
    where.fail(field, "sizes or offset are 0xFFFFFFFF but there is no ZIP64 extra field");
  }
}

std::vector<CentralEntry> read_central_directory(std::span<const uint8_t> b, const EndRecord& end, const Where& where) {
  const std::string field = "zip central directory";
  if (end.cd_offset > end.end_of_data || end.cd_size != end.end_of_data - end.cd_offset) {
    where.fail(field, "offset " + std::to_string(end.cd_offset) + " and size " + std::to_string(end.cd_size) +
                          " do not end where the end record begins (byte " + std::to_string(end.end_of_data) + ")");
  }
  // Each entry takes at least 46 bytes: this bounds the count before anything is reserved.
  if (end.entries > end.cd_size / kCentralLen) {
    where.fail(field, std::to_string(end.entries) + " entries cannot fit in " + std::to_string(end.cd_size) + " bytes");
  }
  std::vector<CentralEntry> out;
  out.reserve(size_t(end.entries));
  size_t at = size_t(end.cd_offset);
  const size_t stop = size_t(end.end_of_data);
  for (uint64_t i = 0; i < end.entries; ++i) {
    const std::string fe = "zip central directory entry " + std::to_string(i);
    if (stop - at < kCentralLen) where.fail(fe, "runs past the end of the central directory");
    if (le(b, at, 4) != kCentralSig) where.fail(fe, "bad signature (expected PK\\1\\2)");
    CentralEntry e;
    e.flags = uint16_t(le(b, at + 8, 2));
    e.method = uint16_t(le(b, at + 10, 2));
    e.crc = uint32_t(le(b, at + 16, 4));
    e.compressed = le(b, at + 20, 4);
    e.uncompressed = le(b, at + 24, 4);
    const size_t name_len = size_t(le(b, at + 28, 2)), extra_len = size_t(le(b, at + 30, 2)),
                 comment_len = size_t(le(b, at + 32, 2));
    const uint64_t start_disk = le(b, at + 34, 2);
    e.local_offset = le(b, at + 42, 4);
    if (stop - at - kCentralLen < name_len + extra_len + comment_len) {
      where.fail(fe, "name, extra and comment run past the end of the central directory");
    }
    e.name.assign(reinterpret_cast<const char*>(b.data() + at + kCentralLen), name_len);
    const Where we = where.with_tensor(tensor_of(e.name));
    apply_zip64_extra(e, b.subspan(at + kCentralLen + name_len, extra_len), we, "zip central directory entry");
    if (start_disk != 0 && start_disk != 0xFFFF) we.fail("zip central directory entry", "multi-disk archives are not supported");
    out.push_back(std::move(e));
    at += kCentralLen + name_len + extra_len + comment_len;
  }
  if (at != stop) {
    where.fail(field, std::to_string(stop - at) + " bytes after the last of its " + std::to_string(end.entries) + " entries");
  }
  return out;
}

std::vector<uint8_t> inflate_raw(std::span<const uint8_t> in, uint64_t out_size, const Where& where) {
  const std::string field = "zip data";
  std::vector<uint8_t> out(static_cast<size_t>(out_size));
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) where.fail(field, "zlib inflateInit2 failed");
  // zlib counts in 32-bit uInt: feed and drain in chunks of at most 1 GiB.
  constexpr size_t kChunk = size_t(1) << 30;
  size_t in_at = 0, out_at = 0;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (z.avail_in == 0 && in_at < in.size()) {
      const size_t n = std::min(kChunk, in.size() - in_at);
      z.next_in = const_cast<Bytef*>(in.data() + in_at);
      z.avail_in = uInt(n);
      in_at += n;
    }
    if (z.avail_out == 0 && out_at < out.size()) {
      const size_t n = std::min(kChunk, out.size() - out_at);
      z.next_out = out.data() + out_at;
      z.avail_out = uInt(n);
      out_at += n;
    }
    const bool no_room = z.avail_out == 0;
    uint8_t probe = 0;
    if (no_room) {  // all declared bytes produced: anything more means the size was wrong
      z.next_out = &probe;
      z.avail_out = 1;
    }
    rc = inflate(&z, Z_NO_FLUSH);
    if (no_room && z.avail_out == 0) {
      inflateEnd(&z);
      where.fail(field, "inflates to more than the declared " + std::to_string(out_size) + " bytes");
    }
    if (no_room) z.avail_out = 0;
    if (rc == Z_BUF_ERROR && z.avail_in == 0 && in_at == in.size()) {
      inflateEnd(&z);
      where.fail(field, "deflate stream is truncated (ends before its last block)");
    }
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
      const std::string msg = z.msg ? z.msg : "error " + std::to_string(rc);
      inflateEnd(&z);
      where.fail(field, "corrupt deflate stream: " + msg);
    }
  }
  const uint64_t produced = z.total_out;
  const uint64_t leftover = uint64_t(z.avail_in) + (in.size() - in_at);
  inflateEnd(&z);
  if (produced != out_size) {
    where.fail(field, "inflates to " + std::to_string(produced) + " bytes, the directory declares " + std::to_string(out_size));
  }
  if (leftover != 0) where.fail(field, std::to_string(leftover) + " bytes after the end of the deflate stream");
  return out;
}

// The CRC-32 of `data`, in 4 MiB chunks (zlib counts in 32-bit uInt) summed on the process's
// worker threads (spec/parallel.h) and joined in order with crc32_combine, each released to
// `source` once summed: checking a stored entry of a mapped file then keeps about one chunk per
// worker of it resident, not the whole entry, until its tensor is converted.
uint32_t crc_of(std::span<const uint8_t> data, const ByteSource* source) {
  constexpr size_t kChunk = size_t(4) << 20;
  const int64_t chunks = int64_t((data.size() + kChunk - 1) / kChunk);
  std::vector<uLong> part(static_cast<size_t>(chunks));
  for_each_task(chunks, process_threads(), [&](int64_t k, int64_t) {
    const auto chunk = data.subspan(size_t(k) * kChunk, std::min(kChunk, data.size() - size_t(k) * kChunk));
    part[size_t(k)] = crc32(crc32(0L, Z_NULL, 0), chunk.data(), uInt(chunk.size()));
    if (source != nullptr) source->release(chunk);
  });
  uLong crc = crc32(0L, Z_NULL, 0);
  for (int64_t k = 0; k < chunks; ++k) {
    crc = crc32_combine(crc, part[size_t(k)], z_off_t(std::min(kChunk, data.size() - size_t(k) * kChunk)));
  }
  return uint32_t(crc);
}

// The buffer a deflated entry is inflated into, kept alive by the tensor that views it.
struct InflatedBytes : ByteSource {
  std::vector<uint8_t> bytes;
};

void put(std::vector<uint8_t>& out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out.push_back(uint8_t(v >> (8 * i)));
}

}  // namespace

std::vector<ZipEntryView> read_zip(std::span<const uint8_t> b, const Where& where,
                                   const std::shared_ptr<const ByteSource>& source) {
  const EndRecord end = find_end(b, where);
  const std::vector<CentralEntry> central = read_central_directory(b, end, where);
  std::set<std::string> names;
  std::vector<uint64_t> data_at(central.size());
  std::vector<std::pair<uint64_t, uint64_t>> ranges;  // [local header, end of data) of each entry
  // Pass 1: check every entry's structure, and that no two entries share bytes, before
  // anything is inflated (shared bytes would let a small file inflate many times over).
  for (size_t i = 0; i < central.size(); ++i) {
    const CentralEntry& e = central[i];
    const Where we = where.with_tensor(tensor_of(e.name));
    if (!names.insert(e.name).second) we.fail("zip central directory", "duplicate entry name '" + e.name + "'");
    if (e.flags & 0x1) we.fail("zip central directory entry", "encrypted entries are not supported");
    if (e.method != 0 && e.method != 8) {
      we.fail("zip central directory entry", "compression method " + std::to_string(e.method) +
                                                 " is not supported (0 stored and 8 deflate are)");
    }
    if (e.method == 0 && e.compressed != e.uncompressed) {
      we.fail("zip central directory entry", "stored entry with compressed size " + std::to_string(e.compressed) +
                                                 " != uncompressed size " + std::to_string(e.uncompressed));
    }
    if (e.method == 8 && e.uncompressed / kMaxDeflateRatio > e.compressed) {
      we.fail("zip central directory entry", "uncompressed size " + std::to_string(e.uncompressed) +
                                                 " exceeds deflate's maximum ratio 1032:1 over " +
                                                 std::to_string(e.compressed) + " compressed bytes");
    }
    // Local header: within the data area (before the central directory), same name and method.
    const std::string fl = "zip local header";
    if (e.local_offset > end.cd_offset || end.cd_offset - e.local_offset < kLocalLen) {
      we.fail(fl, "offset " + std::to_string(e.local_offset) + " leaves no room for a local header before the central directory");
    }
    const size_t lo = size_t(e.local_offset);
    if (le(b, lo, 4) != kLocalSig) we.fail(fl, "bad signature at offset " + std::to_string(lo) + " (expected PK\\3\\4)");
    const uint64_t method = le(b, lo + 8, 2);
    const size_t name_len = size_t(le(b, lo + 26, 2)), extra_len = size_t(le(b, lo + 28, 2));
    if (end.cd_offset - lo - kLocalLen < name_len + extra_len) we.fail(fl, "name and extra run into the central directory");
    const std::string local_name(reinterpret_cast<const char*>(b.data() + lo + kLocalLen), name_len);
    if (local_name != e.name) we.fail(fl, "name '" + local_name + "' differs from the central directory's '" + e.name + "'");
    if (method != e.method) we.fail(fl, "method " + std::to_string(method) + " differs from the central directory's " + std::to_string(e.method));
    data_at[i] = lo + kLocalLen + name_len + extra_len;
    if (e.compressed > end.cd_offset - data_at[i]) {
      we.fail("zip data", std::to_string(e.compressed) + " bytes at offset " + std::to_string(data_at[i]) +
                              " run into the central directory (truncated archive?)");
    }
    ranges.emplace_back(lo, data_at[i] + e.compressed);
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) {
    if (ranges[i].first < ranges[i - 1].second) {
      where.fail("zip data", "entries at offsets " + std::to_string(ranges[i - 1].first) + " and " +
                                 std::to_string(ranges[i].first) + " overlap");
    }
  }
  // Pass 2: extract. Entries are disjoint, so all outputs together stay below 1032 times
  // the file size.
  std::vector<ZipEntryView> out;
  out.reserve(central.size());
  for (size_t i = 0; i < central.size(); ++i) {
    const CentralEntry& e = central[i];
    const Where we = where.with_tensor(tensor_of(e.name));
    const auto data = b.subspan(size_t(data_at[i]), size_t(e.compressed));
    ZipEntryView z;
    z.name = e.name;
    if (e.method == 0) {  // stored: the entry is the archive's bytes, not a copy
      z.data = data;
      z.source = source;
    } else {
      auto inflated = std::make_shared<InflatedBytes>();
      inflated->bytes = inflate_raw(data, e.uncompressed, we);
      if (source != nullptr) source->release(data);  // the compressed bytes are done with
      z.data = inflated->bytes;
      z.source = std::move(inflated);
    }
    if (crc_of(z.data, z.source.get()) != e.crc) we.fail("zip data", "CRC-32 mismatch (corrupt entry)");
    out.push_back(std::move(z));
  }
  return out;
}

std::vector<uint8_t> write_zip_stored(const std::vector<ZipEntry>& entries, const Where& where) {
  constexpr uint64_t kLimit = 0xFFFFFFFE;  // beyond this the format needs ZIP64 records
  constexpr uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;  // 1980-01-01
  std::vector<uint8_t> out, central;
  std::set<std::string> names;
  for (const ZipEntry& e : entries) {
    const Where we = where.with_tensor(tensor_of(e.name));
    if (!names.insert(e.name).second) we.fail("zip entry", "duplicate entry name '" + e.name + "'");
    if (e.name.size() > 0xFFFF) we.fail("zip entry", "name longer than 65535 bytes");
    if (e.data.size() > kLimit || out.size() > kLimit) {
      we.fail("zip entry", "the archive would exceed 4 GiB, which needs ZIP64 (not written; use .safetensors)");
    }
    const bool utf8 = std::any_of(e.name.begin(), e.name.end(), [](char c) { return uint8_t(c) >= 0x80; });
    const uint16_t flags = utf8 ? 0x0800 : 0;  // bit 11: the name is UTF-8
    const uint32_t crc = crc_of(e.data, nullptr);
    const uint64_t offset = out.size();
    put(out, kLocalSig, 4);
    put(out, 20, 2);  // version needed: 2.0
    put(out, flags, 2);
    put(out, 0, 2);  // stored
    put(out, 0, 2);  // time 00:00:00
    put(out, kDosDate, 2);
    put(out, crc, 4);
    put(out, e.data.size(), 4);
    put(out, e.data.size(), 4);
    put(out, e.name.size(), 2);
    put(out, 0, 2);
    out.insert(out.end(), e.name.begin(), e.name.end());
    out.insert(out.end(), e.data.begin(), e.data.end());

    put(central, kCentralSig, 4);
    put(central, 20, 2);  // made by: MS-DOS, version 2.0
    put(central, 20, 2);
    put(central, flags, 2);
    put(central, 0, 2);
    put(central, 0, 2);
    put(central, kDosDate, 2);
    put(central, crc, 4);
    put(central, e.data.size(), 4);
    put(central, e.data.size(), 4);
    put(central, e.name.size(), 2);
    put(central, 0, 2);  // extra
    put(central, 0, 2);  // comment
    put(central, 0, 2);  // disk
    put(central, 0, 2);  // internal attributes
    put(central, 0, 4);  // external attributes
    put(central, offset, 4);
    central.insert(central.end(), e.name.begin(), e.name.end());
  }
  if (entries.size() >= 0xFFFF || out.size() + central.size() > kLimit) {
    where.fail("zip entry", "the archive would need ZIP64 (too many or too large entries; use .safetensors)");
  }
  const uint64_t cd_offset = out.size();
  out.insert(out.end(), central.begin(), central.end());
  put(out, kEndSig, 4);
  put(out, 0, 2);
  put(out, 0, 2);
  put(out, entries.size(), 2);
  put(out, entries.size(), 2);
  put(out, central.size(), 4);
  put(out, cd_offset, 4);
  put(out, 0, 2);
  return out;
}

}  // namespace ssmv::tensor_file
