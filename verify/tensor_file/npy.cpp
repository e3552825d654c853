#include "verify/tensor_file/npy.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace ssmv::tensor_file {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

// The header dict's values as parsed (each field at most once).
struct Header {
  std::optional<std::string> descr;
  std::optional<bool> fortran_order;
  std::optional<std::vector<int64_t>> shape;
};

// Parser of the dict literal numpy writes (repr of a dict of str, bool and tuple of int).
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const Where& where) : s_(text), where_(where) {}

  Header parse() {
    Header h;
    skip_ws();
    expect('{', "the header must start with '{'");
    skip_ws();
    while (peek() != '}') {
      const std::string key = parse_string("a quoted key");
      skip_ws();
      expect(':', "expected ':' after key '" + key + "'");
      skip_ws();
      const std::string field = "header field '" + key + "'";
      if (key == "descr") {
        if (h.descr) where_.fail(field, "appears twice");
        if (peek() == '[') where_.fail(field, "structured dtypes (a list of fields) are not supported");
        h.descr = parse_string("a quoted dtype string");
      } else if (key == "fortran_order") {
        if (h.fortran_order) where_.fail(field, "appears twice");
        h.fortran_order = parse_bool(field);
      } else if (key == "shape") {
        if (h.shape) where_.fail(field, "appears twice");
        h.shape = parse_shape(field);
      } else {
        where_.fail("header", "unknown key '" + key + "' (expected descr, fortran_order, shape)");
      }
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        skip_ws();
      } else if (peek() != '}') {
        syntax("expected ',' or '}' after the value of '" + key + "'");
      }
    }
    ++pos_;  // '}'
    skip_ws();
    if (pos_ != s_.size()) syntax("unexpected text after the closing '}'");
    return h;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
  const Where& where_;

  [[noreturn]] void syntax(const std::string& what) const {
    where_.fail("header", what + " at byte " + std::to_string(pos_) + " of the header");
  }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t' || s_[pos_] == '\r')) ++pos_;
  }
  void expect(char c, const std::string& what) {
    if (peek() != c) syntax(what);
    ++pos_;
  }

  std::string parse_string(const std::string& what) {
    const char q = peek();
    if (q != '\'' && q != '"') syntax("expected " + what);
    const size_t start = ++pos_;
    while (pos_ < s_.size() && s_[pos_] != q) {
      if (s_[pos_] == '\\') syntax("escapes in strings are not supported");
      ++pos_;
    }
    if (pos_ >= s_.size()) syntax("unterminated string");
    return std::string(s_.substr(start, pos_++ - start));
  }

  bool parse_bool(const std::string& field) {
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    where_.fail(field, "expected True or False");
  }

  std::vector<int64_t> parse_shape(const std::string& field) {
    if (peek() != '(') where_.fail(field, "expected a tuple such as (3, 4) or (5,) or ()");
    ++pos_;
    std::vector<int64_t> dims;
    skip_ws();
    bool comma_after_last = false;
    while (peek() != ')') {
      dims.push_back(parse_int(field, dims.size()));
      skip_ws();
      comma_after_last = false;
      if (peek() == ',') {
        ++pos_;
        comma_after_last = true;
        skip_ws();
      } else if (peek() != ')') {
        where_.fail(field, "expected ',' or ')' after dimension " + std::to_string(dims.size() - 1));
      }
      if (dims.size() > 64) where_.fail(field, "more than 64 dimensions");
    }
    ++pos_;  // ')'
    // Python's one-element tuple needs its comma: "(5)" is the integer 5, not a shape.
    if (dims.size() == 1 && !comma_after_last) where_.fail(field, "(n) is not a tuple; a 1-d shape is written (n,)");
    return dims;
  }

  int64_t parse_int(const std::string& field, size_t index) {
    const std::string dim = "dimension " + std::to_string(index);
    bool negative = false;
    if (peek() == '-') {
      negative = true;
      ++pos_;
    }
    if (peek() < '0' || peek() > '9') where_.fail(field, dim + ": expected a non-negative integer");
    uint64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      v = v * 10 + uint64_t(peek() - '0');
      if (v > uint64_t(INT64_MAX)) where_.fail(field, dim + " does not fit in 64 bits");
      ++pos_;
    }
    if (peek() == 'L') ++pos_;  // Python 2's long suffix, written by old NumPy versions
    if (negative) where_.fail(field, dim + " is -" + std::to_string(v) + ": must be >= 0");
    return int64_t(v);
  }
};

