// The in-memory tensor: builders, checked conversions, and as_format_values (the explicit
// reinterpretation of int16/uint16 bit patterns as bf16 or fp16).
#include "verify/tensor_file/tensor.h"

#include <cmath>

#include "verify/tensor_file/tests/test_util.h"

namespace ssmv::tensor_file {
namespace {

using testing::error_of;

Tensor raw(DType dtype, std::vector<int64_t> shape, std::vector<uint8_t> data) {
  Tensor t;
  t.name.assign(1, 'v');  // not = "v": GCC 12 -O3 warns (-Wrestrict false positive)
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.set_bytes(std::move(data));
  return t;
}

TEST(Tensor, EveryDTypeKeepsItsExtremeValues) {
  struct Case {
    DType dtype;
    std::vector<double> values;
  };
  const std::vector<Case> cases = {
      {DType::boolean, {0, 1}},
      {DType::u8, {0, 255}},
      {DType::i8, {-128, 127}},
      {DType::i16, {-32768, 32767}},
      {DType::u16, {0, 65535}},
      {DType::i32, {-0x1p31, 0x1p31 - 1}},
      {DType::u32, {0, 0x1p32 - 1}},
      {DType::i64, {-0x1p63, 0x1p53, -0x1p53}},
      {DType::u64, {0, 0x1p64 - 2048}},          // largest double below 2^64
      {DType::f16, {65504, -0x1p-24, 0}},        // fp16 max finite and min subnormal
      {DType::bf16, {0x1.fep127, -0x1p-133}},    // bf16 max finite and min subnormal
      {DType::f32, {0x1.fffffep127, 0x1p-149}},  // fp32 max finite and min subnormal
      {DType::f64, {0.1, -0x1p-1074}},
  };
  for (const Case& c : cases) {
    const Tensor t = make_tensor("v", c.dtype, {int64_t(c.values.size())}, c.values);
    EXPECT_EQ(t.bytes().size(), c.values.size() * dtype_size(c.dtype)) << dtype_name(c.dtype);
    EXPECT_EQ(to_double(t), c.values) << dtype_name(c.dtype);
  }
}

TEST(Tensor, BuildersRefuseValuesTheDTypeCannotHold) {
  EXPECT_EQ(error_of([] { make_tensor("v", DType::u8, {1}, {256}); }),
            "<memory>: tensor 'v': values: element 0 = 256 (0x1p+8) is not a u8 value");
  EXPECT_EQ(error_of([] { make_tensor("v", DType::bf16, {2}, {1, 1 + 0x1p-8}); }),
            "<memory>: tensor 'v': values: element 1 = 1.00390625 (0x1.01p+0) is not exact in bf16");
  EXPECT_EQ(error_of([] { make_tensor("v", DType::f32, {2, 2}, {1, 2, 3}); }),
            "<memory>: tensor 'v': values: 3 values for shape [2, 2]");
}

TEST(Tensor, ToFloatRefusesWhatWouldRound) {
  EXPECT_EQ(to_float(make_tensor("v", DType::f64, {2}, {0.5, NAN}))[0], 0.5f);
  EXPECT_TRUE(std::isnan(to_float(make_tensor("v", DType::f64, {1}, {NAN}))[0]));
  EXPECT_EQ(error_of([] { to_float(make_tensor("v", DType::f64, {2}, {0.5, 0.1})); }),
            "<memory>: tensor 'v': values: element 1 = 0.10000000000000001 (0x1.999999999999ap-4) of f64 "
            "is not exact in a float");
  // 2^24 + 1 = 16777217 is the smallest positive integer a float cannot hold.
  EXPECT_EQ(error_of([] { to_float(make_tensor("v", DType::i32, {1}, {16777217})); }),
            "<memory>: tensor 'v': values: element 0 = 16777217 (0x1.000001p+24) of i32 is not exact in a float");
}

TEST(Tensor, ToInt64IsForIntegersOnly) {
  EXPECT_EQ(to_int64(make_tensor("v", DType::i32, {3}, {0, 2, -5})), (std::vector<int64_t>{0, 2, -5}));
  // INT64_MAX itself, from raw bytes (no double holds it).
  const Tensor max = raw(DType::i64, {1}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f});
  EXPECT_EQ(to_int64(max)[0], INT64_MAX);
  EXPECT_EQ(error_of([&] { to_double(max); }),
            "<memory>: tensor 'v': values: element 0 of i64 is beyond 2^53 and has no exact double");
  EXPECT_EQ(error_of([] { to_int64(make_tensor("v", DType::f32, {1}, {1})); }),
            "<memory>: tensor 'v': dtype: dtype f32 is not an integer type");
  const Tensor big = raw(DType::u64, {1}, {0, 0, 0, 0, 0, 0, 0, 0x80});  // 2^63
  EXPECT_EQ(error_of([&] { to_int64(big); }),
            "<memory>: tensor 'v': values: element 0 = 9223372036854775808 of u64 exceeds 2^63 - 1");
}

TEST(Tensor, SixteenBitIntegersAreReinterpretedAsTheDeclaredFormat) {
  // bf16 0x3f80 = 1, 0xc000 = -2, 0x0001 = 2^-133 (min subnormal), 0x7f80 = +Inf;
  // as fp16 0x3c00 = 1 and 0x0001 = 2^-24.
  const Tensor i16 = make_tensor("v", DType::i16, {4}, {0x3f80, int16_t(0xc000), 1, 0x7f80});
  const FormatValues bf = as_format_values(i16, Format::bf16);
  EXPECT_EQ(bf, (std::vector<float>{1.0f, -2.0f, 0x1p-133f, INFINITY}));
  ASSERT_TRUE(bf.holds_bits());  // the patterns as they are: 2 bytes an element
  EXPECT_EQ(bf.format(), Format::bf16);
  EXPECT_EQ(bf.bits()[1], 0xc000);
  EXPECT_EQ(as_format_floats(i16, Format::bf16), bf.to_vector());
  const Tensor u16 = make_tensor("v", DType::u16, {3}, {0x3c00, 1, 0x7fc0});
  const FormatValues h = as_format_values(u16, Format::fp16);
  EXPECT_EQ(h[0], 1.0f);
  EXPECT_EQ(h[1], 0x1p-24f);
  EXPECT_TRUE(std::isnan(as_format_values(u16, Format::bf16)[2]));  // bf16 0x7fc0 is NaN
  EXPECT_EQ(error_of([&] { as_format_values(i16, Format::fp32); }),
            "<memory>: tensor 'v': dtype: dtype i16 holds 16-bit patterns; the declared format fp32 has 32 bits");
  EXPECT_EQ(error_of([] { as_format_values(make_tensor("v", DType::i32, {1}, {1}), Format::bf16); }),
            "<memory>: tensor 'v': dtype: dtype i32 cannot hold bf16 values");
}

TEST(Tensor, FloatDTypesMustHoldValuesOfTheDeclaredFormat) {
  // bf16 data saved as fp32 (x.float()) is accepted when every value is a bf16 value.
  const Tensor f32 = make_tensor("v", DType::f32, {3}, {1.0, -0x1.fep127, NAN});
  const FormatValues v = as_format_values(f32, Format::bf16);
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_EQ(v[1], -0x1.fep127f);
  EXPECT_TRUE(std::isnan(v[2]));  // NaN passes: outputs with NaN are judged, not refused
  ASSERT_TRUE(v.holds_bits());    // narrowed from the wider dtype, element by element
  EXPECT_EQ(v.bits()[1], 0xff7f);
  EXPECT_EQ(v.bits()[2], 0x7fc0);
  const std::vector<float> floats = as_format_floats(f32, Format::bf16);
  EXPECT_EQ(floats[1], -0x1.fep127f);
  // fp16 values in an f64 array, and -NaN: the quiet NaN of its sign.
  const FormatValues h = as_format_values(make_tensor("v", DType::f64, {3}, {65504.0, 0x1p-24, -NAN}), Format::fp16);
  ASSERT_TRUE(h.holds_bits());
  EXPECT_EQ(h.bits()[0], 0x7bff);
  EXPECT_EQ(h.bits()[1], 0x0001);
  EXPECT_EQ(h.bits()[2], 0xfe00);
  EXPECT_EQ(error_of([] { as_format_values(make_tensor("v", DType::f64, {1}, {65536.0}), Format::fp16); }),
            "<memory>: tensor 'v': values: element 0 = 65536 (0x1p+16) of f64 is not exact in the declared format "
            "fp16");
  const FormatValues wide = as_format_values(f32, Format::fp32);
  EXPECT_TRUE(wide.narrowed() && !wide.holds_bits());  // fp32 stays floats
  EXPECT_EQ(error_of([] { as_format_values(make_tensor("v", DType::f32, {2}, {1, 1 + 0x1p-8}), Format::bf16); }),
            "<memory>: tensor 'v': values: element 1 = 1.00390625 (0x1.01p+0) of f32 is not exact in the declared "
            "format bf16");
  // Native bf16 decodes through spec/format.h.
  EXPECT_EQ(as_format_values(make_tensor("v", DType::bf16, {1}, {-0x1p-133}), Format::bf16)[0], -0x1p-133f);
}

TEST(Tensor, ElementCountsAreCheckedAgainstTheBytesAvailable) {
  const Where w{"f.npy", "t"};
  EXPECT_EQ(checked_element_count({2, 3}, 4, 24, w, "shape"), 6);
  EXPECT_EQ(checked_element_count({0, int64_t(1) << 62}, 4, 0, w, "shape"), 0);
  EXPECT_EQ(checked_element_count({}, 8, 8, w, "shape"), 1);
  EXPECT_EQ(error_of([&] { checked_element_count({2, 3}, 4, 23, w, "shape"); }),
            "f.npy: tensor 't': shape: [2, 3] of 4-byte elements needs more than the 23 bytes available");
  // 2^62 * 2^62 overflows int64 many times over: still a clean error.
  EXPECT_EQ(error_of([&] { checked_element_count({int64_t(1) << 62, int64_t(1) << 62}, 4, 1000, w, "shape"); }),
            "f.npy: tensor 't': shape: [4611686018427387904, 4611686018427387904] of 4-byte elements needs more "
            "than the 1000 bytes available");
  EXPECT_EQ(error_of([&] { checked_element_count({2, -1}, 4, 1000, w, "shape"); }),
            "f.npy: tensor 't': shape: dimension 1 is -1: must be >= 0");
}

}  // namespace
}  // namespace ssmv::tensor_file
