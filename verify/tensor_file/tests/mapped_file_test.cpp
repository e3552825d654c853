// load_tensor_file maps the file and lets tensors view it: the views must hold exactly the
// bytes an in-memory parse of the same file gives (every kind: .npy, stored and deflated
// .npz, .safetensors), a tensor must stay valid after its map is gone, writing must copy,
// and converted or CRC-checked pages must leave the process's resident set.
#include <fstream>
#include <sstream>
#include <string>

#include "verify/tensor_file/npy.h"
#include "verify/tensor_file/tensor_file.h"
#include "verify/tensor_file/tests/test_util.h"

namespace ssmv::tensor_file {
namespace {

using namespace testing;

// The map load_tensor_file gives and the one parse_tensor_bytes gives from the file's bytes
// in memory hold the same tensors, byte for byte and value for value.
void expect_same_as_in_memory(const std::string& path) {
  std::map<std::string, std::string> meta_mapped, meta_memory;
  const TensorMap mapped = load_tensor_file(path, &meta_mapped);
  const Bytes image = read_bytes(path);
  const TensorMap memory = parse_tensor_bytes(image, detect_kind(path, image), path, &meta_memory);
  EXPECT_EQ(meta_mapped, meta_memory) << path;
  ASSERT_EQ(mapped.size(), memory.size()) << path;
  for (const auto& [name, m] : mapped) {
    ASSERT_EQ(memory.count(name), 1u) << path << " " << name;
    const Tensor& t = memory.at(name);
    EXPECT_EQ(m.dtype, t.dtype) << path << " " << name;
    EXPECT_EQ(m.shape, t.shape) << path << " " << name;
    EXPECT_EQ(m.file, t.file) << path << " " << name;
    EXPECT_EQ(bytes_of(m), bytes_of(t)) << path << " " << name;
    EXPECT_EQ(to_double(m), to_double(t)) << path << " " << name;
    EXPECT_FALSE(t.maps_file()) << "an in-memory parse copies: " << path << " " << name;
  }
}

TEST(MappedFile, ViewsHoldTheBytesOfAnInMemoryParseForEveryKind) {
  // NumPy's own files: stored (np.savez) and deflated (np.savez_compressed) archives with
  // every dtype, Fortran order and big-endian entries; .npy versions 1 to 3.
  for (const char* f : {"numpy_savez.npz", "numpy_savez_compressed.npz", "numpy_problem.npz", "numpy_v1.npy",
                        "numpy_v2.npy", "numpy_v3.npy"}) {
    expect_same_as_in_memory(fixture(f));
  }
  // Ours, with metadata, and a .safetensors (no NumPy fixture exists for it).
  TempDir dir;
  TensorMap m;
  m["a"] = make_tensor("a", DType::f32, {2, 3}, {1, 2, 3, -4, 0.5, 6});
  m["b"] = make_tensor("b", DType::bf16, {3}, {1, -2, 0.25});
  m["c"] = make_tensor("c", DType::i64, {2}, {7, -9});
  save_npz(dir.file("m.npz"), m, {{"ssmv.kernel", "ssu"}});
  save_safetensors(dir.file("m.safetensors"), m, {{"ssmv.kernel", "ssu"}});
  save_npy(dir.file("a.npy"), m.at("a"));
  for (const char* f : {"m.npz", "m.safetensors", "a.npy"}) expect_same_as_in_memory(dir.file(f));
}

TEST(MappedFile, StoredDataIsAViewAndReorderedOrInflatedDataIsOwned) {
  const TensorMap stored = load_tensor_file(fixture("numpy_savez.npz"));
  EXPECT_TRUE(stored.at("f32").maps_file());
  EXPECT_TRUE(stored.at("i64").maps_file());
  EXPECT_FALSE(stored.at("fortran").maps_file()) << "transposed into C order";
  EXPECT_FALSE(stored.at("big_endian").maps_file()) << "byte-swapped";
  const TensorMap deflated = load_tensor_file(fixture("numpy_savez_compressed.npz"));
  EXPECT_FALSE(deflated.at("f32").maps_file()) << "inflated into a buffer of its own";
  EXPECT_TRUE(load_tensor_file(fixture("numpy_v1.npy")).begin()->second.maps_file());
  TempDir dir;
  TensorMap m;
  m["a"] = make_tensor("a", DType::f32, {2}, {1, 2});
  save_safetensors(dir.file("m.safetensors"), m);
  EXPECT_TRUE(load_tensor_file(dir.file("m.safetensors")).at("a").maps_file());
}

TEST(MappedFile, ATensorOutlivesItsMapAndWritingCopies) {
  const Bytes image = read_bytes(fixture("numpy_savez.npz"));
  const TensorMap expected = parse_tensor_bytes(image, FileKind::npz, "x.npz");
  Tensor kept, deflated_kept;
  {
    TensorMap m = load_tensor_file(fixture("numpy_savez.npz"));
    kept = m.at("f32");
    deflated_kept = load_tensor_file(fixture("numpy_savez_compressed.npz")).at("i32");
  }  // the maps, and every other tensor of the mapping and of the inflated archive, are gone
  ASSERT_TRUE(kept.maps_file());
  EXPECT_EQ(bytes_of(kept), bytes_of(expected.at("f32")));
  EXPECT_EQ(to_float(kept), to_float(expected.at("f32")));
  EXPECT_EQ(bytes_of(deflated_kept), bytes_of(expected.at("i32")));

  // A write goes to bytes of the writer's own: the view and other copies keep the file's.
  Tensor copy = kept;
  copy.mutable_bytes()[0] ^= 0xFF;
  EXPECT_FALSE(copy.maps_file());
  EXPECT_TRUE(kept.maps_file());
  EXPECT_EQ(bytes_of(kept), bytes_of(expected.at("f32")));
  EXPECT_NE(bytes_of(copy), bytes_of(kept));
  // Owned bytes shared by copies are copied on write too.
  Tensor owned = make_tensor("o", DType::u8, {2}, {1, 2});
  const Tensor owned_copy = owned;
  owned.mutable_bytes()[0] = 9;
  EXPECT_EQ(bytes_of(owned), (Bytes{9, 2}));
  EXPECT_EQ(bytes_of(owned_copy), (Bytes{1, 2}));
}

// The resident kB of the mapping holding `p` (/proc/self/smaps), or -1 when not found.
long resident_kb_of_mapping(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {  // "lo-hi perms offset dev inode path"
      inside = lo <= at && at < hi;
      continue;
    }
    if (inside && line.rfind("Rss:", 0) == 0) return std::stol(line.substr(4));
  }
  return -1;
}

TEST(MappedFile, CheckedAndConvertedPagesLeaveTheResidentSet) {
  TempDir dir;
  const size_t n = size_t(4) << 20;  // 16 MiB of f32
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i) values[i] = float(i % 1000) * 0.5f;
  TensorMap m;
  m["big"] = make_format_tensor("big", Format::fp32, {int64_t(n)}, values);
  save_npz(dir.file("big.npz"), m);
  const TensorMap loaded = load_tensor_file(dir.file("big.npz"));
  const Tensor& t = loaded.at("big");
  ASSERT_TRUE(t.maps_file());
  const long after_crc = resident_kb_of_mapping(t.bytes().data());
  ASSERT_GE(after_crc, 0) << "no mapping found in /proc/self/smaps";
  EXPECT_LT(after_crc, 6 * 1024) << "the CRC pass keeps at most about one 4 MiB chunk resident";
  uint64_t sum = 0;  // touch every page: the mapping becomes resident
  for (size_t i = 0; i < t.bytes().size(); i += 4096) sum += t.bytes()[i];
  EXPECT_GE(resident_kb_of_mapping(t.bytes().data()), 15 * 1024) << sum;
  EXPECT_EQ(as_format_values(t, Format::fp32), values);
  EXPECT_LT(resident_kb_of_mapping(t.bytes().data()), 6 * 1024) << "converted stretches are released";
  // Released pages read back from the file, unchanged.
  EXPECT_EQ(to_float(t), values);
}

}  // namespace
}  // namespace ssmv::tensor_file
