#include "verify/json/json.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

namespace ssmv::json {
namespace {

std::string describe(const Value& v) {
  switch (v.kind) {
    case Kind::null: return "null";
    case Kind::boolean: return v.boolean ? "true" : "false";
    case Kind::number: return "number " + v.text;
    case Kind::string: return "string " + quote(v.text.substr(0, 40));
    case Kind::array: return "array of " + std::to_string(v.items.size());
    case Kind::object: return "object of " + std::to_string(v.members.size()) + " members";
  }
  return "?";
}

[[noreturn]] void wrong_kind(const Value& v, std::string_view expected) {
  throw TypeError("expected " + std::string(expected) + ", found " + describe(v));
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xC0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += char(0xE0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  } else {
    out += char(0xF0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3F));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  }
}

// Length of the well-formed UTF-8 sequence that starts s (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF), or 0 when it is not one.
size_t utf8_sequence_length(std::string_view s) {
  const auto b0 = uint8_t(s[0]);
  if (b0 < 0x80) return 1;
  size_t len;
  uint32_t cp;
  if (b0 >= 0xC2 && b0 <= 0xDF) { len = 2; cp = b0 & 0x1F; }
  else if (b0 >= 0xE0 && b0 <= 0xEF) { len = 3; cp = b0 & 0x0F; }
  else if (b0 >= 0xF0 && b0 <= 0xF4) { len = 4; cp = b0 & 0x07; }
  else return 0;
  if (s.size() < len) return 0;
  for (size_t i = 1; i < len; ++i) {
    const auto b = uint8_t(s[i]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  const bool overlong = (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
  if (overlong || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return 0;
  return len;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  Value parse_document() {
    skip_ws();
    Value v = parse_value(0);
    skip_ws();
    if (pos_ != s_.size()) fail("unexpected text after the value");
    return v;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;

  [[noreturn]] void fail(const std::string& reason) const { fail_at(pos_, reason); }
  [[noreturn]] void fail_at(size_t at, const std::string& reason) const {
    size_t line = 1, column = 1;
    for (size_t i = 0; i < at && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    throw ParseError(at, line, column, reason);
  }

  bool at_end() const { return pos_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[pos_]; }

  void skip_ws() {
    while (!at_end() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }

  void expect_literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) fail("invalid literal (expected '" + std::string(word) + "')");
    pos_ += word.size();
  }

  Value parse_value(int depth) {
    if (at_end()) fail("unexpected end of text (expected a value)");
    switch (peek()) {
      case '{': return parse_object(depth + 1);
      case '[': return parse_array(depth + 1);
      case '"': {
        Value v;
        v.kind = Kind::string;
        v.text = parse_string();
        return v;
      }
      case 't': expect_literal("true"); return Value::from_bool(true);
      case 'f': expect_literal("false"); return Value::from_bool(false);
      case 'n': expect_literal("null"); return Value{};
      default: return parse_number();
    }
  }

  void check_depth(int depth) const {
    if (depth > kMaxDepth) fail("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
  }

  Value parse_array(int depth) {
    check_depth(depth);
    ++pos_;  // '['
    Value v = Value::array();
    skip_ws();
    if (peek() == ']') {
      ++pos_;
      return v;
    }
    while (true) {
      skip_ws();
      v.items.push_back(parse_value(depth));
      skip_ws();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() == ']') {
        ++pos_;
        return v;
      } else {
        fail(at_end() ? "unexpected end of text in an array" : "expected ',' or ']' in an array");
      }
    }
  }

  Value parse_object(int depth) {
    check_depth(depth);
    ++pos_;  // '{'
    Value v = Value::object();
    std::set<std::string> keys;  // duplicate detection in O(log n) per key
    skip_ws();
    if (peek() == '}') {
      ++pos_;
      return v;
    }
    while (true) {
      skip_ws();
      if (peek() != '"') fail(at_end() ? "unexpected end of text in an object" : "expected a string key");
      const size_t key_at = pos_;
      std::string key = parse_string();
      if (!keys.insert(key).second) fail_at(key_at, "duplicate key " + quote(key));
      skip_ws();
      if (peek() != ':') fail("expected ':' after key " + quote(key));
      ++pos_;
      skip_ws();
      Value member = parse_value(depth);
      v.members.emplace_back(std::move(key), std::move(member));
      skip_ws();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() == '}') {
        ++pos_;
        return v;
      } else {
        fail(at_end() ? "unexpected end of text in an object" : "expected ',' or '}' in an object");
      }
    }
  }

  uint32_t parse_hex4() {
    if (s_.size() - pos_ < 4) fail("unexpected end of text in a \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = s_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= uint32_t(c - '0');
      else if (c >= 'a' && c <= 'f') v |= uint32_t(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= uint32_t(c - 'A' + 10);
      else fail_at(pos_ - 1, "invalid hex digit in a \\u escape");
    }
    return v;
  }

  // One UTF-8 sequence starting at pos_ (first byte >= 0x80).
  void copy_utf8(std::string& out) {
    const size_t len = utf8_sequence_length(s_.substr(pos_));
    if (len == 0) fail(uint8_t(s_[pos_]) < 0xC2 || uint8_t(s_[pos_]) > 0xF4 ? "invalid UTF-8 byte in a string"
                                                                            : "invalid UTF-8 sequence in a string");
    out.append(s_.substr(pos_, len));
    pos_ += len;
  }

  std::string parse_string() {
    const size_t open = pos_;
    ++pos_;  // '"'
    std::string out;
    while (true) {
      if (at_end()) fail_at(open, "unterminated string");
      const char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (uint8_t(c) < 0x20) fail("unescaped control character in a string");
      if (uint8_t(c) >= 0x80) {
        copy_utf8(out);
        continue;
      }
      if (c != '\\') {
        out += c;
        ++pos_;
        continue;
      }
      ++pos_;
      if (at_end()) fail_at(open, "unterminated string");
      const char e = s_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = parse_hex4();
          if (cp >= 0xDC00 && cp <= 0xDFFF) fail("lone low surrogate in a \\u escape");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (s_.substr(pos_, 2) != "\\u") fail("high surrogate not followed by a \\u low surrogate");
            pos_ += 2;
            const uint32_t lo = parse_hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) fail("high surrogate not followed by a low surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default: fail_at(pos_ - 1, std::string("invalid escape '\\") + e + "'");
      }
    }
  }

  Value parse_number() {
    const size_t start = pos_;
    auto digits = [&] {
      const size_t d = pos_;
      while (!at_end() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      return pos_ - d;
    };
    if (peek() == '-') ++pos_;
    if (peek() == '0') {
      ++pos_;
    } else if (digits() == 0) {
      fail_at(start, "invalid value");
    }
    if (peek() == '.') {
      ++pos_;
      if (digits() == 0) fail("expected a digit after '.'");
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (digits() == 0) fail("expected a digit in the exponent");
    }
    Value v;
    v.kind = Kind::number;
    v.text = std::string(s_.substr(start, pos_ - start));
    return v;
  }
};

void dump_to(std::string& out, const Value& v, int indent, int level) {
  auto newline = [&](int lvl) {
    if (indent < 0) return;
    out += '\n';
    out.append(size_t(indent) * size_t(lvl), ' ');
  };
  switch (v.kind) {
    case Kind::null: out += "null"; return;
    case Kind::boolean: out += v.boolean ? "true" : "false"; return;
    case Kind::number: out += v.text; return;
    case Kind::string: out += quote(v.text); return;
    case Kind::array:
      out += '[';
      for (size_t i = 0; i < v.items.size(); ++i) {
        if (i) out += ',';
        newline(level + 1);
        dump_to(out, v.items[i], indent, level + 1);
      }
      if (!v.items.empty()) newline(level);
      out += ']';
      return;
    case Kind::object:
      out += '{';
      for (size_t i = 0; i < v.members.size(); ++i) {
        if (i) out += ',';
        newline(level + 1);
        out += quote(v.members[i].first);
        out += indent < 0 ? ":" : ": ";
        dump_to(out, v.members[i].second, indent, level + 1);
      }
      if (!v.members.empty()) newline(level);
      out += '}';
      return;
  }
}

}  // namespace

ParseError::ParseError(size_t offset, size_t line, size_t column, const std::string& reason)
    : std::runtime_error("JSON line " + std::to_string(line) + " column " + std::to_string(column) +
                         " (byte " + std::to_string(offset) + "): " + reason),
      offset_(offset),
      line_(line),
      column_(column),
      reason_(reason) {}

std::string_view kind_name(Kind k) {
  switch (k) {
    case Kind::null: return "null";
    case Kind::boolean: return "boolean";
    case Kind::number: return "number";
    case Kind::string: return "string";
    case Kind::array: return "array";
    case Kind::object: return "object";
  }
  return "?";
}

Value Value::from_bool(bool b) {
  Value v;
  v.kind = Kind::boolean;
  v.boolean = b;
  return v;
}

Value Value::from_string(std::string s) {
  Value v;
  v.kind = Kind::string;
  v.text = std::move(s);
  return v;
}

Value Value::from_int(int64_t i) {
  Value v;
  v.kind = Kind::number;
  v.text = std::to_string(i);
  return v;
}

Value Value::from_double(double d) {
  if (!std::isfinite(d)) throw TypeError("JSON has no literal for a non-finite number");
  char buf[64];
  // Shortest round-trip form, e.g. "0.1", "1e-07", "5e-324": every one a JSON number.
  const auto r = std::to_chars(buf, buf + sizeof buf, d);
  Value v;
  v.kind = Kind::number;
  v.text.assign(buf, r.ptr);
  return v;
}

Value Value::array(std::vector<Value> items) {
  Value v;
  v.kind = Kind::array;
  v.items = std::move(items);
  return v;
}

Value Value::object(std::vector<Member> members) {
  Value v;
  v.kind = Kind::object;
  for (auto& m : members) v.add(std::move(m.first), std::move(m.second));
  return v;
}

bool Value::is_integer() const {
  return kind == Kind::number && text.find_first_of(".eE") == std::string::npos;
}

bool Value::as_bool() const {
  if (kind != Kind::boolean) wrong_kind(*this, "a boolean");
  return boolean;
}

const std::string& Value::as_string() const {
  if (kind != Kind::string) wrong_kind(*this, "a string");
  return text;
}

int64_t Value::as_int64() const {
  if (!is_integer()) wrong_kind(*this, "an integer");
  int64_t out = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), out);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size()) {
    throw TypeError("integer " + text + " does not fit in 64 bits");
  }
  return out;
}

double Value::as_double() const {
  if (kind != Kind::number) wrong_kind(*this, "a number");
  double out = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), out);
  if (r.ec == std::errc::result_out_of_range) {
    // Overflow or underflow: decide by the decimal exponent of the leading digit.
    const size_t e_at = text.find_first_of("eE");
    const std::string mant = text.substr(0, e_at);
    long long exp10 = 0;
    if (e_at != std::string::npos) {
      const std::string e = text.substr(e_at + 1);
      // Saturate absurd exponents; only the sign of the final figure matters.
      const auto er = std::from_chars(e.data() + (e[0] == '+'), e.data() + e.size(), exp10);
      if (er.ec != std::errc()) exp10 = e[0] == '-' ? -1'000'000'000LL : 1'000'000'000LL;
    }
    const size_t first = mant.find_first_of("123456789");
    const size_t point = mant.find('.') == std::string::npos ? mant.size() : mant.find('.');
    const long long lead = first == std::string::npos ? 0
                           : first < point            ? (long long)(point - first) - 1
                                                      : -(long long)(first - point);
    if (first == std::string::npos || exp10 + lead < 0) return text[0] == '-' ? -0.0 : 0.0;
    throw TypeError("number " + text + " overflows a double");
  }
  if (r.ec != std::errc() || r.ptr != text.data() + text.size()) {
    throw TypeError("number " + text + " is not a valid number");
  }
  return out;
}

