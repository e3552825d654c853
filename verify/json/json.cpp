#include "verify/json/json.h"

#include <charconv>
#include <cmath>
#include <iterator>
#include <unordered_set>
#include <vector>

#include "verify/json/syntax_error.h"

namespace ssmv::json {
namespace {

// An iterator over the text that records how far nlohmann's lexer has read (`*cursor`):
// the SAX interface passes no position to key() and start_object()/start_array(), and
// duplicate keys and too deep nesting are reported at their place in the text.
struct TrackedChars {
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = char;

  const char* at;
  const char** cursor;

  // nlohmann's lexer takes a NUL byte for the end of the input, so `"a"\0garbage` would
  // parse; JSON text has no raw NUL, and handing the lexer another control character
  // (U+0001) makes it refuse the byte where it stands, as any stray control character.
  value_type operator*() const { return *at == '\0' ? '\x01' : *at; }
  TrackedChars& operator++() {
    *cursor = ++at;
    return *this;
  }
  TrackedChars operator++(int) {
    TrackedChars before = *this;
    ++*this;
    return before;
  }
  bool operator==(const TrackedChars& o) const { return at == o.at; }
};

// Builds the value from nlohmann's SAX events. Unlike nlohmann's own DOM builder it
// refuses duplicate keys and nesting deeper than kMaxDepth, and adds object members
// without searching the object (ordered_json's insert searches linearly).
class Builder : public nlohmann::json_sax<Value> {
 public:
  Builder(std::string_view text, const char* const* cursor) : text_(text), cursor_(cursor) {}

  Value root;
  SyntaxError error;  // set when a callback returned false
  bool failed = false;

  bool null() override { return add(Value()); }
  bool boolean(bool b) override { return add(Value(b)); }
  bool number_integer(number_integer_t v) override { return add(Value(v)); }
  bool number_unsigned(number_unsigned_t v) override { return add(Value(v)); }
  bool number_float(number_float_t v, const string_t&) override { return add(Value(v)); }
  bool string(string_t& s) override { return add(Value(std::move(s))); }
  bool binary(binary_t&) override { return fail(read(), "binary value"); }  // not in JSON text

  bool start_object(std::size_t) override { return open(Value::object()); }
  bool start_array(std::size_t) override { return open(Value::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool key(string_t& k) override {
    if (!keys_.back().insert(k).second) {
      return fail(key_start(), "duplicate key " + Value(k).dump());
    }
    key_ = std::move(k);
    return true;
  }

  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& e) override {
    error = describe_syntax_error(text_, position, last_token, e, key_);
    failed = true;
    return false;
  }

 private:
  std::string_view text_;
  const char* const* cursor_;
  std::vector<Value*> open_;                        // the containers being filled
  std::vector<std::unordered_set<std::string>> keys_;  // keys of each open object
  std::string key_;                                 // the last key read

  size_t read() const { return size_t(*cursor_ - text_.data()); }

  bool fail(size_t offset, std::string reason) {
    error = {offset, std::move(reason)};
    failed = true;
    return false;
  }

  // The opening quote of the key just read: the lexer stopped after its closing quote,
  // and inside a string every '"' is preceded by an odd number of backslashes.
  size_t key_start() const {
    size_t q = read() - 1;
    while (q-- > 0) {
      if (text_[q] != '"') continue;
      size_t backslashes = 0;
      while (backslashes < q && text_[q - 1 - backslashes] == '\\') ++backslashes;
      if (backslashes % 2 == 0) return q;
    }
    return 0;
  }

  Value* place(Value v) {
    if (open_.empty()) {
      root = std::move(v);
      return &root;
    }
    Value& parent = *open_.back();
    if (parent.is_array()) {
      parent.get_ref<Value::array_t&>().push_back(std::move(v));
      return &parent.get_ref<Value::array_t&>().back();
    }
    auto& members = parent.get_ref<Value::object_t&>();
    members.emplace_back(std::move(key_), std::move(v));  // key() checked it is new
    return &members.back().second;
  }

  bool add(Value v) {
    place(std::move(v));
    return true;
  }

  bool open(Value container) {
    if (open_.size() >= size_t(kMaxDepth)) {  // the bracket just read is level kMaxDepth + 1
      return fail(read() - 1, "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    }
    const bool object = container.is_object();
    open_.push_back(place(std::move(container)));
    if (object) keys_.emplace_back();
    return true;
  }

  bool close() {
    if (open_.back()->is_object()) keys_.pop_back();
    open_.pop_back();
    return true;
  }
};

void dump_to(std::string& out, const Value& v, int indent, int level) {
  const auto newline = [&](int lvl) {
    if (indent < 0) return;
    out += '\n';
    out.append(size_t(indent) * size_t(lvl), ' ');
  };
  switch (v.type()) {
    case Value::value_t::number_float: {
      const double d = v.get<double>();
      if (!std::isfinite(d)) throw std::domain_error("JSON has no literal for a non-finite number");
      if (d == 0 && std::signbit(d)) {
        out += "-0.0";  // "-0" would read back as the integer 0
        return;
      }
      char buf[64];
      const auto r = std::to_chars(buf, buf + sizeof buf, d);  // shortest round trip
      out.append(buf, r.ptr);
      return;
    }
    case Value::value_t::array: {
      out += '[';
      bool first = true;
      for (const Value& item : v) {
        if (!first) out += ',';
        first = false;
        newline(level + 1);
        dump_to(out, item, indent, level + 1);
      }
      if (!v.empty()) newline(level);
      out += ']';
      return;
    }
    case Value::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, member] : v.get_ref<const Value::object_t&>()) {
        if (!first) out += ',';
        first = false;
        newline(level + 1);
        dump_to(out, Value(key), indent, level + 1);
        out += indent < 0 ? ":" : ": ";
        dump_to(out, member, indent, level + 1);
      }
      if (!v.empty()) newline(level);
      out += '}';
      return;
    }
    default:  // null, booleans, integers, strings: nlohmann writes them as ssmv did
      out += v.dump(-1, ' ', false, Value::error_handler_t::replace);
  }
}

}  // namespace

ParseError::ParseError(std::string_view text, size_t offset, const std::string& reason)
    : std::runtime_error([&] {
        size_t line = 1, column = 1;
        for (size_t i = 0; i < offset && i < text.size(); ++i) {
          if (text[i] == '\n') {
            ++line;
            column = 1;
          } else {
            ++column;
          }
        }
        return "JSON line " + std::to_string(line) + " column " + std::to_string(column) + " (byte " +
               std::to_string(offset) + "): " + reason;
      }()),
      offset_(offset),
      reason_(reason) {}

Value parse(std::string_view text) {
  // nlohmann skips a UTF-8 byte-order mark; RFC 8259 text has none, and ssmv never took one.
  if (text.starts_with("\xEF\xBB\xBF")) throw ParseError(text, 0, "invalid value");
  const char* cursor = text.data();
  Builder builder(text, &cursor);
  const bool parsed =
      Value::sax_parse(TrackedChars{text.data(), &cursor}, TrackedChars{text.data() + text.size(), &cursor}, &builder);
  if (!parsed || builder.failed) throw ParseError(text, builder.error.offset, builder.error.reason);
  return std::move(builder.root);
}

std::string dump(const Value& v, int indent) {
  std::string out;
  dump_to(out, v, indent, 0);
  return out;
}

bool is_valid_utf8(std::string_view s) {
  try {
    (void)Value(std::string(s)).dump();  // nlohmann's writer checks UTF-8 (RFC 3629) strictly
    return true;
  } catch (const Value::type_error&) {
    return false;
  }
}

}  // namespace ssmv::json
