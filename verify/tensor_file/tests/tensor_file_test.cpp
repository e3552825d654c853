// Whole files: kind detection, loading from disk, and atomic writes (no partial file, no
// leftover temporary, destination unchanged on failure).
#include "verify/tensor_file/tensor_file.h"

#include <filesystem>

#include "verify/tensor_file/tests/test_util.h"

namespace ssmv::tensor_file {
namespace {

using namespace testing;

TEST(TensorFile, KindComesFromTheExtensionElseTheContent) {
  const Bytes npy = bytes_of(std::string("\x93NUMPY", 6));
  EXPECT_EQ(detect_kind("a.npz", npy), FileKind::npz);
  EXPECT_EQ(detect_kind("a.npy", {}), FileKind::npy);
  EXPECT_EQ(detect_kind("a.safetensors", npy), FileKind::safetensors);
  EXPECT_EQ(detect_kind("dump.bin", npy), FileKind::npy);
  EXPECT_EQ(detect_kind("dump.bin", bytes_of("PK\x03\x04")), FileKind::npz);
  EXPECT_EQ(detect_kind("dump.bin", bytes_of("\x10\0\0\0\0\0\0\0{")), FileKind::safetensors);
}

TEST(TensorFile, SavedFilesLoadBackAndLeaveNoTemporaries) {
  TempDir dir;
  const Tensor t = make_tensor("w", DType::f16, {2}, {1, -0.5});
  save_npy(dir.file("w.npy"), t);
  save_npy(dir.file("w.npy"), t);  // replaces the existing file
  TensorMap m;
  m["w"] = t;
  save_npz(dir.file("m.npz"), m);
  save_safetensors(dir.file("m.safetensors"), m);
  for (const char* f : {"w.npy", "m.npz", "m.safetensors"}) {
    const TensorMap back = load_tensor_file(dir.file(f));
    ASSERT_EQ(back.count("w"), 1u) << f;
    EXPECT_EQ(bytes_of(back.at("w")), bytes_of(t)) << f;
    EXPECT_EQ(back.at("w").file, dir.file(f));
  }
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path)) {
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
    ++files;
  }
  EXPECT_EQ(files, 3u);
}

TEST(TensorFile, AFailedWriteLeavesTheDestinationAsItWas) {
  TempDir dir;
  TensorMap good;
  good["a"] = make_tensor("a", DType::f32, {1}, {1});
  save_npz(dir.file("keep.npz"), good);
  const Bytes before = read_bytes(dir.file("keep.npz"));
  TensorMap bad;
  bad[""] = make_tensor("", DType::f32, {1}, {1});
  EXPECT_EQ(error_of([&] { save_npz(dir.file("keep.npz"), bad); }),
            dir.file("keep.npz") + ": name: tensor names must not be empty");
  EXPECT_EQ(read_bytes(dir.file("keep.npz")), before);
  const std::string nowhere = dir.file("no/such/dir/x.npz");
  EXPECT_EQ(error_of([&] { save_npz(nowhere, good); }),
            nowhere + ": write: cannot create a temporary file in " + dir.file("no/such/dir") +
                ": No such file or directory");
}

TEST(TensorFile, UnreadableFilesAreNamed) {
  TempDir dir;
  EXPECT_EQ(error_of([&] { load_tensor_file(dir.file("missing.npz")); }),
            dir.file("missing.npz") + ": open: No such file or directory");
  EXPECT_EQ(error_of([&] { load_tensor_file(dir.path.string()); }), dir.path.string() + ": open: not a regular file");
  // An empty .npz is a truncated zip.
  write_file_atomically(dir.file("empty.npz"), Bytes{});
  EXPECT_EQ(error_of([&] { load_tensor_file(dir.file("empty.npz")); }),
            dir.file("empty.npz") + ": zip end of central directory: file of 0 bytes is too short for a zip archive");
}

}  // namespace
}  // namespace ssmv::tensor_file
