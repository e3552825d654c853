// .npy images: round trips of every dtype and layout, NumPy-made files of versions 1.0,
// 2.0 and 3.0, big-endian and Fortran-order data, and one hand-made image per error.
#include "verify/tensor_file/npy.h"

#include <cmath>

#include "verify/tensor_file/tensor_file.h"
#include "verify/tensor_file/tests/test_util.h"

namespace ssmv::tensor_file {
namespace {

using namespace testing;

Tensor parse(const Bytes& b) { return parse_npy(b, Where{"x.npy", "x"}); }
std::string parse_error(const Bytes& b) {
  return error_of([&] { parse(b); });
}
// The header NumPy writes for descr and shape (padding does not matter to the reader).
std::string header(const std::string& descr, const std::string& shape, bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + shape + ", }\n";
}

TEST(Npy, EveryDTypeAndShapeRoundTrips) {
  const std::vector<std::vector<int64_t>> shapes = {{}, {5}, {2, 3}, {2, 1, 3}, {0, 4}};
  for (DType d : {DType::boolean, DType::u8, DType::i8, DType::i16, DType::u16, DType::i32, DType::u32, DType::i64,
                  DType::u64, DType::f16, DType::f32, DType::f64}) {
    for (const auto& shape : shapes) {
      int64_t n = 1;
      for (int64_t s : shape) n *= s;
      std::vector<double> values(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) values[size_t(i)] = d == DType::boolean ? double(i % 2) : double(i % 7);
      const Tensor t = make_tensor("x", d, shape, values);
      const Bytes image = write_npy(t);
      EXPECT_EQ(image.size() - t.bytes().size(), 128u) << "header padded to 64-byte multiples";
      const Tensor back = parse(image);
      EXPECT_EQ(back.dtype, d);
      EXPECT_EQ(back.shape, shape);
      EXPECT_EQ(bytes_of(back), bytes_of(t)) << dtype_name(d) << " " << shape_string(shape);
    }
  }
}

TEST(Npy, WriterMatchesNumPyByteForByte) {
  // numpy_v1.npy is np.save of ((arange(6) - 3) * 0.25).reshape(2, 3) as float32.
  std::vector<double> v;
  for (int i = 0; i < 6; ++i) v.push_back((i - 3) * 0.25);
  EXPECT_EQ(write_npy(make_tensor("x", DType::f32, {2, 3}, v)), read_bytes(fixture("numpy_v1.npy")));
}

TEST(Npy, NumPyVersions1And2And3AreRead) {
  for (const char* name : {"numpy_v1.npy", "numpy_v2.npy", "numpy_v3.npy"}) {
    const TensorMap m = load_tensor_file(fixture(name));
    ASSERT_EQ(m.size(), 1u);
    const Tensor& t = m.begin()->second;
    EXPECT_EQ(t.name, std::string(name).substr(0, 8));  // the file's stem
    EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(to_double(t), (std::vector<double>{-0.75, -0.5, -0.25, 0, 0.25, 0.5})) << name;
  }
}

TEST(Npy, Bf16IsWrittenAsUint16BitPatterns) {
  const Tensor t = make_tensor("x", DType::bf16, {2}, {1.0, -0x1p-133});
  const Tensor back = parse(write_npy(t));
  EXPECT_EQ(back.dtype, DType::u16);
  EXPECT_EQ(as_format_values(back, Format::bf16), (std::vector<float>{1.0f, -0x1p-133f}));
}

TEST(Npy, BigEndianDataIsConvertedToLittleEndian) {
  // '>f4' 1.0 is 3f 80 00 00; '>i2' -2 is ff fe.
  EXPECT_EQ(to_double(parse(npy_image(header(">f4", "(2,)"), {0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0}))),
            (std::vector<double>{1.0, -2.0}));
  EXPECT_EQ(to_double(parse(npy_image(header(">i2", "(1,)"), {0xff, 0xfe}))), (std::vector<double>{-2.0}));
}

TEST(Npy, FortranOrderIsTransposedToCOrder) {
  // The 2x3 matrix [[0, 1, 2], [3, 4, 5]] stored column by column: 0 3 1 4 2 5.
  const Bytes data = le_bytes<float>({0, 3, 1, 4, 2, 5});
  const Tensor t = parse(npy_image(header("<f4", "(2, 3)", true), data));
  EXPECT_EQ(to_double(t), (std::vector<double>{0, 1, 2, 3, 4, 5}));
  // 1-d Fortran data is already in C order.
  EXPECT_EQ(to_double(parse(npy_image(header("<f4", "(3,)", true), le_bytes<float>({7, 8, 9})))),
            (std::vector<double>{7, 8, 9}));
}

TEST(Npy, HeaderVariantsNumPyAccepts) {
  // Double quotes, no trailing comma, Python 2 long suffixes, keys in any order.
  const Tensor t = parse(npy_image("{\"shape\": (2L, 1L), \"fortran_order\": False, \"descr\": \"<u2\"}", {1, 0, 2, 0}));
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(to_int64(t), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(parse(npy_image(header("|u1", "()"), {9})).shape, std::vector<int64_t>{});
}

TEST(Npy, EveryMalformedImageIsNamedPrecisely) {
  const Bytes f4 = le_bytes<float>({1, 2});
  EXPECT_EQ(parse_error(bytes_of("\x93NUM")), "x.npy: tensor 'x': magic: file of 4 bytes is too short for a .npy header");
  EXPECT_EQ(parse_error(bytes_of("PK\x03\x04 not numpy")),
            "x.npy: tensor 'x': magic: does not start with \"\\x93NUMPY\": not a .npy file");
  Bytes v4 = npy_image(header("<f4", "(2,)"), f4);
  v4[6] = 4;
  EXPECT_EQ(parse_error(v4), "x.npy: tensor 'x': version: 4.0 is not a .npy version (1.0, 2.0 and 3.0 are)");
  Bytes cut = npy_image(header("<f4", "(2,)"), f4);
  cut.resize(30);
  EXPECT_EQ(parse_error(cut), "x.npy: tensor 'x': header length: 58 bytes, but only 20 bytes follow (truncated file?)");
  EXPECT_EQ(parse_error(npy_image("['descr']", f4)),
            "x.npy: tensor 'x': header: the header must start with '{' at byte 0 of the header");
  EXPECT_EQ(parse_error(npy_image("{'fortran_order': False, 'shape': (2,)}", f4)),
            "x.npy: tensor 'x': header field 'descr': missing");
  EXPECT_EQ(parse_error(npy_image(header("<c8", "(2,)"), f4)),
            "x.npy: tensor 'x': header field 'descr': unknown dtype '<c8' (supported: b1 i1 u1 i2 u2 i4 u4 i8 u8 f2 "
            "f4 f8; for bf16 save its bit patterns as int16 or uint16)");
  EXPECT_EQ(parse_error(npy_image("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}", f4)),
            "x.npy: tensor 'x': header field 'descr': structured dtypes (a list of fields) are not supported");
  EXPECT_EQ(parse_error(npy_image(header("|f4", "(2,)"), f4)),
            "x.npy: tensor 'x': header field 'descr': '|f4': byte order '|' is only for one-byte types");
  EXPECT_EQ(parse_error(npy_image(header("=f4", "(2,)"), f4)),
            "x.npy: tensor 'x': header field 'descr': '=f4': byte order '=' is not one of '<' (little-endian), '>' "
            "(big-endian), '|' (not applicable)");
  EXPECT_EQ(parse_error(npy_image("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", f4)),
            "x.npy: tensor 'x': header field 'fortran_order': expected True or False");
  EXPECT_EQ(parse_error(npy_image(header("<f4", "(2)"), f4)),
            "x.npy: tensor 'x': header field 'shape': (n) is not a tuple; a 1-d shape is written (n,)");
  EXPECT_EQ(parse_error(npy_image(header("<f4", "(2, -1)"), f4)),
            "x.npy: tensor 'x': header field 'shape': dimension 1 is -1: must be >= 0");
  EXPECT_EQ(parse_error(npy_image(header("<f4", "(99999999999999999999,)"), f4)),
            "x.npy: tensor 'x': header field 'shape': dimension 0 does not fit in 64 bits");
  // 2^32 * 2^32 elements overflow int64: refused against the 8 data bytes, nothing allocated.
  EXPECT_EQ(parse_error(npy_image(header("<f4", "(4294967296, 4294967296)"), f4)),
            "x.npy: tensor 'x': header field 'shape': [4294967296, 4294967296] of 4-byte elements needs more than "
            "the 8 bytes available");
  EXPECT_EQ(parse_error(npy_image(header("<f4", "(3,)"), f4)),
            "x.npy: tensor 'x': header field 'shape': [3] of 4-byte elements needs more than the 8 bytes available");
  EXPECT_EQ(parse_error(npy_image(header("<f4", "(1,)"), f4)),
            "x.npy: tensor 'x': data: 8 bytes of data, but shape [1] of '<f4' needs 4 (trailing bytes)");
  EXPECT_EQ(parse_error(npy_image(header("<f4", "(2,)"), {0, 0, 0})),
            "x.npy: tensor 'x': header field 'shape': [2] of 4-byte elements needs more than the 3 bytes available");
  EXPECT_EQ(parse_error(npy_image("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", f4)),
            "x.npy: tensor 'x': header field 'descr': appears twice");
  EXPECT_EQ(parse_error(npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}", f4)),
            "x.npy: tensor 'x': header: unknown key 'extra' (expected descr, fortran_order, shape)");
  EXPECT_EQ(parse_error(npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x", f4)),
            "x.npy: tensor 'x': header: unexpected text after the closing '}' at byte 56 of the header");
  EXPECT_EQ(parse_error(npy_image("{'descr': '<f4", f4)),
            "x.npy: tensor 'x': header: unterminated string at byte 14 of the header");
}

}  // namespace
}  // namespace ssmv::tensor_file