// descr ("<f4") -> dtype and whether the data is big-endian.
DType parse_descr(const std::string& descr, bool& big_endian, const Where& where) {
  const std::string field = "header field 'descr'";
  auto unknown = [&]() {
    where.fail(field, "unknown dtype '" + descr +
                          "' (supported: b1 i1 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8; for bf16 save its bit "
                          "patterns as int16 or uint16)");
  };
  if (descr.size() != 3) unknown();
  const char order = descr[0];
  const std::string type = descr.substr(1);
  DType t;
  if (type == "b1") t = DType::boolean;
  else if (type == "i1") t = DType::i8;
  else if (type == "u1") t = DType::u8;
  else if (type == "i2") t = DType::i16;
  else if (type == "u2") t = DType::u16;
  else if (type == "i4") t = DType::i32;
  else if (type == "u4") t = DType::u32;
  else if (type == "i8") t = DType::i64;
  else if (type == "u8") t = DType::u64;
  else if (type == "f2") t = DType::f16;
  else if (type == "f4") t = DType::f32;
  else if (type == "f8") t = DType::f64;
  else unknown();
  if (order == '<') {
    big_endian = false;
  } else if (order == '>') {
    big_endian = true;
  } else if (order == '|') {
    if (dtype_size(t) != 1) where.fail(field, "'" + descr + "': byte order '|' is only for one-byte types");
    big_endian = false;
  } else {
    where.fail(field, "'" + descr + "': byte order '" + std::string(1, order) +
                          "' is not one of '<' (little-endian), '>' (big-endian), '|' (not applicable)");
  }
  return t;
}

uint32_t read_le(const uint8_t* p, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Reorders Fortran-order (column-major) data into C order (row-major), element by element.
std::vector<uint8_t> fortran_to_c(std::span<const uint8_t> f, const std::vector<int64_t>& shape, size_t es) {
  const size_t rank = shape.size();
  std::vector<uint8_t> c(f.size());
  if (f.empty()) return c;
  std::vector<int64_t> fstride(rank);  // Fortran stride of each axis, in elements
  int64_t s = 1;
  for (size_t k = 0; k < rank; ++k) {
    fstride[k] = s;
    s *= shape[k];
  }
  std::vector<int64_t> idx(rank, 0);  // C-order odometer, last axis fastest
  const size_t n = f.size() / es;
  int64_t src = 0;                    // Fortran offset of idx
  for (size_t dst = 0; dst < n; ++dst) {
    std::memcpy(c.data() + dst * es, f.data() + size_t(src) * es, es);
    for (size_t k = rank; k-- > 0;) {
      if (++idx[k] < shape[k]) {
        src += fstride[k];
        break;
      }
      src -= (idx[k] - 1) * fstride[k];
      idx[k] = 0;
    }
  }
  return c;
}

}  // namespace

