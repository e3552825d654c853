// .safetensors images: round trips of every dtype with metadata, the writer's layout, and
// one hand-made image per header error (offsets out of range, overlapping, not covering the
// buffer, unknown dtype, bad JSON, duplicate names).
#include "verify/tensor_file/safetensors.h"

#include "verify/tensor_file/tensor_file.h"
#include "verify/tensor_file/tests/test_util.h"

namespace ssmv::tensor_file {
namespace {

using namespace testing;

TensorMap parse(const Bytes& b) { return parse_safetensors(b, Where{"x.safetensors", ""}); }
std::string parse_error(const Bytes& b) {
  return error_of([&] { parse(b); });
}
// "{" + members + "}" (built by appending: GCC 12 warns falsely on "{" + std::string&&).
std::string braces(const std::string& members) {
  std::string s(1, '{');
  s += members;
  s += '}';
  return s;
}
std::string entry(const std::string& name, const std::string& dtype, const std::string& shape, int begin, int end) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":[" +
         std::to_string(begin) + "," + std::to_string(end) + "]}";
}

TEST(Safetensors, EveryDTypeRoundTripsWithMetadata) {
  TempDir dir;
  TensorMap m;
  for (DType d : {DType::boolean, DType::u8, DType::i8, DType::i16, DType::u16, DType::i32, DType::u32, DType::i64,
                  DType::u64, DType::f16, DType::bf16, DType::f32, DType::f64}) {
    const std::string name(dtype_name(d));
    m[name] = make_tensor(name, d, {1, 3}, {1, 0, 1});
  }
  m["scalar"] = make_tensor("scalar", DType::bf16, {}, {-2});
  m["empty"] = make_tensor("empty", DType::f32, {0}, {});
  save_safetensors(dir.file("all.safetensors"), m, {{"format", "pt"}});
  const Bytes image = read_bytes(dir.file("all.safetensors"));
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | image[size_t(i)];
  EXPECT_EQ(n % 8, 0u) << "header padded so that the buffer is 8-byte aligned";
  std::map<std::string, std::string> meta;
  const TensorMap back = parse_safetensors(image, Where{"all.safetensors", ""}, &meta);
  EXPECT_EQ(meta, (std::map<std::string, std::string>{{"format", "pt"}}));
  ASSERT_EQ(back.size(), m.size());
  for (const auto& [name, t] : m) {
    EXPECT_EQ(back.at(name).dtype, t.dtype) << name;
    EXPECT_EQ(back.at(name).shape, t.shape) << name;
    EXPECT_EQ(bytes_of(back.at(name)), bytes_of(t)) << name;
  }
  EXPECT_EQ(as_format_values(back.at("scalar"), Format::bf16), std::vector<float>{-2.0f});
}

TEST(Safetensors, HandMadeImageWithPaddingAndMemberOrderIsRead) {
  // Entries in any order, header padded with spaces, offsets not in name order.
  const std::string h =
      braces(entry("b", "F32", "[2]", 0, 8) + "," + entry("a", "I64", "[1]", 8, 16) + ",\"__metadata__\":{\"k\":\"v\"}") + "   ";
  const Bytes buf = concat({le_bytes<float>({1.5f, -2}), le_bytes<int64_t>({-7})});
  const TensorMap m = parse(safetensors_image(h, buf));
  EXPECT_EQ(to_double(m.at("b")), (std::vector<double>{1.5, -2}));
  EXPECT_EQ(to_int64(m.at("a")), std::vector<int64_t>{-7});
  EXPECT_EQ(m.at("a").file, "x.safetensors");
}

TEST(Safetensors, EveryMalformedHeaderIsNamedPrecisely) {
  const Bytes f2 = le_bytes<float>({1, 2});
  auto one = [&](const std::string& e) { return safetensors_image(braces(e), f2); };
  EXPECT_EQ(parse_error(Bytes{1, 2, 3}), "x.safetensors: header size: file of 3 bytes is too short for a safetensors header");
  Bytes huge = one(entry("a", "F32", "[2]", 0, 8));
  huge[7] = 0x10;  // header length 2^60 + 54, the 54 bytes of "{" + entry + "}"
  EXPECT_EQ(parse_error(huge), "x.safetensors: header size: 1152921504606847030 bytes exceeds the format's limit of "
                               "100000000");
  Bytes cut = one(entry("a", "F32", "[2]", 0, 8));
  cut.resize(40);
  EXPECT_EQ(parse_error(cut), "x.safetensors: header size: 54 bytes, but only 32 bytes follow (truncated file, or "
                              "not a safetensors file)");
  // A header past the format's 100 MB limit is refused before it is read.
  Bytes big;
  put_le(big, 100'000'001, 8);
  big.push_back('{');
  EXPECT_EQ(parse_error(big), "x.safetensors: header size: 100000001 bytes exceeds the format's limit of 100000000");
  std::string rank65 = "[1";
  for (int i = 1; i < 65; ++i) rank65 += ",1";
  EXPECT_EQ(parse_error(one(entry("a", "F32", rank65 + "]", 0, 4))),
            "x.safetensors: tensor 'a': header field 'shape': more than 64 dimensions");
  EXPECT_EQ(parse_error(safetensors_image("[1]", f2)), "x.safetensors: header: does not start with '{' (not a safetensors file?)");
  EXPECT_EQ(parse_error(safetensors_image("{\"a\":{\"dtype\":\"F32\",}}", f2)),
            "x.safetensors: header: JSON line 1 column 21 (byte 20): expected a string key");
  EXPECT_EQ(parse_error(safetensors_image(braces(entry("a", "F32", "[1]", 0, 4) + "," + entry("a", "F32", "[1]", 4, 8)), f2)),
            "x.safetensors: header: JSON line 1 column 55 (byte 54): duplicate key \"a\"");
  EXPECT_EQ(parse_error(one(entry("a", "F8_E4M3", "[8]", 0, 8))),
            "x.safetensors: tensor 'a': header field 'dtype': unknown dtype \"F8_E4M3\" (supported: BOOL U8 I8 I16 U16 "
            "I32 U32 I64 U64 F16 BF16 F32 F64)");
  EXPECT_EQ(parse_error(one("\"a\":{\"shape\":[2],\"data_offsets\":[0,8]}")),
            "x.safetensors: tensor 'a': header field 'dtype': missing");
  EXPECT_EQ(parse_error(one("\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"extra\":1}")),
            "x.safetensors: tensor 'a': header: unknown field 'extra' (expected dtype, shape, data_offsets)");
  EXPECT_EQ(parse_error(one(entry("a", "F32", "[-2]", 0, 8))),
            "x.safetensors: tensor 'a': header field 'shape': dimension 0 is not a non-negative integer");
  EXPECT_EQ(parse_error(one(entry("a", "F32", "[2.0]", 0, 8))),
            "x.safetensors: tensor 'a': header field 'shape': dimension 0 is not a non-negative integer");
  EXPECT_EQ(parse_error(one(entry("a", "F32", "[4294967296,4294967296]", 0, 8))),
            "x.safetensors: tensor 'a': header field 'shape': [4294967296, 4294967296] of 4-byte elements needs more "
            "than the 8 bytes available");
  EXPECT_EQ(parse_error(one(entry("a", "F32", "[2]", 8, 0))),
            "x.safetensors: tensor 'a': header field 'data_offsets': [8, 0]: begin is after end");
  EXPECT_EQ(parse_error(one(entry("a", "F32", "[2]", 4, 12))),
            "x.safetensors: tensor 'a': header field 'data_offsets': [4, 12] runs past the data buffer of 8 bytes");
  EXPECT_EQ(parse_error(one(entry("a", "F32", "[1]", 0, 8))),
            "x.safetensors: tensor 'a': header field 'data_offsets': [0, 8] holds 8 bytes, shape [1] of F32 needs 4");
  EXPECT_EQ(parse_error(one("\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}")),
            "x.safetensors: tensor 'a': header field 'data_offsets': is not an array of two integers [begin, end]");
  EXPECT_EQ(parse_error(one(entry("a", "F32", "[1]", 0, 4) + "," + entry("b", "F32", "[1]", 0, 4))),
            "x.safetensors: tensor 'b': header field 'data_offsets': [0, 4] overlaps tensor 'a'");
  EXPECT_EQ(parse_error(one(entry("a", "F32", "[1]", 4, 8))),
            "x.safetensors: tensor 'a': header field 'data_offsets': [4, 8] leaves bytes [0, 4) of the buffer unused "
            "(a hole)");
  EXPECT_EQ(parse_error(one(entry("a", "F32", "[1]", 0, 4))),
            "x.safetensors: data: the tensors cover 4 of the buffer's 8 bytes (trailing bytes)");
  EXPECT_EQ(parse_error(one(entry("a", "F32", "[2]", 0, 8) + ",\"__metadata__\":{\"k\":1}")),
            "x.safetensors: __metadata__: value of 'k' is not a string");
  EXPECT_EQ(parse_error(one("\"a\":[1]")), "x.safetensors: tensor 'a': header: entry is not a JSON object");
}

TEST(Safetensors, WriterRefusesNamesAJsonHeaderCannotHold) {
  TensorMap m;
  m["\xff"] = make_tensor("\xff", DType::f32, {1}, {1});
  EXPECT_EQ(error_of([&] { write_safetensors(m); }),
            "<memory>: tensor '\xff': name: is not valid UTF-8, which a JSON header requires");
  TensorMap r;
  r["__metadata__"] = make_tensor("__metadata__", DType::f32, {1}, {1});
  TempDir dir;
  EXPECT_EQ(error_of([&] { save_safetensors(dir.file("r.safetensors"), r); }),
            dir.file("r.safetensors") + ": tensor '__metadata__': name: '__metadata__' is reserved by the format");
}

}  // namespace
}  // namespace ssmv::tensor_file
