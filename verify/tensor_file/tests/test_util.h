// Helpers of the tensor-file tests: error capture, fixture paths, byte builders for
// hand-made .npy, zip and safetensors images (so every error case is an explicit byte
// sequence).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>

#include "verify/tensor_file/tensor.h"

namespace ssmv::tensor_file::testing {

using Bytes = std::vector<uint8_t>;

// what() of the TensorFileError that f throws, or a note saying none was thrown.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const TensorFileError& e) {
    return e.what();
  }
  return "<no TensorFileError thrown>";
}

inline std::string fixture(const std::string& name) { return std::string(SSMV_TENSOR_FIXTURES) + "/" + name; }

inline Bytes read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline Bytes bytes_of(const std::string& s) { return Bytes(s.begin(), s.end()); }
// A tensor's bytes as a vector (gtest prints a vector's elements on a mismatch).
inline Bytes bytes_of(const Tensor& t) { return Bytes(t.bytes().begin(), t.bytes().end()); }

inline void put_le(Bytes& out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out.push_back(uint8_t(v >> (8 * i)));
}

inline Bytes concat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// "\x93NUMPY" major.0, the header length in 2 (v1) or 4 bytes, the header text, data.
inline Bytes npy_image(const std::string& header, const Bytes& data, int major = 1) {
  Bytes out = bytes_of(std::string("\x93NUMPY", 6));
  out.push_back(uint8_t(major));
  out.push_back(0);
  put_le(out, header.size(), major == 1 ? 2 : 4);
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

// Little-endian bytes of a list of floats / of one value of type T.
template <typename T>
Bytes le_bytes(std::initializer_list<T> values) {
  Bytes out;
  for (T v : values) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    out.insert(out.end(), p, p + sizeof(T));
  }
  return out;
}

// The safetensors image: 8-byte header length, header text, buffer.
inline Bytes safetensors_image(const std::string& header, const Bytes& buffer) {
  Bytes out;
  put_le(out, header.size(), 8);
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), buffer.begin(), buffer.end());
  return out;
}

// ZIP records (APPNOTE 4.3.7, 4.3.12, 4.3.16), fields as given, times zero.
inline Bytes zip_local(const std::string& name, uint16_t method, uint32_t crc, uint32_t csize, uint32_t usize,
                       const Bytes& extra = {}) {
  Bytes b;
  put_le(b, 0x04034b50, 4);
  put_le(b, 20, 2);
  put_le(b, 0, 2);
  put_le(b, method, 2);
  put_le(b, 0, 4);
  put_le(b, crc, 4);
  put_le(b, csize, 4);
  put_le(b, usize, 4);
  put_le(b, name.size(), 2);
  put_le(b, extra.size(), 2);
  b.insert(b.end(), name.begin(), name.end());
  b.insert(b.end(), extra.begin(), extra.end());
  return b;
}

inline Bytes zip_central(const std::string& name, uint16_t method, uint32_t crc, uint32_t csize, uint32_t usize,
                         uint32_t offset, const Bytes& extra = {}, uint16_t flags = 0) {
  Bytes b;
  put_le(b, 0x02014b50, 4);
  put_le(b, 20, 2);
  put_le(b, 20, 2);
  put_le(b, flags, 2);
  put_le(b, method, 2);
  put_le(b, 0, 4);
  put_le(b, crc, 4);
  put_le(b, csize, 4);
  put_le(b, usize, 4);
  put_le(b, name.size(), 2);
  put_le(b, extra.size(), 2);
  put_le(b, 0, 2);
  put_le(b, 0, 2);
  put_le(b, 0, 2);
  put_le(b, 0, 4);
  put_le(b, offset, 4);
  b.insert(b.end(), name.begin(), name.end());
  b.insert(b.end(), extra.begin(), extra.end());
  return b;
}

inline Bytes zip_end(uint16_t entries, uint32_t cd_size, uint32_t cd_offset) {
  Bytes b;
  put_le(b, 0x06054b50, 4);
  put_le(b, 0, 4);
  put_le(b, entries, 2);
  put_le(b, entries, 2);
  put_le(b, cd_size, 4);
  put_le(b, cd_offset, 4);
  put_le(b, 0, 2);
  return b;
}

// A temporary folder removed at the end of the test.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path = std::filesystem::temp_directory_path() /
           ("ssmv-tf-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

}  // namespace ssmv::tensor_file::testing
