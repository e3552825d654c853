#include "verify/contracts/json_fields.h"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

namespace ssmv::verify {
namespace {

std::string join(std::initializer_list<std::string_view> names) {
  std::string s;
  for (std::string_view n : names) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

std::string member_path(const std::string& parent, std::string_view key) {
  return (parent.empty() ? "" : parent + ".") + "'" + std::string(key) + "'";
}

}  // namespace

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FileFormatError(path + ": cannot read: " + std::strerror(errno));
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) throw FileFormatError(path + ": cannot read: I/O error");
  return s.str();
}

json::Value parse_json_file_text(std::string_view text, const std::string& file) {
  try {
    return json::parse(text);
  } catch (const json::ParseError& e) {
    throw FileFormatError(file + ": invalid JSON (truncated or malformed): " + e.what());
  }
}

void Field::fail(const std::string& reason) const {
  throw FileFormatError(file_ + ": " + (path_.empty() ? std::string("top level") : "field " + path_) +
                        ": " + reason);
}

namespace {
std::string found(const json::Value& v) { return "found " + std::string(v.type_name()); }
}  // namespace

std::string Field::text() const {
  return v_->is_string() ? v_->get<std::string>() : v_->dump(-1, ' ', false, json::Value::error_handler_t::replace);
}

bool Field::as_bool() const {
  if (!v_->is_boolean()) fail("expected true or false, " + found(*v_));
  return v_->get<bool>();
}

const std::string& Field::as_string() const {
  if (!v_->is_string()) fail("expected a string, " + found(*v_));
  return v_->get_ref<const std::string&>();
}

int64_t Field::as_int64() const {
  if (!v_->is_number()) fail("expected an integer, " + found(*v_));
  // An unsigned integer above 2^63 - 1, or a number written with a fraction or an
  // exponent (nlohmann's float, shown as it writes one: 1.0, 1000.0), is no int64.
  if (v_->is_number_integer() && (!v_->is_number_unsigned() || v_->get<uint64_t>() <= uint64_t(INT64_MAX))) {
    return v_->get<int64_t>();
  }
  fail("expected an integer, found " + text());
}

double Field::as_double() const {
  if (!v_->is_number()) fail("expected a number, " + found(*v_));
  return v_->get<double>();  // finite: parse() refuses numbers beyond the range of double
}

double Field::as_extended() const {
  if (v_->is_string()) {
    const std::string& s = v_->get_ref<const std::string&>();
    if (s == "inf") return HUGE_VAL;
    if (s == "-inf") return -HUGE_VAL;
    fail("expected a number, \"inf\" or \"-inf\", found \"" + s + "\"");
  }
  if (!v_->is_number()) fail("expected a number, \"inf\" or \"-inf\", " + found(*v_));
  return as_double();
}

std::vector<Field> Field::items() const {
  if (!v_->is_array()) fail("expected an array, " + found(*v_));
  std::vector<Field> out;
  out.reserve(v_->size());
  for (size_t i = 0; i < v_->size(); ++i) {
    out.emplace_back((*v_)[i], file_, path_ + "[" + std::to_string(i) + "]");
  }
  return out;
}

Field Field::member(std::string_view key) const {
  const auto m = v_->is_object() ? v_->find(key) : v_->end();
  if (m == v_->end()) Field(*v_, file_, member_path(path_, key)).fail("missing");
  return Field(*m, file_, member_path(path_, key));
}

ObjectFields::ObjectFields(const Field& object, std::initializer_list<std::string_view> fields)
    : object_(object) {
  const json::Value& v = object.value();
  if (!v.is_object()) object.fail("expected an object, " + found(v));
  for (const auto& [key, member] : v.get_ref<const json::Value::object_t&>()) {
    bool known = false;
    for (std::string_view f : fields) known = known || f == key;
    if (!known) object.member(key).fail("unknown field (expected " + join(fields) + ")");
  }
  for (std::string_view f : fields) {
    if (!v.contains(f)) object.member(f);  // fails: "field <path>.'f': missing"
  }
}

Field ObjectFields::get(std::string_view key) const { return object_.member(key); }

}  // namespace ssmv::verify
