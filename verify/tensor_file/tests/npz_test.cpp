// .npz archives: NumPy's np.savez (stored, ZIP64 local extras) and np.savez_compressed
// (deflate) files, round trips through our writer, ZIP64 end records, and one hand-made
// archive per structural error.
#include <zlib.h>

#include <cmath>

#include "verify/tensor_file/npy.h"
#include "verify/tensor_file/tensor_file.h"
#include "verify/tensor_file/tests/test_util.h"
#include "verify/tensor_file/zip.h"

namespace ssmv::tensor_file {
namespace {

using namespace testing;

TensorMap parse(const Bytes& b) { return parse_tensor_bytes(b, FileKind::npz, "x.npz"); }
std::string parse_error(const Bytes& b) {
  return error_of([&] { parse(b); });
}
uint32_t crc(const Bytes& b) { return uint32_t(crc32(0, b.data(), uInt(b.size()))); }

// value(i) = (i - 3) * 0.25 over the flat C-order index: make_numpy_fixtures.py's ramp.
std::vector<double> ramp(int n) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back((i - 3) * 0.25);
  return v;
}

void check_numpy_arrays(const TensorMap& m) {
  ASSERT_EQ(m.size(), 15u);
  EXPECT_EQ(m.at("f32").dtype, DType::f32);
  EXPECT_EQ(to_double(m.at("f32")), ramp(6));
  EXPECT_EQ(to_double(m.at("f64")), ramp(4));
  EXPECT_EQ(m.at("f16").dtype, DType::f16);
  EXPECT_EQ(to_double(m.at("f16")), ramp(6));
  const std::vector<double> r4 = ramp(4);
  EXPECT_EQ(as_format_values(m.at("bf16_as_i16"), Format::bf16), std::vector<float>(r4.begin(), r4.end()));
  EXPECT_EQ(to_int64(m.at("u16")), (std::vector<int64_t>{0, 1000, 2000, 3000, 4000}));
  EXPECT_EQ(to_int64(m.at("i32")), (std::vector<int64_t>{-3, -2, -1, 0, 1, 2}));
  EXPECT_EQ(to_int64(m.at("i64")), (std::vector<int64_t>{0, 2, 5, -(int64_t(1) << 62)}));
  EXPECT_EQ(to_int64(m.at("u8")), (std::vector<int64_t>{0, 60, 120, 180}));
  EXPECT_EQ(m.at("bool").dtype, DType::boolean);
  EXPECT_EQ(to_int64(m.at("bool")), (std::vector<int64_t>{1, 0, 1}));
  // Fortran-order arrays come back in C order: the same ramp as if saved C-contiguous.
  EXPECT_EQ(m.at("fortran").shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(to_double(m.at("fortran")), ramp(12));
  EXPECT_EQ(m.at("fortran3").shape, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(to_double(m.at("fortran3")), ramp(24));
  EXPECT_EQ(to_double(m.at("big_endian")), ramp(5));
  EXPECT_EQ(to_int64(m.at("big_i32")), (std::vector<int64_t>{-70000, 0, 70000}));
  EXPECT_EQ(m.at("scalar").shape, std::vector<int64_t>{});
  EXPECT_EQ(to_double(m.at("scalar")), std::vector<double>{1.5});
  EXPECT_EQ(m.at("empty").shape, (std::vector<int64_t>{0, 3}));
  EXPECT_TRUE(m.at("empty").bytes().empty());
}

TEST(Npz, NumPySavezIsRead) { check_numpy_arrays(load_tensor_file(fixture("numpy_savez.npz"))); }
TEST(Npz, NumPySavezCompressedIsRead) { check_numpy_arrays(load_tensor_file(fixture("numpy_savez_compressed.npz"))); }

TEST(Npz, EveryDTypeRoundTripsThroughAFile) {
  TempDir dir;
  TensorMap m;
  for (DType d : {DType::boolean, DType::u8, DType::i8, DType::i16, DType::u16, DType::i32, DType::u32, DType::i64,
                  DType::u64, DType::f16, DType::f32, DType::f64}) {
    const std::string name(dtype_name(d));
    m[name] = make_tensor(name, d, {2, 2}, {0, 1, 1, 0});
  }
  m["scalar"] = make_tensor("scalar", DType::f64, {}, {-0.5});
  m["empty"] = make_tensor("empty", DType::f32, {3, 0}, {});
  save_npz(dir.file("all.npz"), m);
  const TensorMap back = load_tensor_file(dir.file("all.npz"));
  ASSERT_EQ(back.size(), m.size());
  for (const auto& [name, t] : m) {
    EXPECT_EQ(back.at(name).dtype, t.dtype) << name;
    EXPECT_EQ(back.at(name).shape, t.shape) << name;
    EXPECT_EQ(bytes_of(back.at(name)), bytes_of(t)) << name;
    EXPECT_EQ(back.at(name).file, dir.file("all.npz"));
  }
}

// One stored entry "a.npy" holding a valid 2-element f32 image: the base of the error cases.
Bytes a_npy() { return write_npy(make_tensor("a", DType::f32, {2}, {1, 2})); }
Bytes one_entry_zip(const std::string& name, const Bytes& data, uint16_t method = 0, uint32_t usize_override = 0,
                    uint32_t crc_value = 0xFFFFFFFF) {
  const uint32_t c = crc_value == 0xFFFFFFFF ? crc(data) : crc_value;
  const uint32_t u = usize_override ? usize_override : uint32_t(data.size());
  const Bytes local = zip_local(name, method, c, uint32_t(data.size()), u);
  const Bytes central = zip_central(name, method, c, uint32_t(data.size()), u, 0);
  return concat({local, data, central, zip_end(1, uint32_t(central.size()), uint32_t(local.size() + data.size()))});
}

Bytes raw_deflate(const Bytes& in) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  Bytes out(deflateBound(&z, uLong(in.size())));
  z.next_in = const_cast<Bytef*>(in.data());
  z.avail_in = uInt(in.size());
  z.next_out = out.data();
  z.avail_out = uInt(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

TEST(Npz, HandMadeArchivesOfBothMethodsAreRead) {
  const Bytes npy = a_npy();
  EXPECT_EQ(to_double(parse(one_entry_zip("a.npy", npy)).at("a")), (std::vector<double>{1, 2}));
  const Bytes z = raw_deflate(npy);
  const Bytes local = zip_local("a.npy", 8, crc(npy), uint32_t(z.size()), uint32_t(npy.size()));
  const Bytes central = zip_central("a.npy", 8, crc(npy), uint32_t(z.size()), uint32_t(npy.size()), 0);
  const Bytes archive = concat({local, z, central, zip_end(1, uint32_t(central.size()), uint32_t(local.size() + z.size()))});
  EXPECT_EQ(to_double(parse(archive).at("a")), (std::vector<double>{1, 2}));
}

TEST(Npz, Zip64RecordsAreFollowed) {
  // Central entry with sizes and offset 0xFFFFFFFF and a ZIP64 extra (id 1, three
  // 8-byte values), then a ZIP64 end record, its locator, and an end record of 0xFFFF... markers.
  const Bytes npy = a_npy();
  const Bytes local = zip_local("a.npy", 0, crc(npy), uint32_t(npy.size()), uint32_t(npy.size()));
  Bytes extra;
  put_le(extra, 1, 2);
  put_le(extra, 24, 2);
  put_le(extra, npy.size(), 8);
  put_le(extra, npy.size(), 8);
  put_le(extra, 0, 8);
  const Bytes central = zip_central("a.npy", 0, crc(npy), 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, extra);
  const uint64_t cd_at = local.size() + npy.size(), end64_at = cd_at + central.size();
  Bytes end64;
  put_le(end64, 0x06064b50, 4);
  put_le(end64, 44, 8);  // size of the rest of the record
  put_le(end64, 45, 2);
  put_le(end64, 45, 2);
  put_le(end64, 0, 4);
  put_le(end64, 0, 4);
  put_le(end64, 1, 8);
  put_le(end64, 1, 8);
  put_le(end64, central.size(), 8);
  put_le(end64, cd_at, 8);
  Bytes locator;
  put_le(locator, 0x07064b50, 4);
  put_le(locator, 0, 4);
  put_le(locator, end64_at, 8);
  put_le(locator, 1, 4);
  const Bytes end = zip_end(0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF);
  const Bytes archive = concat({local, npy, central, end64, locator, end});
  EXPECT_EQ(to_double(parse(archive).at("a")), (std::vector<double>{1, 2}));

  // Without the extra field the 0xFFFFFFFF sizes mean nothing: an error, not a guess.
  const Bytes bare = zip_central("a.npy", 0, crc(npy), 0xFFFFFFFF, 0xFFFFFFFF, 0, {});
  const Bytes archive2 = concat({local, npy, bare, zip_end(1, uint32_t(bare.size()), uint32_t(cd_at))});
  EXPECT_EQ(parse_error(archive2), "x.npz: tensor 'a': zip central directory entry: sizes or offset are 0xFFFFFFFF but "
                                   "there is no ZIP64 extra field");
}

TEST(Npz, EveryStructuralErrorIsNamedPrecisely) {
  const Bytes npy = a_npy();
  const Bytes good = one_entry_zip("a.npy", npy);
  EXPECT_EQ(parse_error(bytes_of("PK")), "x.npz: zip end of central directory: file of 2 bytes is too short for a zip archive");
  EXPECT_EQ(parse_error(Bytes(100, 0)),
            "x.npz: zip end of central directory: not found (not a zip archive, or a truncated one)");
  // Truncated anywhere: the end record is gone.
  EXPECT_EQ(parse_error(Bytes(good.begin(), good.end() - 30)),
            "x.npz: zip end of central directory: not found (not a zip archive, or a truncated one)");
  // A data byte flipped.
  Bytes flipped = good;
  flipped[zip_local("a.npy", 0, 0, 0, 0).size() + npy.size() - 1] ^= 0x40;
  EXPECT_EQ(parse_error(flipped), "x.npz: tensor 'a': zip data: CRC-32 mismatch (corrupt entry)");
  EXPECT_EQ(parse_error(one_entry_zip("a.npy", npy, 12)),
            "x.npz: tensor 'a': zip central directory entry: compression method 12 is not supported (0 stored and 8 "
            "deflate are)");
  EXPECT_EQ(parse_error(one_entry_zip("a.npy", npy, 0, 999)),
            "x.npz: tensor 'a': zip central directory entry: stored entry with compressed size 136 != uncompressed "
            "size 999");
  // A deflate entry declaring 2^31 bytes from 136: beyond deflate's 1032:1, refused before allocating.
  EXPECT_EQ(parse_error(one_entry_zip("a.npy", npy, 8, 0x80000000u)),
            "x.npz: tensor 'a': zip central directory entry: uncompressed size 2147483648 exceeds deflate's maximum "
            "ratio 1032:1 over 136 compressed bytes");
  // Stored bytes that are not a deflate stream.
  EXPECT_EQ(parse_error(one_entry_zip("a.npy", Bytes(16, 0xff), 8, 100)),
            "x.npz: tensor 'a': zip data: corrupt deflate stream: invalid block type");
  const Bytes z = raw_deflate(npy);
  const Bytes short_z(z.begin(), z.begin() + 10);
  EXPECT_EQ(parse_error(one_entry_zip("a.npy", short_z, 8, uint32_t(npy.size()))),
            "x.npz: tensor 'a': zip data: deflate stream is truncated (ends before its last block)");
  EXPECT_EQ(parse_error(one_entry_zip("a.npy", z, 8, uint32_t(npy.size() - 1))),
            "x.npz: tensor 'a': zip data: inflates to more than the declared 135 bytes");
  EXPECT_EQ(parse_error(one_entry_zip("a.npy", z, 8, uint32_t(npy.size() + 1))),
            "x.npz: tensor 'a': zip data: inflates to 136 bytes, the directory declares 137");
  EXPECT_EQ(parse_error(one_entry_zip("a.txt", npy)), "x.npz: tensor 'a.txt': zip entry: name 'a.txt' is not \"<tensor name>.npy\"");
  EXPECT_EQ(parse_error(one_entry_zip("a.npy", write_npy(make_tensor("a", DType::f32, {2}, {1, 2})), 0, 0, 7)),
            "x.npz: tensor 'a': zip data: CRC-32 mismatch (corrupt entry)");
  // An entry whose .npy is malformed names the tensor and the .npy field.
  Bytes bad_npy = npy;
  bad_npy[0] = 'X';
  EXPECT_EQ(parse_error(one_entry_zip("dt.npy", bad_npy)),
            "x.npz: tensor 'dt': magic: does not start with \"\\x93NUMPY\": not a .npy file");

  // Two entries of the same name.
  const Bytes l1 = zip_local("a.npy", 0, crc(npy), uint32_t(npy.size()), uint32_t(npy.size()));
  const uint32_t second = uint32_t(l1.size() + npy.size());
  const Bytes c1 = zip_central("a.npy", 0, crc(npy), uint32_t(npy.size()), uint32_t(npy.size()), 0);
  const Bytes c2 = zip_central("a.npy", 0, crc(npy), uint32_t(npy.size()), uint32_t(npy.size()), second);
  const Bytes dup = concat({l1, npy, l1, npy, c1, c2, zip_end(2, uint32_t(c1.size() + c2.size()), 2 * second)});
  EXPECT_EQ(parse_error(dup), "x.npz: tensor 'a': zip central directory: duplicate entry name 'a.npy'");

  // Entry b's local header lies inside entry a's data: overlapping entries.
  const Bytes inner = concat({zip_local("b.npy", 0, crc(npy), uint32_t(npy.size()), uint32_t(npy.size())), npy});
  const Bytes la = zip_local("a.npy", 0, crc(inner), uint32_t(inner.size()), uint32_t(inner.size()));
  const Bytes ca = zip_central("a.npy", 0, crc(inner), uint32_t(inner.size()), uint32_t(inner.size()), 0);
  const Bytes cb = zip_central("b.npy", 0, crc(npy), uint32_t(npy.size()), uint32_t(npy.size()), uint32_t(la.size()));
  const Bytes overlap = concat({la, inner, ca, cb, zip_end(2, uint32_t(ca.size() + cb.size()), uint32_t(la.size() + inner.size()))});
  EXPECT_EQ(parse_error(overlap), "x.npz: zip data: entries at offsets 0 and 35 overlap");

  // Local header disagreeing with the central directory, or missing.
  const Bytes lx = zip_local("b.npy", 0, crc(npy), uint32_t(npy.size()), uint32_t(npy.size()));
  const Bytes cx = zip_central("a.npy", 0, crc(npy), uint32_t(npy.size()), uint32_t(npy.size()), 0);
  const uint32_t cd_at = uint32_t(lx.size() + npy.size());
  EXPECT_EQ(parse_error(concat({lx, npy, cx, zip_end(1, uint32_t(cx.size()), cd_at)})),
            "x.npz: tensor 'a': zip local header: name 'b.npy' differs from the central directory's 'a.npy'");
  const Bytes cy = zip_central("a.npy", 0, crc(npy), uint32_t(npy.size()), uint32_t(npy.size()), 5);
  EXPECT_EQ(parse_error(concat({lx, npy, cy, zip_end(1, uint32_t(cy.size()), cd_at)})),
            "x.npz: tensor 'a': zip local header: bad signature at offset 5 (expected PK\\3\\4)");
  const Bytes cz = zip_central("a.npy", 0, crc(npy), uint32_t(npy.size()), uint32_t(npy.size()), cd_at);
  EXPECT_EQ(parse_error(concat({lx, npy, cz, zip_end(1, uint32_t(cz.size()), cd_at)})),
            "x.npz: tensor 'a': zip local header: offset 171 leaves no room for a local header before the central "
            "directory");
  // Data running into the central directory (sizes larger than the archive holds).
  const Bytes cbig = zip_central("a.npy", 0, crc(npy), 500, 500, 0);
  const Bytes lbig = zip_local("a.npy", 0, crc(npy), 500, 500);
  EXPECT_EQ(parse_error(concat({lbig, npy, cbig, zip_end(1, uint32_t(cbig.size()), cd_at)})),
            "x.npz: tensor 'a': zip data: 500 bytes at offset 35 run into the central directory (truncated archive?)");
  // End record whose directory does not end where the end record begins; a bad count.
  EXPECT_EQ(parse_error(concat({lx, npy, cx, zip_end(1, uint32_t(cx.size() + 1), cd_at)})),
            "x.npz: zip central directory: offset 171 and size 52 do not end where the end record begins (byte 222)");
  EXPECT_EQ(parse_error(concat({lx, npy, cx, zip_end(2, uint32_t(cx.size()), cd_at)})),
            "x.npz: zip central directory: 2 entries cannot fit in 51 bytes");
  Bytes badsig = concat({lx, npy, cx, zip_end(1, uint32_t(cx.size()), cd_at)});
  badsig[cd_at] = 'Q';
  EXPECT_EQ(parse_error(badsig), "x.npz: zip central directory entry 0: bad signature (expected PK\\1\\2)");
  // Encrypted entries (flag bit 0).
  const Bytes ce = zip_central("a.npy", 0, crc(npy), uint32_t(npy.size()), uint32_t(npy.size()), 0, {}, 1);
  const Bytes la2 = zip_local("a.npy", 0, crc(npy), uint32_t(npy.size()), uint32_t(npy.size()));
  EXPECT_EQ(parse_error(concat({la2, npy, ce, zip_end(1, uint32_t(ce.size()), uint32_t(la2.size() + npy.size()))})),
            "x.npz: tensor 'a': zip central directory entry: encrypted entries are not supported");
}

}  // namespace
}  // namespace ssmv::tensor_file
