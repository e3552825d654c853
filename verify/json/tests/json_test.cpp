// verify/json: strict parsing over nlohmann-json (duplicate keys, depth, byte-order mark),
// ssmv's error positions and reasons, exact integers, and dump/parse round trips in ssmv's
// number format.
#include "verify/json/json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

namespace ssmv::json {
namespace {

// The message of the ParseError that parsing `text` throws ("" if none is thrown).
std::string parse_error(std::string_view text) {
  try {
    parse(text);
  } catch (const ParseError& e) {
    return e.what();
  }
  return "";
}

TEST(Json, ParsesEveryKindAndKeepsMemberOrder) {
  const Value v = parse(R"( {"b": [1, -2.5e3, true, false, null], "a": {"s": "x\u00e9\n"}} )");
  ASSERT_TRUE(v.is_object());
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v.begin().key(), "b");  // file order, not sorted
  const Value& b = v.at("b");
  ASSERT_EQ(b.size(), 5u);
  EXPECT_EQ(b[0].get<int64_t>(), 1);
  EXPECT_EQ(b[1].get<double>(), -2500.0);
  EXPECT_TRUE(b[2].get<bool>());
  EXPECT_FALSE(b[3].get<bool>());
  EXPECT_TRUE(b[4].is_null());
  EXPECT_EQ(v.at("a").at("s").get<std::string>(), "x\xC3\xA9\n");  // U+00E9 is C3 A9 in UTF-8
  EXPECT_FALSE(v.contains("missing"));
}

TEST(Json, IntegersAreExactToTheInt64Limits) {
  EXPECT_EQ(parse("9223372036854775807").get<int64_t>(), INT64_MAX);
  EXPECT_EQ(parse("-9223372036854775808").get<int64_t>(), INT64_MIN);
  // 2^63 is an unsigned integer (no int64); 2^53 + 1 is exact although a double would round it.
  EXPECT_TRUE(parse("9223372036854775808").is_number_unsigned());
  EXPECT_EQ(parse("9007199254740993").get<int64_t>(), 9007199254740993LL);
  EXPECT_TRUE(parse("1.0").is_number_float());
  EXPECT_TRUE(parse("1e3").is_number_float());
  EXPECT_FALSE(parse("-0").is_number_unsigned());  // "-0" is not a non-negative literal
}

TEST(Json, DoublesRoundCorrectlyAndOverflowIsAnError) {
  EXPECT_EQ(parse("0.1").get<double>(), 0.1);
  EXPECT_EQ(parse("4.9406564584124654e-324").get<double>(), 0x1p-1074);  // min subnormal
  EXPECT_EQ(parse("1e-400").get<double>(), 0.0);                          // underflow -> 0
  EXPECT_TRUE(std::signbit(parse("-1e-400").get<double>()));
  EXPECT_EQ(parse_error("[1e400]"), "JSON line 1 column 2 (byte 1): number 1e400 is out of the range of double");
  // 1.23456789e308 is finite (max 1.797e308); 1.23456789e309 is not.
  EXPECT_EQ(parse("123456789e300").get<double>(), 123456789e300);
  EXPECT_EQ(parse_error("123456789e301"),
            "JSON line 1 column 1 (byte 0): number 123456789e301 is out of the range of double");
}

TEST(Json, SurrogatePairsBecomeOneCodePoint) {
  // U+1F600 = \ud83d\ude00 is F0 9F 98 80 in UTF-8.
  EXPECT_EQ(parse(R"("\ud83d\ude00")").get<std::string>(), "\xF0\x9F\x98\x80");
}

TEST(Json, ErrorsNamePositionAndReason) {
  EXPECT_EQ(parse_error("{\"a\": 1,\n \"a\": 2}"), "JSON line 2 column 2 (byte 10): duplicate key \"a\"");
  EXPECT_EQ(parse_error("[1, 2"), "JSON line 1 column 6 (byte 5): unexpected end of text in an array");
  EXPECT_EQ(parse_error("{} x"), "JSON line 1 column 4 (byte 3): unexpected text after the value");
  EXPECT_EQ(parse_error("01"), "JSON line 1 column 2 (byte 1): unexpected text after the value");
  EXPECT_EQ(parse_error("\"abc"), "JSON line 1 column 1 (byte 0): unterminated string");
  EXPECT_EQ(parse_error("\"\\x\""), "JSON line 1 column 3 (byte 2): invalid escape '\\x'");
  EXPECT_EQ(parse_error("\"\\udc00\""), "JSON line 1 column 8 (byte 7): lone low surrogate in a \\u escape");
  EXPECT_EQ(parse_error("\"\xC0\x80\""), "JSON line 1 column 2 (byte 1): invalid UTF-8 byte in a string");
  EXPECT_EQ(parse_error("\"\xED\xA0\x80\""), "JSON line 1 column 2 (byte 1): invalid UTF-8 sequence in a string");
  EXPECT_EQ(parse_error("\"a\tb\""), "JSON line 1 column 3 (byte 2): unescaped control character in a string");
  EXPECT_EQ(parse_error("tru"), "JSON line 1 column 1 (byte 0): invalid literal (expected 'true')");
  EXPECT_EQ(parse_error("-"), "JSON line 1 column 1 (byte 0): invalid value");
  EXPECT_EQ(parse_error("1."), "JSON line 1 column 3 (byte 2): expected a digit after '.'");
  EXPECT_EQ(parse_error(""), "JSON line 1 column 1 (byte 0): unexpected end of text (expected a value)");
}

TEST(Json, ErrorsInEveryPlaceOfTheGrammar) {
  EXPECT_EQ(parse_error("{\"a\": 1, x}"), "JSON line 1 column 10 (byte 9): expected a string key");
  EXPECT_EQ(parse_error("{\"a\" 1}"), "JSON line 1 column 6 (byte 5): expected ':' after key \"a\"");
  EXPECT_EQ(parse_error("{\"a\": 1 2}"), "JSON line 1 column 9 (byte 8): expected ',' or '}' in an object");
  EXPECT_EQ(parse_error("{\"a\": 1"), "JSON line 1 column 8 (byte 7): unexpected end of text in an object");
  EXPECT_EQ(parse_error("[1 true]"), "JSON line 1 column 4 (byte 3): expected ',' or ']' in an array");
  EXPECT_EQ(parse_error("[1, ]"), "JSON line 1 column 5 (byte 4): invalid value");
  EXPECT_EQ(parse_error("[1,"), "JSON line 1 column 4 (byte 3): unexpected end of text (expected a value)");
  EXPECT_EQ(parse_error("[nul]"), "JSON line 1 column 2 (byte 1): invalid literal (expected 'null')");
  EXPECT_EQ(parse_error("1e+"), "JSON line 1 column 4 (byte 3): expected a digit in the exponent");
  EXPECT_EQ(parse_error("\"\\u12\""), "JSON line 1 column 4 (byte 3): unexpected end of text in a \\u escape");
  EXPECT_EQ(parse_error("\"\\u12g4\""), "JSON line 1 column 6 (byte 5): invalid hex digit in a \\u escape");
  EXPECT_EQ(parse_error("\"\\ud800x\""),
            "JSON line 1 column 8 (byte 7): high surrogate not followed by a \\u low surrogate");
  EXPECT_EQ(parse_error("\"\\ud800\\u0041\""),
            "JSON line 1 column 14 (byte 13): high surrogate not followed by a low surrogate");
  EXPECT_EQ(parse_error("[1] \"ab"), "JSON line 1 column 5 (byte 4): unexpected text after the value");
  EXPECT_EQ(parse_error("\"a\xC3\""), "JSON line 1 column 3 (byte 2): invalid UTF-8 sequence in a string");
  // nlohmann would skip a byte-order mark; ssmv's files never had one.
  EXPECT_EQ(parse_error("\xEF\xBB\xBF{}"), "JSON line 1 column 1 (byte 0): invalid value");
}

// nlohmann's lexer ends the input at a NUL byte; ssmv refuses the byte where it stands
// (a fuzzed safetensors header "\"Q...\"\0" parsed as a string before; the regression corpus
// of verify/tensor_file/fuzz holds it).
TEST(Json, NulBytesAreRefusedWhereTheyStand) {
  using namespace std::string_literals;
  EXPECT_EQ(parse_error("\"a\"\0"s), "JSON line 1 column 4 (byte 3): unexpected text after the value");
  EXPECT_EQ(parse_error("\0{}"s), "JSON line 1 column 1 (byte 0): invalid value");
  EXPECT_EQ(parse_error("{\"a\": 1}\0\0"s), "JSON line 1 column 9 (byte 8): unexpected text after the value");
  EXPECT_NE(parse_error("\"a\0b\""s), "");
}

TEST(Json, DeepNestingIsRejected) {
  const std::string ok = std::string(kMaxDepth, '[') + std::string(kMaxDepth, ']');
  EXPECT_NO_THROW(parse(ok));
  // One level deeper than allowed: the error is at the opening bracket of level 257.
  const std::string deep(100000, '[');
  EXPECT_EQ(parse_error(deep), "JSON line 1 column 257 (byte 256): nesting deeper than 256 levels");
}

TEST(Json, DumpThenParseIsTheIdentity) {
  Value v = Value::object();
  v["name"] = "q\"uote\\ and \x01 control";
  v["pi"] = 3.141592653589793;
  v["tiny"] = 0x1p-1074;
  v["n"] = int64_t{-42};
  v["whole"] = 5.0;
  v["neg_zero"] = -0.0;
  v["list"] = Value::array({true, nullptr, Value::object()});
  EXPECT_THROW(dump(Value(NAN)), std::domain_error);
  for (int indent : {-1, 0, 2}) {
    const Value back = parse(dump(v, indent));
    EXPECT_EQ(dump(back), dump(v)) << "indent " << indent;
    EXPECT_EQ(back.at("pi").get<double>(), 3.141592653589793);
    EXPECT_EQ(back.at("tiny").get<double>(), 0x1p-1074);
    EXPECT_TRUE(std::signbit(back.at("neg_zero").get<double>()));
    EXPECT_EQ(back.at("name").get<std::string>(), "q\"uote\\ and \x01 control");
  }
  EXPECT_EQ(dump(v), R"({"name":"q\"uote\\ and \u0001 control","pi":3.141592653589793,)"
                     R"("tiny":5e-324,"n":-42,"whole":5,"neg_zero":-0.0,"list":[true,null,{}]})");
  EXPECT_EQ(dump(parse("{\"a\": [1, {}], \"b\": []}"), 2), "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": []\n}");
}

TEST(Json, Utf8Validity) {
  EXPECT_TRUE(is_valid_utf8("x\xC3\xA9"));
  EXPECT_FALSE(is_valid_utf8("\xC0\x80"));      // overlong
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));  // surrogate
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
}

}  // namespace
}  // namespace ssmv::json
