// A small, strict JSON (RFC 8259) parser and writer: the safetensors header and ssmv's
// own JSON files (contracts, reports). No external library; hostile input is expected
// (the tensor-file fuzzer feeds it), so the parser never recurses deeper than kMaxDepth,
// rejects duplicate object keys, invalid UTF-8 escapes and trailing garbage, and reports
// the byte offset, line and column of the first error.
//
// Numbers keep their literal text: as_int64() is exact for every integer literal in
// [-2^63, 2^63) and as_double() is the correctly rounded value (std::from_chars).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ssmv::json {

// Nesting deeper than this is rejected (bounds the parser's recursion).
inline constexpr int kMaxDepth = 256;

// Malformed text. what() = "JSON line L column C (byte O): <reason>".
class ParseError : public std::runtime_error {
 public:
  ParseError(size_t offset, size_t line, size_t column, const std::string& reason);
  size_t offset() const { return offset_; }
  size_t line() const { return line_; }
  size_t column() const { return column_; }
  const std::string& reason() const { return reason_; }

 private:
  size_t offset_, line_, column_;
  std::string reason_;
};

// A value used as the wrong kind (e.g. as_int64() on a string, or a fractional number).
class TypeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Kind : uint8_t { null, boolean, number, string, array, object };
std::string_view kind_name(Kind k);  // "null", "boolean", "number", ...

struct Value {
  using Member = std::pair<std::string, Value>;

  Kind kind = Kind::null;
  bool boolean = false;
  std::string text;             // a string's contents (UTF-8), or a number's literal
  std::vector<Value> items;     // array elements
  std::vector<Member> members;  // object members in file order; keys are unique

  static Value null_value() { return Value{}; }
  static Value from_bool(bool b);
  static Value from_string(std::string s);
  static Value from_int(int64_t v);
  // Shortest literal that reads back to exactly v; throws TypeError for NaN or Inf.
  static Value from_double(double v);
  static Value array(std::vector<Value> items = {});
  static Value object(std::vector<Member> members = {});

  bool is_null() const { return kind == Kind::null; }
  bool is_bool() const { return kind == Kind::boolean; }
  bool is_number() const { return kind == Kind::number; }
  bool is_string() const { return kind == Kind::string; }
  bool is_array() const { return kind == Kind::array; }
  bool is_object() const { return kind == Kind::object; }
  // A number literal without fraction or exponent.
  bool is_integer() const;

  // Checked accessors: TypeError naming the expected and the found kind or value.
  bool as_bool() const;
  const std::string& as_string() const;
  int64_t as_int64() const;  // integer literal within int64
  double as_double() const;  // any number; overflow to ±Inf is a TypeError
  const std::vector<Value>& as_array() const;
  const std::vector<Member>& as_object() const;

  // Object member by key, or nullptr (also nullptr when this is not an object).
  const Value* find(std::string_view key) const;
  // Object member by key; TypeError "missing member 'key'" when absent.
  const Value& at(std::string_view key) const;
  // Appends a member to an object; TypeError on a duplicate key or a non-object.
  Value& add(std::string key, Value v);
};

// Parses the whole text (surrounding whitespace allowed). Throws ParseError.
Value parse(std::string_view text);

// Serializes; indent < 0 writes one line, otherwise pretty-prints with that many spaces.
std::string dump(const Value& v, int indent = -1);

// True when s is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
// above U+10FFFF) — what parse() demands of strings; writers check names with it.
bool is_valid_utf8(std::string_view s);

// A JSON string literal with quotes, escaping '"', '\\' and control characters.
std::string quote(std::string_view s);

}  // namespace ssmv::json
