#include "verify/tensor_file/tensor_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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
  const std::string text(t.data.begin(), t.data.end());
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
  const Where where{label, ""};
  TensorMap out;
  switch (kind) {
    case FileKind::npy: {
      std::string stem = std::filesystem::path(label).stem().string();
      if (stem.empty()) stem = "array";
      Tensor t = parse_npy(bytes, where.with_tensor(stem));
      out.emplace(stem, std::move(t));
      return out;
    }
    case FileKind::npz: {
      for (ZipEntry& e : read_zip(bytes, where)) {
        if (!ends_with(e.name, ".npy") || e.name.size() == 4) {
          where.with_tensor(e.name).fail("zip entry", "name '" + e.name + "' is not \"<tensor name>.npy\"");
        }
        const std::string name = e.name.substr(0, e.name.size() - 4);
        Tensor t = parse_npy(e.data, where.with_tensor(name));
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
    case FileKind::safetensors: return parse_safetensors(bytes, where, metadata);
  }
  return out;
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
  std::vector<uint8_t> bytes(size_t(st.st_size));
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
  ::close(fd);
  return parse_tensor_bytes(bytes, detect_kind(path, bytes), path, metadata);
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
      m.data.assign(text.begin(), text.end());
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