const std::vector<Value>& Value::as_array() const {
  if (kind != Kind::array) wrong_kind(*this, "an array");
  return items;
}

const std::vector<Value::Member>& Value::as_object() const {
  if (kind != Kind::object) wrong_kind(*this, "an object");
  return members;
}

const Value* Value::find(std::string_view key) const {
  if (kind != Kind::object) return nullptr;
  for (const auto& m : members) {
    if (m.first == key) return &m.second;
  }
  return nullptr;
}

const Value& Value::at(std::string_view key) const {
  if (kind != Kind::object) wrong_kind(*this, "an object");
  const Value* v = find(key);
  if (v == nullptr) throw TypeError("missing member " + quote(key));
  return *v;
}

Value& Value::add(std::string key, Value v) {
  if (kind != Kind::object) wrong_kind(*this, "an object");
  if (find(key) != nullptr) throw TypeError("duplicate key " + quote(key));
  members.emplace_back(std::move(key), std::move(v));
  return members.back().second;
}

Value parse(std::string_view text) { return Parser(text).parse_document(); }

std::string dump(const Value& v, int indent) {
  std::string out;
  dump_to(out, v, indent, 0);
  return out;
}

bool is_valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t len = utf8_sequence_length(s.substr(i));
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (uint8_t(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(uint8_t(c)));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

}  // namespace ssmv::json
