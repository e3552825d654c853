#include "verify/tensor_file/tensor_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "verify/json/json.h"
#include "verify/tensor_file/npy.h"
#include "verify/tensor_file/safetensors.h"
#include "verify/tensor_file/zip.h"

namespace ssmv::tensor_file {
namespace {

// Tensor data is little-endian in every supported file and in memory: a big-endian host
// would need byte swaps everywhere, so it is refused at compile time.
static_assert(std::endian::native == std::endian::little, "ssmv tensor files assume a little-endian host");

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string errno_text() { return std::strerror(errno); }

constexpr const char* kMetadataEntry = "__metadata__";

// An .npz's metadata entry: a 1-D uint8 (or int8) array of the UTF-8 bytes of a JSON
// object whose values are strings.
std::map<std::string, std::string> npz_metadata(const Tensor& t) {
  const Where w = t.where();
  if ((t.dtype != DType::u8 && t.dtype != DType::i8) || t.shape.size() != 1) {
    w.fail("metadata", "expected a 1-D uint8 array of JSON text, got dtype " + std::string(dtype_name(t.dtype)) +
                           " shape " + shape_string(t.shape));
  }
  const std::string text(t.bytes().begin(), t.bytes().end());
  json::Value v;
  try {
    v = json::parse(text);
  } catch (const json::ParseError& e) {
    w.fail("metadata", std::string("JSON: ") + e.what());
  }
  if (!v.is_object()) w.fail("metadata", "is not a JSON object");
  std::map<std::string, std::string> out;
  for (const auto& [k, value] : v.get_ref<const json::Value::object_t&>()) {
    if (!value.is_string()) w.fail("metadata", "value of '" + k + "' is not a string");
    out[k] = value.get<std::string>();
  }
  return out;
}

// A whole file mapped read-only (PROT_READ, MAP_PRIVATE): the tensors of a stored .npz entry,
// a .npy or a .safetensors view their bytes here, so reading copies nothing between the file
// and the converted floats, and the kernel fills these pages from the page cache instead of
// zeroing fresh ones for copies.
//
// Releasing pages (release(), after an entry's CRC and after each stretch of a conversion)
// is madvise(MADV_DONTNEED). On a private file mapping that is never written — PROT_READ
// makes writing impossible, so no page was ever copied on write — it only drops the page
// table entries: a later read faults the page back in from the file, with the same bytes.
// So it is safe whoever still views the pages, and it is what keeps the resident set at the
// converted values instead of values plus file. (Chunked pread into a small buffer would
// bound memory too, but copies every byte once more and reads every byte twice from the page
// cache: once for the CRC at load, once for the conversion.)
//
// The bytes are the file's as long as it is not changed in place: a file truncated by
// another process while mapped makes a later read fault (SIGBUS), and one rewritten in place
// may show its new bytes after the CRC was checked. ssmv's writers replace files by rename
// (write_file_atomically), which leaves a mapped inode as it was.
class MappedFile : public ByteSource {
 public:
  MappedFile(void* base, size_t size) : base_(base), size_(size) {}
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile() override { ::munmap(base_, size_); }

  std::span<const uint8_t> bytes() const { return {static_cast<const uint8_t*>(base_), size_}; }
  bool maps_file() const noexcept override { return true; }

  // The pages that `part` touches, rounded out to whole pages within the mapping: a page
  // shared with a neighbouring entry is dropped too, which costs that entry one fault.
  void release(std::span<const uint8_t> part) const noexcept override {
    if (part.empty()) return;
    static const uintptr_t page = uintptr_t(::sysconf(_SC_PAGESIZE));
    const uintptr_t base = reinterpret_cast<uintptr_t>(base_);
    const uintptr_t lo = reinterpret_cast<uintptr_t>(part.data()) & ~(page - 1);
    const uintptr_t hi = std::min(base + size_, (reinterpret_cast<uintptr_t>(part.data()) + part.size() + page - 1) & ~(page - 1));
    if (lo < base || hi <= lo) return;  // not this mapping's bytes (the callers never pass such)
    // A failure leaves the pages resident, which costs memory, never correctness.
    (void)::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
  }

 private:
  void* base_;
  size_t size_;
};

TensorMap parse_with_source(std::span<const uint8_t> bytes, FileKind kind, const std::string& label,
                            std::map<std::string, std::string>* metadata,
                            const std::shared_ptr<const ByteSource>& source) {
  const Where where{label, ""};
  TensorMap out;
  switch (kind) {
    case FileKind::npy: {
      std::string stem = std::filesystem::path(label).stem().string();
      if (stem.empty()) stem = "array";
      Tensor t = parse_npy(bytes, where.with_tensor(stem), source);
      out.emplace(stem, std::move(t));
      return out;
    }
    case FileKind::npz: {
      for (ZipEntryView& e : read_zip(bytes, where, source)) {
        if (!ends_with(e.name, ".npy") || e.name.size() == 4) {
          where.with_tensor(e.name).fail("zip entry", "name '" + e.name + "' is not \"<tensor name>.npy\"");
        }
        const std::string name = e.name.substr(0, e.name.size() - 4);
        Tensor t = parse_npy(e.data, where.with_tensor(name), std::move(e.source));
        if (name == kMetadataEntry) {
          std::map<std::string, std::string> m = npz_metadata(t);
          if (metadata) *metadata = std::move(m);
          continue;
        }
        // read_zip rejects duplicate entry names, and names map one-to-one to tensor names.
        out.emplace(name, std::move(t));
      }
      return out;
    }
    case FileKind::safetensors: return parse_safetensors(bytes, where, metadata, source);
  }
  return out;
}

// The whole file read into memory, for a file that cannot be mapped.
std::vector<uint8_t> read_whole(int fd, size_t size, const Where& where) {
  std::vector<uint8_t> bytes(size);
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t r = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      const std::string why = r < 0 ? errno_text() : "file shrank while being read";
      ::close(fd);
      where.fail("read", why);
    }
    got += size_t(r);
  }
  return bytes;
}

}  // namespace

