#include "verify/json/syntax_error.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>

namespace ssmv::json {
namespace {

// nlohmann's messages (3.11): "[json.exception.parse_error.101] parse error at line L,
// column C: syntax error while parsing CONTEXT - DETAIL", where CONTEXT says what was
// expected (value, array, object, object key, object separator) and DETAIL is
// "unexpected TOKEN; expected ..." for a well-formed token in the wrong place, or the
// lexer's complaint ("invalid string: ...", "invalid number; ...", "invalid literal") with
// "; last read: '...'". Text after the value ends in "; expected end of input".
class Describe {
 public:
  Describe(std::string_view text, size_t position, const std::string& last_token, const std::string& message,
           const std::string& last_key)
      : text_(text),
        position_(position),
        last_(last_token),
        message_(message),
        key_(last_key),
        end_(std::min(position, text.size())),
        bad_(position == 0 ? 0 : std::min(position - 1, text.size())) {
    const size_t at = message_.find("while parsing ");
    if (at != std::string::npos) {
      const size_t dash = message_.find(" - ", at);
      context_ = message_.substr(at + 14, dash - (at + 14));
      detail_ = dash == std::string::npos ? "" : message_.substr(dash + 3);
    }
  }

  SyntaxError operator()() const {
    const bool eof = detail_.starts_with("unexpected end of input");
    if (message_.ends_with("; expected end of input")) return {token_start(), "unexpected text after the value"};
    if (context_ == "array") {
      return eof ? SyntaxError{text_.size(), "unexpected end of text in an array"}
                 : SyntaxError{token_start(), "expected ',' or ']' in an array"};
    }
    if (context_ == "object") {
      return eof ? SyntaxError{text_.size(), "unexpected end of text in an object"}
                 : SyntaxError{token_start(), "expected ',' or '}' in an object"};
    }
    if (context_ == "object key") {
      if (eof) return {text_.size(), "unexpected end of text in an object"};
      if (detail_.starts_with("invalid string")) return string_error();
      return {token_start(), "expected a string key"};
    }
    if (context_ == "object separator") {
      return {eof ? text_.size() : token_start(), "expected ':' after key " + nlohmann::json(key_).dump()};
    }
    if (context_ == "value") {
      if (eof) return {text_.size(), "unexpected end of text (expected a value)"};
      if (detail_.starts_with("unexpected ")) return {token_start(), "invalid value"};
      return value_error();
    }
    return {bad_, message_};  // not a message of nlohmann 3.11: quoted whole
  }

  // A number beyond the range of double (nlohmann's out_of_range.406): the whole token.
  SyntaxError overflow() const {
    return {position_ - std::min(position_, last_.size()), "number " + last_ + " is out of the range of double"};
  }

 private:
  std::string_view text_;
  size_t position_;
  const std::string& last_;
  const std::string& message_;
  const std::string& key_;
  size_t end_;  // where the offending token ends (the end of the text at most)
  size_t bad_;  // the character the lexer stopped at (the end of the text at end of input)
  std::string context_, detail_;

  // The length in the text of nlohmann's token string for a token that ends at end_: it
  // shows a control character (at most one, the last) as "<U+XXXX>".
  size_t raw_token_length() const {
    size_t n = last_.size();
    if (end_ > 0 && uint8_t(text_[end_ - 1]) < 0x20 && n >= 8) n -= 7;
    return std::min(n, end_);
  }

  // true / false / null whose first characters precede bad_ (the lexer stopped inside it).
  std::optional<std::pair<size_t, std::string_view>> literal() const {
    for (size_t k = 1; k <= 4 && k <= bad_; ++k) {
      const char c = text_[bad_ - k];
      const std::string_view word = c == 't' ? "true" : c == 'f' ? "false" : c == 'n' ? "null" : "";
      if (k < word.size() && text_.substr(bad_ - k, k) == word.substr(0, k)) return {{bad_ - k, word}};
    }
    return std::nullopt;
  }

