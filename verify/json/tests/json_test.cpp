// verify/json: parsing, checked accessors, error positions, and dump/parse round trips.
#include "verify/json/json.h"

#include <gtest/gtest.h>

#include <cmath>
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
  ASSERT_EQ(v.members.size(), 2u);
  EXPECT_EQ(v.members[0].first, "b");  // file order, not sorted
  const auto& b = v.at("b").as_array();
  ASSERT_EQ(b.size(), 5u);
  EXPECT_EQ(b[0].as_int64(), 1);
  EXPECT_EQ(b[1].as_double(), -2500.0);
  EXPECT_TRUE(b[2].as_bool());
  EXPECT_FALSE(b[3].as_bool());
  EXPECT_TRUE(b[4].is_null());
  EXPECT_EQ(v.at("a").at("s").as_string(), "x\xC3\xA9\n");  // U+00E9 is C3 A9 in UTF-8
  EXPECT_EQ(v.find("missing"), nullptr);
}

TEST(Json, IntegersAreExactToTheInt64Limits) {
  EXPECT_EQ(parse("9223372036854775807").as_int64(), INT64_MAX);
  EXPECT_EQ(parse("-9223372036854775808").as_int64(), INT64_MIN);
  // 2^63 does not fit; 2^53 + 1 is exact here although a double would round it.
  EXPECT_THROW(parse("9223372036854775808").as_int64(), TypeError);
  EXPECT_EQ(parse("9007199254740993").as_int64(), 9007199254740993LL);
  EXPECT_THROW(parse("1.0").as_int64(), TypeError);
  EXPECT_THROW(parse("1e3").as_int64(), TypeError);
}

TEST(Json, DoublesRoundCorrectlyAndOverflowIsAnError) {
  EXPECT_EQ(parse("0.1").as_double(), 0.1);
  EXPECT_EQ(parse("4.9406564584124654e-324").as_double(), 0x1p-1074);  // min subnormal
  EXPECT_EQ(parse("1e-400").as_double(), 0.0);                          // underflow -> 0
  EXPECT_TRUE(std::signbit(parse("-1e-400").as_double()));
  EXPECT_THROW(parse("1e400").as_double(), TypeError);
  // 1.23456789e308 is finite (max 1.797e308); 1.23456789e309 is not.
  EXPECT_EQ(parse("123456789e300").as_double(), 123456789e300);
  EXPECT_THROW(parse("123456789e301").as_double(), TypeError);
}

TEST(Json, SurrogatePairsBecomeOneCodePoint) {
  // U+1F600 = \ud83d\ude00 is F0 9F 98 80 in UTF-8.
  EXPECT_EQ(parse(R"("\ud83d\ude00")").as_string(), "\xF0\x9F\x98\x80");
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

TEST(Json, DeepNestingIsRejectedWithoutRecursingFurther) {
  const std::string ok = std::string(kMaxDepth, '[') + std::string(kMaxDepth, ']');
  EXPECT_NO_THROW(parse(ok));
  // One level deeper than allowed: the error is at the opening bracket of level 257.
  const std::string deep(100000, '[');
  EXPECT_EQ(parse_error(deep), "JSON line 1 column 257 (byte 256): nesting deeper than 256 levels");
}

TEST(Json, TypeErrorsNameExpectedAndFound) {
  try {
    parse("\"x\"").as_int64();
    FAIL() << "no TypeError";
  } catch (const TypeError& e) {
    EXPECT_STREQ(e.what(), "expected an integer, found string \"x\"");
  }
  try {
    parse("{}").at("dtype");
    FAIL() << "no TypeError";
  } catch (const TypeError& e) {
    EXPECT_STREQ(e.what(), "missing member \"dtype\"");
  }
}

TEST(Json, DumpThenParseIsTheIdentity) {
  Value v = Value::object();
  v.add("name", Value::from_string("q\"uote\\ and \x01 control"));
  v.add("pi", Value::from_double(3.141592653589793));
  v.add("tiny", Value::from_double(0x1p-1074));
  v.add("n", Value::from_int(-42));
  v.add("list", Value::array({Value::from_bool(true), Value::null_value(), Value::object()}));
  EXPECT_THROW(v.add("n", Value::from_int(1)), TypeError);
  EXPECT_THROW(Value::from_double(NAN), TypeError);
  for (int indent : {-1, 0, 2}) {
    const Value back = parse(dump(v, indent));
    EXPECT_EQ(dump(back), dump(v)) << "indent " << indent;
    EXPECT_EQ(back.at("pi").as_double(), 3.141592653589793);
    EXPECT_EQ(back.at("tiny").as_double(), 0x1p-1074);
    EXPECT_EQ(back.at("name").as_string(), "q\"uote\\ and \x01 control");
  }
  EXPECT_EQ(dump(v), R"({"name":"q\"uote\\ and \u0001 control","pi":3.141592653589793,)"
                     R"("tiny":5e-324,"n":-42,"list":[true,null,{}]})");
}

}  // namespace
}  // namespace ssmv::json
