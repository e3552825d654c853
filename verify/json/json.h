// ssmv's JSON: nlohmann-json values (nlohmann::ordered_json: object members stay in file
// order), read strictly and written in ssmv's number format. Used for the safetensors
// header and ssmv's own files (contracts, counterexamples, reports).
//
// parse() is nlohmann's parser with ssmv's rules on top: hostile input is expected (the
// tensor-file fuzzer feeds it), so nesting deeper than kMaxDepth, duplicate object keys and
// a byte-order mark are errors, and every error names the byte offset, line and column
// and the reason in ssmv's words (syntax_error.h).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ssmv::json {

using Value = nlohmann::ordered_json;

// Nesting deeper than this is rejected.
inline constexpr int kMaxDepth = 256;

// Malformed text. what() = "JSON line L column C (byte O): <reason>".
class ParseError : public std::runtime_error {
 public:
  ParseError(std::string_view text, size_t offset, const std::string& reason);
  size_t offset() const { return offset_; }
  const std::string& reason() const { return reason_; }

 private:
  size_t offset_;
  std::string reason_;
};

// Parses the whole text (surrounding whitespace allowed). Throws ParseError. Integers are
// exact in [-2^63, 2^64); other numbers are the correctly rounded double, and a number
// beyond the range of double is a ParseError.
Value parse(std::string_view text);

// Serializes; indent < 0 writes one line, otherwise pretty-prints with that many spaces.
// Floating-point numbers are written as the shortest literal that reads back to the same
// double (std::to_chars: 0.1, 1e-07, 5e-324; -0.0 as "-0.0"); a non-finite one, which JSON
// cannot hold, is a std::domain_error. Strings that are not UTF-8 get U+FFFD in place of
// the bad bytes.
std::string dump(const Value& v, int indent = -1);

// True when s is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
// above U+10FFFF) — what parse() demands of strings; writers check names with it.
bool is_valid_utf8(std::string_view s);

}  // namespace ssmv::json