  // Where the offending token starts.
  size_t token_start() const {
    if (detail_.starts_with("unexpected ")) {  // a well-formed token ending at position_
      const std::string name = detail_.substr(11, detail_.find(';') - 11);
      const size_t length = name == "true literal" || name == "null literal" ? 4
                            : name == "false literal"                          ? 5
                            : name.ends_with(" literal")                       ? last_.size()  // number, string
                                                                               : name.size() - 2;  // '[', ',', ...
      return position_ - std::min(position_, length);
    }
    if (detail_.starts_with("invalid literal")) {
      const auto word = literal();
      return word ? word->first : bad_;
    }
    if (detail_.starts_with("invalid BOM")) return 0;
    return end_ - raw_token_length();  // strings and numbers: the token string is the token
  }

  // A malformed token where a value was expected.
  SyntaxError value_error() const {
    if (detail_.starts_with("invalid literal")) {
      const auto word = literal();
      if (!word) return {bad_, "invalid value"};
      return {word->first, "invalid literal (expected '" + std::string(word->second) + "')"};
    }
    if (detail_.starts_with("invalid BOM")) return {0, "invalid value"};
    if (detail_.starts_with("invalid number; expected digit after '-'")) return {token_start(), "invalid value"};
    if (detail_.starts_with("invalid number; expected digit after '.'")) return {bad_, "expected a digit after '.'"};
    if (detail_.starts_with("invalid number")) return {bad_, "expected a digit in the exponent"};
    if (detail_.starts_with("invalid string")) return string_error();
    return {bad_, detail_};
  }

  // A malformed string: the string starts at token_start(), the lexer stopped at bad_.
  SyntaxError string_error() const {
    const std::string_view d = std::string_view(detail_).substr(std::string_view("invalid string: ").size());
    if (d.starts_with("missing closing quote")) return {token_start(), "unterminated string"};
    if (d.starts_with("forbidden character after backslash")) {
      if (position_ > text_.size()) return {token_start(), "unterminated string"};
      return {bad_, std::string("invalid escape '\\") + text_[bad_] + "'"};
    }
    if (d.starts_with("'\\u' must be followed by 4 hex digits")) {
      size_t u = bad_;  // back over the hex digits read to the 'u'
      while (u > 0 && std::isxdigit(static_cast<unsigned char>(text_[u - 1]))) --u;
      if (text_.size() - u < 4) return {u, "unexpected end of text in a \\u escape"};
      return {bad_, "invalid hex digit in a \\u escape"};
    }
    if (d.starts_with("surrogate U+DC00..U+DFFF must follow")) return {position_, "lone low surrogate in a \\u escape"};
    if (d.starts_with("surrogate U+D800..U+DBFF must be followed")) {
      // Either "\uXXXX" followed by a code unit outside DC00..DFFF (the lexer read all of
      // it), or something other than "\u" after the high surrogate (read: one character,
      // or a backslash and one more).
      if (position_ <= text_.size() && position_ >= 6 && text_.substr(position_ - 6, 2) == "\\u") {
        return {position_, "high surrogate not followed by a low surrogate"};
      }
      const size_t after = position_ >= 2 && text_[position_ - 2] == '\\' ? position_ - 2 : position_ - 1;
      return {after, "high surrogate not followed by a \\u low surrogate"};
    }
    if (d.starts_with("control character")) return {bad_, "unescaped control character in a string"};
    if (d.starts_with("ill-formed UTF-8 byte")) {
      // The sequence starts at its lead byte: bad_ itself, or a lead byte before bad_
      // followed only by continuation bytes, fewer than its sequence needs.
      size_t start = bad_;
      for (size_t k = 1; k <= 3 && k <= bad_; ++k) {
        const auto b = uint8_t(text_[bad_ - k]);
        if ((b & 0xC0) == 0x80) continue;
        const size_t need = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2;
        if (b >= 0xC2 && b <= 0xF4 && k < need) start = bad_ - k;
        break;
      }
      const auto lead = start < text_.size() ? uint8_t(text_[start]) : 0;
      return {start, lead < 0xC2 || lead > 0xF4 ? "invalid UTF-8 byte in a string"
                                                : "invalid UTF-8 sequence in a string"};
    }
    return {bad_, detail_};
  }
};

}  // namespace

SyntaxError describe_syntax_error(std::string_view text, size_t position, const std::string& last_token,
                                  const nlohmann::detail::exception& error, const std::string& last_key) {
  const std::string message = error.what();
  const Describe describe(text, position, last_token, message, last_key);
  return error.id == 406 ? describe.overflow() : describe();
}

}  // namespace ssmv::json