FileKind detect_kind(const std::string& path, std::span<const uint8_t> head) {
  if (ends_with(path, ".npy")) return FileKind::npy;
  if (ends_with(path, ".npz")) return FileKind::npz;
  if (ends_with(path, ".safetensors")) return FileKind::safetensors;
  if (head.size() >= 6 && std::memcmp(head.data(), "\x93NUMPY", 6) == 0) return FileKind::npy;
  if (head.size() >= 2 && head[0] == 'P' && head[1] == 'K') return FileKind::npz;
  return FileKind::safetensors;
}

TensorMap parse_tensor_bytes(std::span<const uint8_t> bytes, FileKind kind, const std::string& label,
                             std::map<std::string, std::string>* metadata) {
  // No source: the caller's memory may go away, so the tensors copy their bytes.
  return parse_with_source(bytes, kind, label, metadata, nullptr);
}

TensorMap load_tensor_file(const std::string& path, std::map<std::string, std::string>* metadata) {
  const Where where{path, ""};
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) where.fail("open", errno_text());
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    where.fail("open", "not a regular file");
  }
  const size_t size = size_t(st.st_size);
  // An empty file has nothing to map (mmap refuses length 0); its parse fails on its own.
  void* base = size == 0 ? MAP_FAILED : ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (base == MAP_FAILED) {
    // A file system without mmap (or an empty file): read it into memory, as before mapping.
    const std::vector<uint8_t> bytes = read_whole(fd, size, where);
    ::close(fd);
    return parse_tensor_bytes(bytes, detect_kind(path, bytes), path, metadata);
  }
  ::close(fd);  // the mapping stays valid without the descriptor
  const auto file = std::make_shared<const MappedFile>(base, size);
  // Read front to back (the CRC pass, then the conversions): read-ahead for a file not yet
  // in the page cache.
  (void)::madvise(base, size, MADV_SEQUENTIAL);
  return parse_with_source(file->bytes(), detect_kind(path, file->bytes()), path, metadata, file);
}

void write_file_atomically(const std::string& path, std::span<const uint8_t> bytes) {
  const Where where{path, ""};
  const std::filesystem::path dest(path);
  const std::filesystem::path dir = dest.has_parent_path() ? dest.parent_path() : std::filesystem::path(".");
  // A name no other writer uses (pid and a per-process counter), created exclusively with
  // mode 0644 less the umask, as any new file would get.
  static std::atomic<uint64_t> counter{0};
  std::string tmpl;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    std::string name = dest.filename().string();
    name.insert(name.begin(), '.');
    name += ".tmp." + std::to_string(::getpid()) + '.' + std::to_string(counter++);
    tmpl = (dir / name).string();
    fd = ::open(tmpl.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && (errno != EEXIST || attempt > 100)) {
      where.fail("write", "cannot create a temporary file in " + dir.string() + ": " + errno_text());
    }
  }
  auto abandon = [&](const std::string& what) {
    const std::string why = what + ": " + errno_text();
    ::close(fd);
    ::unlink(tmpl.c_str());
    where.fail("write", why);
  };
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) abandon("writing " + tmpl);
    done += size_t(w);
  }
  if (::fsync(fd) != 0) abandon("fsync " + tmpl);
  if (::close(fd) != 0) {
    const std::string why = errno_text();
    ::unlink(tmpl.c_str());
    where.fail("write", "close " + tmpl + ": " + why);
  }
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    const std::string why = errno_text();
    ::unlink(tmpl.c_str());
    where.fail("write", "rename to the destination: " + why);
  }
}

namespace {

// Runs a writer, naming `path` in its errors (in-memory writers do not know the path).
template <typename Write>
void with_path(const std::string& path, Write write) {
  try {
    write();
  } catch (const TensorFileError& e) {
    if (!e.file().empty() && e.file() == path) throw;
    throw TensorFileError(path, e.tensor(), e.field(), e.detail());
  }
}

}  // namespace

void save_npy(const std::string& path, const Tensor& t) {
  with_path(path, [&] { write_file_atomically(path, write_npy(t)); });
}

void save_npz(const std::string& path, const TensorMap& tensors, const std::map<std::string, std::string>& metadata) {
  with_path(path, [&] {
    std::vector<ZipEntry> entries;
    for (const auto& [name, t] : tensors) {
      if (name.empty()) Where{path, name}.fail("name", "tensor names must not be empty");
      if (name == kMetadataEntry) Where{path, name}.fail("name", "reserved for the file's metadata");
      entries.push_back(ZipEntry{name + ".npy", write_npy(t)});
    }
    if (!metadata.empty()) {
      json::Value members = json::Value::object();
      for (const auto& [k, v] : metadata) members[k] = v;
      const std::string text = json::dump(members);
      Tensor m;
      m.name = kMetadataEntry;
      m.dtype = DType::u8;
      m.shape = {int64_t(text.size())};
      m.set_bytes(std::vector<uint8_t>(text.begin(), text.end()));
      entries.push_back(ZipEntry{std::string(kMetadataEntry) + ".npy", write_npy(m)});
    }
    write_file_atomically(path, write_zip_stored(entries, Where{path, ""}));
  });
}

void save_safetensors(const std::string& path, const TensorMap& tensors,
                      const std::map<std::string, std::string>& metadata) {
  with_path(path, [&] { write_file_atomically(path, write_safetensors(tensors, metadata)); });
}

}  // namespace ssmv::tensor_file
