// spec/format_values.h: every bf16 and fp16 pattern reads as spec/format.h's decode gives it
// (element by element and a row at once), narrowing round trips, and every write a narrowed
// tensor refuses is refused loudly.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "spec/format_values.h"

namespace ssmv {
namespace {

uint32_t float_bits(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

std::vector<uint16_t> every_pattern() {
  std::vector<uint16_t> all(65536);
  for (uint32_t b = 0; b < 65536; ++b) all[b] = uint16_t(b);
  return all;
}

// Encodings compared (so -0 != +0 and a NaN's sign and payload count), printed in hex.
void expect_decodes_as_format_h(Format f) {
  const std::vector<uint16_t> all = every_pattern();
  std::vector<float> row(all.size());
  decode16(f, all.data(), all.size(), row.data());
  const FormatValues v = FormatValues::of_bits(f, all);
  std::vector<float> buffer(all.size());
  const float* read = v.read(0, all.size(), buffer.data());
  int64_t nans = 0;
  for (uint32_t b = 0; b < 65536; ++b) {
    const uint32_t want = float_bits(float(decode(f, b)));
    const float one = f == Format::bf16 ? bf16_to_float(uint16_t(b)) : fp16_to_float(uint16_t(b));
    ASSERT_EQ(float_bits(one), want) << format_name(f) << " " << hex_bits(f, b);
    ASSERT_EQ(float_bits(row[b]), want) << format_name(f) << " row " << hex_bits(f, b);
    ASSERT_EQ(float_bits(v[b]), want) << format_name(f) << " operator[] " << hex_bits(f, b);
    ASSERT_EQ(float_bits(read[b]), want) << format_name(f) << " read " << hex_bits(f, b);
    nans += std::isnan(one) ? 1 : 0;
  }
  EXPECT_GT(nans, 0);  // the NaN patterns were among them
}

TEST(FormatValues, EveryBf16PatternDecodesAsFormatH) { expect_decodes_as_format_h(Format::bf16); }
TEST(FormatValues, EveryFp16PatternDecodesAsFormatH) { expect_decodes_as_format_h(Format::fp16); }

TEST(FormatValues, RowReadOfAnUnalignedStretch) {
  const std::vector<uint16_t> all = every_pattern();
  const FormatValues v = FormatValues::of_bits(Format::bf16, all);
  float buffer[37];
  const float* r = v.read(1001, 37, buffer);
  EXPECT_EQ(r, buffer);
  for (size_t i = 0; i < 37; ++i) EXPECT_EQ(float_bits(r[i]), float_bits(v[1001 + i]));
  const FormatValues floats(std::vector<float>{1, 2, 3, 4});
  EXPECT_EQ(floats.read(2, 2, buffer), floats.floats() + 2);  // no copy when held as floats
  std::vector<float> kept;
  const float* grown = v.read(7, 3, kept);
  EXPECT_EQ(grown, kept.data());  // grown to the row
  EXPECT_EQ(kept.size(), 3u);
  EXPECT_EQ(float_bits(kept[2]), float_bits(v[9]));
}

TEST(FormatValues, NarrowRoundTripsEveryNonNanPattern) {
  for (Format f : {Format::bf16, Format::fp16}) {
    std::vector<float> values;
    std::vector<uint16_t> bits;
    for (uint32_t b = 0; b < 65536; ++b) {
      if (std::isnan(decode(f, b))) continue;
      values.push_back(float(decode(f, b)));
      bits.push_back(uint16_t(b));
    }
    FormatValues v(values);
    EXPECT_FALSE(v.narrowed());
    v.narrow(f);
    ASSERT_TRUE(v.holds_bits());
    EXPECT_EQ(v.format(), f);
    ASSERT_EQ(v.size(), bits.size());
    EXPECT_EQ(std::memcmp(v.bits(), bits.data(), 2 * bits.size()), 0) << format_name(f);
    const std::vector<float> back = v.to_vector();
    EXPECT_EQ(std::memcmp(back.data(), values.data(), 4 * values.size()), 0) << format_name(f);
    EXPECT_TRUE(v == FormatValues(values));
  }
}

TEST(FormatValues, NarrowKeepsTheSignOfNanAndInfinities) {
  const float inf = std::numeric_limits<float>::infinity();
  FormatValues v({std::nanf(""), -std::nanf(""), inf, -inf, -0.0f});
  v.narrow(Format::bf16);
  EXPECT_EQ(v.bits()[0], 0x7fc0);
  EXPECT_EQ(v.bits()[1], 0xffc0);
  EXPECT_EQ(v.bits()[2], 0x7f80);
  EXPECT_EQ(v.bits()[3], 0xff80);
  EXPECT_EQ(v.bits()[4], 0x8000);
  EXPECT_TRUE(std::isnan(v[1]) && std::signbit(v[1]));
  v.narrow(Format::fp16);  // bf16 -> fp16: every value here is an fp16 value
  EXPECT_EQ(v.bits()[1], 0xfe00);
  EXPECT_EQ(v.bits()[3], 0xfc00);
}

TEST(FormatValues, NarrowRefusesAValueNotExactInTheFormatAndChangesNothing) {
  FormatValues v({1.0f, 1.0f + 0x1p-10f});
  try {
    v.narrow(Format::bf16);
    FAIL() << "narrowed an inexact value";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("element 1 = "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not exact in bf16"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(v.narrowed());
  EXPECT_EQ(v[1], 1.0f + 0x1p-10f);
  v.narrow(Format::fp16);  // 11 significand bits: exact
  EXPECT_TRUE(v.holds_bits());
  EXPECT_THROW(FormatValues({65536.0f}).narrow(Format::fp16), std::invalid_argument);
}

TEST(FormatValues, Fp32IsHeldAsFloats) {
  FormatValues v({1.0f + 0x1p-20f, -3.0f});
  v.narrow(Format::fp32);
  EXPECT_TRUE(v.narrowed());
  EXPECT_FALSE(v.holds_bits());
  EXPECT_EQ(v.format(), Format::fp32);
  EXPECT_EQ(v[0], 1.0f + 0x1p-20f);
  EXPECT_THROW(v.bits(), std::logic_error);
  EXPECT_THROW(v.narrow(Format::bf16), std::invalid_argument);
  EXPECT_EQ(FormatValues::zeros(Format::fp32, 3).size(), 3u);
}

TEST(FormatValues, WritesToANarrowedTensorThrow) {
  for (Format f : {Format::bf16, Format::fp16, Format::fp32}) {
    FormatValues v({1.0f, 2.0f});
    v.narrow(f);
    EXPECT_THROW(v.set(0, 3.0f), std::logic_error) << format_name(f);
    EXPECT_THROW(v.push_back(3.0f), std::logic_error);
    EXPECT_THROW(v.resize(5), std::logic_error);
    EXPECT_THROW(v.reserve(9), std::logic_error);
    EXPECT_THROW(v.writable(), std::logic_error);
    EXPECT_EQ(v[0], 1.0f);  // reads still work, on a non-const tensor too
    EXPECT_EQ(v.to_vector(), (std::vector<float>{1.0f, 2.0f}));
    FormatValues edited = v;
    edited.loosen();  // a deliberate copy to edit
    edited.set(0, 7.0f);
    EXPECT_EQ(edited.to_vector(), (std::vector<float>{7.0f, 2.0f}));
    EXPECT_EQ(v[0], 1.0f);
    FormatValues replaced = v;
    replaced.assign(3, 0.5f);  // every value replaced, as by = std::vector<float>(3, 0.5f)
    EXPECT_FALSE(replaced.narrowed());
    EXPECT_EQ(replaced.to_vector(), std::vector<float>(3, 0.5f));
    v.clear();  // dropping it is no write
    EXPECT_TRUE(v.empty());
    EXPECT_FALSE(v.narrowed());
    v.push_back(5.0f);
  }
  FormatValues loose({1.0f});
  const double one = 1.0;
  EXPECT_THROW(loose.store_nearest(0, &one, 1), std::logic_error);
  EXPECT_THROW(loose.format(), std::logic_error);
  EXPECT_THROW(FormatValues::of_bits(Format::fp32, {1}), std::invalid_argument);
  EXPECT_THROW(FormatValues::of_bits(Format::bf16, {1}).floats(), std::logic_error);
}

TEST(FormatValues, StoreNearestRoundsToTheFormat) {
  FormatValues v = FormatValues::zeros(Format::bf16, 3);
  const double ties[] = {1.0 + 0x1p-8 + 0x1p-9, 1.0 + 0x1p-9};  // to even: 1 + 2^-7, 1
  v.store_nearest(1, ties, 2);
  EXPECT_EQ(v[0], 0.0f);
  EXPECT_EQ(v[1], 1.0f + 0x1p-7f);
  EXPECT_EQ(v[2], 1.0f);
  FormatValues w = FormatValues::zeros(Format::fp32, 1);
  const double near_one = 1.0 + 0x1p-30;
  w.store_nearest(0, &near_one, 1);
  EXPECT_EQ(w[0], 1.0f);
}

TEST(FormatValues, AppendKeepsTheRepresentation) {
  FormatValues src({1.0f, 2.0f, 3.0f, 4.0f});
  src.narrow(Format::bf16);
  FormatValues dst;
  dst.append(src, 1, 2);
  dst.append(src, 3, 1);
  EXPECT_TRUE(dst.holds_bits());
  EXPECT_EQ(dst.format(), Format::bf16);
  EXPECT_EQ(dst.to_vector(), (std::vector<float>{2.0f, 3.0f, 4.0f}));
  FormatValues loose({9.0f});
  EXPECT_THROW(loose.append(src, 0, 1), std::logic_error);
  FormatValues fp16({1.0f});
  fp16.narrow(Format::fp16);
  EXPECT_THROW(dst.append(fp16, 0, 1), std::logic_error);
  loose.append(FormatValues({7.0f}), 0, 1);
  EXPECT_EQ(loose.to_vector(), (std::vector<float>{9.0f, 7.0f}));
}

TEST(FormatValues, LooseValuesBehaveAsAVectorOfFloats) {
  FormatValues v = std::vector<float>(3, 0.5f);
  v.push_back(1.5f);
  v.set(0, -2.0f);
  v.resize(5);
  float sum = 0;
  for (float x : v) sum += x;
  EXPECT_EQ(sum, -2.0f + 0.5f + 0.5f + 1.5f);
  EXPECT_EQ(std::vector<float>(v.begin(), v.end()), v.to_vector());
  EXPECT_EQ(v.end() - v.begin(), 5);
  FormatValues n = v;
  EXPECT_TRUE(n == v);
  n.narrow(Format::bf16);
  EXPECT_TRUE(n == v);  // the same values, held as bits
  v.set(4, 1.0f);
  EXPECT_FALSE(n == v);
}

}  // namespace
}  // namespace ssmv