Tensor parse_npy(std::span<const uint8_t> bytes, const Where& where, std::shared_ptr<const ByteSource> source) {
  if (bytes.size() < kMagicLen + 2 || std::memcmp(bytes.data(), kMagic, kMagicLen) != 0) {
    where.fail("magic", bytes.size() < kMagicLen + 2 ? "file of " + std::to_string(bytes.size()) +
                                                           " bytes is too short for a .npy header"
                                                     : "does not start with \"\\x93NUMPY\": not a .npy file");
  }
  const int major = bytes[6], minor = bytes[7];
  if (!((major == 1 || major == 2 || major == 3) && minor == 0)) {
    where.fail("version", std::to_string(major) + "." + std::to_string(minor) +
                              " is not a .npy version (1.0, 2.0 and 3.0 are)");
  }
  const int len_bytes = major == 1 ? 2 : 4;
  const size_t prefix = kMagicLen + 2 + size_t(len_bytes);
  if (bytes.size() < prefix) where.fail("header length", "file ends inside the header length");
  const uint64_t header_len = read_le(bytes.data() + 8, len_bytes);
  if (header_len > bytes.size() - prefix) {
    where.fail("header length", std::to_string(header_len) + " bytes, but only " +
                                    std::to_string(bytes.size() - prefix) + " bytes follow (truncated file?)");
  }
  const std::string_view header(reinterpret_cast<const char*>(bytes.data() + prefix), size_t(header_len));
  const Header h = HeaderParser(header, where).parse();
  if (!h.descr) where.fail("header field 'descr'", "missing");
  if (!h.fortran_order) where.fail("header field 'fortran_order'", "missing");
  if (!h.shape) where.fail("header field 'shape'", "missing");

  Tensor t;
  t.name = where.tensor;
  t.file = where.file;
  bool big_endian = false;
  t.dtype = parse_descr(*h.descr, big_endian, where);
  t.shape = *h.shape;
  const size_t es = dtype_size(t.dtype);
  const size_t data_at = prefix + size_t(header_len);
  const uint64_t available = bytes.size() - data_at;
  // Checked against the bytes present, so a hostile shape cannot cause a huge allocation.
  const int64_t n = checked_element_count(t.shape, es, available, where, "header field 'shape'");
  const uint64_t need = uint64_t(n) * es;
  if (need != available) {
    where.fail("data", std::to_string(available) + " bytes of data, but shape " + shape_string(t.shape) + " of '" +
                           *h.descr + "' needs " + std::to_string(need) +
                           (available > need ? " (trailing bytes)" : ""));
  }
  const std::span<const uint8_t> data = bytes.subspan(data_at);
  const bool swap = big_endian && es > 1, transpose = *h.fortran_order && t.shape.size() > 1;
  if (!swap && !transpose) {
    t.set_view(data, std::move(source));  // copies when there is no source to keep the bytes alive
    return t;
  }
  // Reordered bytes cannot be a view: the tensor owns them, and the source's copy is done with.
  std::vector<uint8_t> own = transpose ? fortran_to_c(data, t.shape, es) : std::vector<uint8_t>(data.begin(), data.end());
  if (source != nullptr) source->release(data);
  if (swap) {
    for (size_t i = 0; i < own.size(); i += es) std::reverse(own.begin() + ptrdiff_t(i), own.begin() + ptrdiff_t(i + es));
  }
  t.set_bytes(std::move(own));
  return t;
}

std::vector<uint8_t> write_npy(const Tensor& t) {
  const int64_t n = t.element_count();
  if (n < 0 || t.bytes().size() != size_t(n) * dtype_size(t.dtype)) {
    t.where().fail("data", std::to_string(t.bytes().size()) + " bytes do not hold shape " + shape_string(t.shape));
  }
  std::string descr;
  switch (t.dtype) {
    case DType::boolean: descr = "|b1"; break;
    case DType::u8: descr = "|u1"; break;
    case DType::i8: descr = "|i1"; break;
    case DType::i16: descr = "<i2"; break;
    case DType::u16: descr = "<u2"; break;
    case DType::bf16: descr = "<u2"; break;  // bit patterns: NumPy has no bf16
    case DType::i32: descr = "<i4"; break;
    case DType::u32: descr = "<u4"; break;
    case DType::i64: descr = "<i8"; break;
    case DType::u64: descr = "<u8"; break;
    case DType::f16: descr = "<f2"; break;
    case DType::f32: descr = "<f4"; break;
    case DType::f64: descr = "<f8"; break;
  }
  std::string shape = "(";
  for (size_t i = 0; i < t.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(t.shape[i]);
  if (t.shape.size() == 1) shape += ",";
  shape += ")";
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces and a final '\n' so that data starts at a multiple of 64 (numpy's
  // ARRAY_ALIGN); version 2.0's 4-byte length only when 1.0's 2-byte one cannot hold it.
  int major = 1;
  size_t prefix = kMagicLen + 4;
  if (((header.size() + 1 + prefix + 63) / 64) * 64 - prefix > 65535) {
    major = 2;
    prefix = kMagicLen + 6;
  }
  const size_t total = ((header.size() + 1 + prefix + 63) / 64) * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header += '\n';
  std::vector<uint8_t> out(kMagic, kMagic + kMagicLen);
  out.push_back(uint8_t(major));
  out.push_back(0);
  const uint32_t len = uint32_t(header.size());
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); ++i) out.push_back(uint8_t(len >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), t.bytes().begin(), t.bytes().end());
  return out;
}

}  // namespace ssmv::tensor_file
