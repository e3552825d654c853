// Strict reading of ssmv's own JSON files (contracts, counterexamples): every object's
// members are checked against the fields the format defines, so a missing, misspelt or
// mistyped field is an error naming the file and the field's path, e.g.
//   "mykernel.json: field 'roundings'[1].'format': unknown format 'bf17' (expected ...)".
#pragma once

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "verify/json/json.h"

namespace ssmv::verify {

// Malformed content of an ssmv JSON file; what() = "<file>: field <path>: <reason>" (or
// "<file>: <reason>" for errors of the whole file, such as invalid JSON).
class FileFormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The whole file as text; FileFormatError "<path>: cannot read: <why>" when unreadable.
std::string read_text_file(const std::string& path);

// Parses `text` as JSON; a ParseError becomes "<file>: invalid JSON (truncated or
// malformed): JSON line L column C ...".
json::Value parse_json_file_text(std::string_view text, const std::string& file);

// One JSON value at a path inside a file, with checked accessors that name both.
class Field {
 public:
  Field(const json::Value& value, std::string file, std::string path = "")
      : v_(&value), file_(std::move(file)), path_(std::move(path)) {}

  const json::Value& value() const { return *v_; }
  const std::string& path() const { return path_; }
  const std::string& file() const { return file_; }
  // The member `key` of this object (which must exist), path "<path>.'key'".
  Field member(std::string_view key) const;
  [[noreturn]] void fail(const std::string& reason) const;
  // The value for messages: a string's contents, otherwise the JSON text as nlohmann
  // writes it ("-1", "1.5", "1.0": a number with a fraction or exponent shows one).
  std::string text() const;

  bool as_bool() const;
  const std::string& as_string() const;
  int64_t as_int64() const;
  double as_double() const;   // a finite number
  double as_extended() const; // a finite number, or the strings "inf" / "-inf"
  std::vector<Field> items() const;  // an array's elements, paths "<path>[i]"

 private:
  const json::Value* v_;
  std::string file_, path_;
};

// An object whose members must be exactly `fields` (no more, no fewer): construct, take
// every member with get(), and the constructor has already rejected unknown and missing
// members (naming the first one, and listing what is expected).
class ObjectFields {
 public:
  ObjectFields(const Field& object, std::initializer_list<std::string_view> fields);
  Field get(std::string_view key) const;

 private:
  Field object_;
};

}  // namespace ssmv::verify
