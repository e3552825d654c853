#include "verify/tensor_file/safetensors.h"

#include <algorithm>
#include <cstdint>
#include <tuple>

#include "verify/json/json.h"

namespace ssmv::tensor_file {
namespace {

constexpr std::pair<const char*, DType> kDTypes[] = {
    {"BOOL", DType::boolean}, {"U8", DType::u8},   {"I8", DType::i8},     {"I16", DType::i16},
    {"U16", DType::u16},      {"I32", DType::i32}, {"U32", DType::u32},   {"I64", DType::i64},
    {"U64", DType::u64},      {"F16", DType::f16}, {"BF16", DType::bf16}, {"F32", DType::f32},
    {"F64", DType::f64},
};

// The reference implementation's MAX_HEADER_SIZE: larger headers are refused there too.
// It also bounds the JSON tree built from a header (about 44 bytes per input byte at worst).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
// Same limit on the rank as for .npy shapes.
constexpr size_t kMaxRank = 64;

uint64_t read_u64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// One tensor's entry of the header, parsed and checked against the buffer size.
struct Entry {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t begin, end;
};

Entry parse_entry(const std::string& name, const json::Value& v, uint64_t buffer, const Where& where) {
  if (!v.is_object()) where.fail("header", "entry is not a JSON object");
  Entry e;
  e.name = name;
  for (const auto& [key, value] : v.get_ref<const json::Value::object_t&>()) {
    if (key != "dtype" && key != "shape" && key != "data_offsets") {
      where.fail("header", "unknown field '" + key + "' (expected dtype, shape, data_offsets)");
    }
  }
  const std::string fd = "header field 'dtype'", fs = "header field 'shape'", fo = "header field 'data_offsets'";
  const auto dt = v.find("dtype"), sh = v.find("shape"), off = v.find("data_offsets");
  if (dt == v.end()) where.fail(fd, "missing");
  if (sh == v.end()) where.fail(fs, "missing");
  if (off == v.end()) where.fail(fo, "missing");
  if (!dt->is_string()) where.fail(fd, "is not a string");
  const std::string& dtype = dt->get_ref<const std::string&>();
  if (!parse_safetensors_dtype(dtype, e.dtype)) {
    where.fail(fd, "unknown dtype \"" + dtype + "\" (supported: BOOL U8 I8 I16 U16 I32 U32 I64 U64 F16 BF16 F32 F64)");
  }
  if (!sh->is_array()) where.fail(fs, "is not an array");
  if (sh->size() > kMaxRank) where.fail(fs, "more than " + std::to_string(kMaxRank) + " dimensions");
  // Non-negative integer literals are nlohmann's unsigned numbers ("-0" is a signed one);
  // an integer of 2^64 or more is a float.
  for (size_t i = 0; i < sh->size(); ++i) {
    const json::Value& d = (*sh)[i];
    if (!d.is_number_unsigned()) where.fail(fs, "dimension " + std::to_string(i) + " is not a non-negative integer");
    if (d.get<uint64_t>() > uint64_t(INT64_MAX)) {
      where.fail(fs, "dimension " + std::to_string(i) + " = " + d.dump() + " does not fit in 64 bits");
    }
    e.shape.push_back(d.get<int64_t>());
  }
  if (!off->is_array() || off->size() != 2) where.fail(fo, "is not an array of two integers [begin, end]");
  uint64_t o[2];
  for (int i = 0; i < 2; ++i) {
    const json::Value& x = (*off)[size_t(i)];
    if (!x.is_number_unsigned()) where.fail(fo, "is not an array of two non-negative integers");
    if (x.get<uint64_t>() > uint64_t(INT64_MAX)) where.fail(fo, x.dump() + " does not fit in 64 bits");
    o[i] = x.get<uint64_t>();
  }
  e.begin = o[0];
  e.end = o[1];
  if (e.begin > e.end) where.fail(fo, "[" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "]: begin is after end");
  if (e.end > buffer) {
    where.fail(fo, "[" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "] runs past the data buffer of " +
                       std::to_string(buffer) + " bytes");
  }
  const int64_t n = checked_element_count(e.shape, dtype_size(e.dtype), buffer, where, fs);
  if (uint64_t(n) * dtype_size(e.dtype) != e.end - e.begin) {
    where.fail(fo, "[" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "] holds " +
                       std::to_string(e.end - e.begin) + " bytes, shape " + shape_string(e.shape) + " of " + dtype +
                       " needs " + std::to_string(uint64_t(n) * dtype_size(e.dtype)));
  }
  return e;
}

}  // namespace

bool parse_safetensors_dtype(const std::string& name, DType& out) {
  for (const auto& [n, t] : kDTypes) {
    if (name == n) {
      out = t;
      return true;
    }
  }
  return false;
}

std::string safetensors_dtype_name(DType t) {
  for (const auto& [n, d] : kDTypes) {
    if (d == t) return n;
  }
  return "?";
}

TensorMap parse_safetensors(std::span<const uint8_t> bytes, const Where& where,
                            std::map<std::string, std::string>* metadata,
                            const std::shared_ptr<const ByteSource>& source) {
  if (bytes.size() < 8) {
    where.fail("header size", "file of " + std::to_string(bytes.size()) + " bytes is too short for a safetensors header");
  }
  const uint64_t n = read_u64(bytes.data());
  if (n > kMaxHeaderBytes) {
    where.fail("header size", std::to_string(n) + " bytes exceeds the format's limit of " + std::to_string(kMaxHeaderBytes));
  }
  if (n > bytes.size() - 8) {
    where.fail("header size", std::to_string(n) + " bytes, but only " + std::to_string(bytes.size() - 8) +
                                  " bytes follow (truncated file, or not a safetensors file)");
  }
  const std::string_view text(reinterpret_cast<const char*>(bytes.data() + 8), size_t(n));
  if (text.empty() || text[0] != '{') where.fail("header", "does not start with '{' (not a safetensors file?)");
  json::Value header;
  try {
    header = json::parse(text);
  } catch (const json::ParseError& e) {
    where.fail("header", e.what());
  }
  if (!header.is_object()) where.fail("header", "is not a JSON object");
  const uint64_t buffer = bytes.size() - 8 - n;
  const std::span<const uint8_t> data = bytes.subspan(size_t(8 + n));

  std::vector<Entry> entries;
  for (const auto& [name, value] : header.get_ref<const json::Value::object_t&>()) {
    if (name == "__metadata__") {
      if (!value.is_object()) where.fail("__metadata__", "is not a JSON object");
      for (const auto& [k, v] : value.get_ref<const json::Value::object_t&>()) {
        if (!v.is_string()) where.fail("__metadata__", "value of '" + k + "' is not a string");
        if (metadata) (*metadata)[k] = v.get<std::string>();
      }
      continue;
    }
    entries.push_back(parse_entry(name, value, buffer, where.with_tensor(name)));
  }
  // Sorted by offset, the tensors must tile [0, buffer) exactly.
  std::vector<const Entry*> order;
  for (const Entry& e : entries) order.push_back(&e);
  std::sort(order.begin(), order.end(),
            [](const Entry* a, const Entry* b) { return std::tie(a->begin, a->end) < std::tie(b->begin, b->end); });
  uint64_t covered = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    const Entry& e = *order[i];
    const std::string fo = "header field 'data_offsets'";
    if (e.begin < covered) {
      where.with_tensor(e.name).fail(fo, "[" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                                             "] overlaps tensor '" + order[i - 1]->name + "'");
    }
    if (e.begin > covered) {
      where.with_tensor(e.name).fail(fo, "[" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "] leaves bytes [" +
                                             std::to_string(covered) + ", " + std::to_string(e.begin) +
                                             ") of the buffer unused (a hole)");
    }
    covered = e.end;
  }
  if (covered != buffer) {
    where.fail("data", "the tensors cover " + std::to_string(covered) + " of the buffer's " + std::to_string(buffer) +
                           " bytes (trailing bytes)");
  }
  TensorMap out;
  for (const Entry& e : entries) {
    Tensor t;
    t.name = e.name;
    t.file = where.file;
    t.dtype = e.dtype;
    t.shape = e.shape;
    t.set_view(data.subspan(size_t(e.begin), size_t(e.end - e.begin)), source);  // a copy without a source
    out.emplace(e.name, std::move(t));  // JSON keys are unique: the parser rejects duplicates
  }
  return out;
}

std::vector<uint8_t> write_safetensors(const TensorMap& tensors, const std::map<std::string, std::string>& metadata) {
  json::Value header = json::Value::object();
  if (!metadata.empty()) {
    json::Value m = json::Value::object();
    for (const auto& [k, v] : metadata) {
      if (!json::is_valid_utf8(k) || !json::is_valid_utf8(v)) {
        Where{"", ""}.fail("__metadata__", "entry '" + k + "' is not valid UTF-8, which a JSON header requires");
      }
      m[k] = v;
    }
    header["__metadata__"] = std::move(m);
  }
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    const int64_t n = t.element_count();
    if (n < 0 || t.bytes().size() != size_t(n) * dtype_size(t.dtype)) {
      t.where().fail("data", std::to_string(t.bytes().size()) + " bytes do not hold shape " + shape_string(t.shape));
    }
    if (name == "__metadata__") t.where().fail("name", "'__metadata__' is reserved by the format");
    if (!json::is_valid_utf8(name)) t.where().fail("name", "is not valid UTF-8, which a JSON header requires");
    json::Value e = json::Value::object();
    e["dtype"] = safetensors_dtype_name(t.dtype);
    json::Value shape = json::Value::array();
    for (const int64_t d : t.shape) shape.push_back(d);
    e["shape"] = std::move(shape);
    e["data_offsets"] = json::Value::array({int64_t(offset), int64_t(offset + t.bytes().size())});
    header[name] = std::move(e);  // names are unique: TensorMap's keys
    offset += t.bytes().size();
  }
  std::string text = json::dump(header);
  text.append((8 - text.size() % 8) % 8, ' ');
  std::vector<uint8_t> out;
  out.reserve(8 + text.size() + offset);
  for (int i = 0; i < 8; ++i) out.push_back(uint8_t(uint64_t(text.size()) >> (8 * i)));
  out.insert(out.end(), text.begin(), text.end());
  for (const auto& [name, t] : tensors) out.insert(out.end(), t.bytes().begin(), t.bytes().end());
  return out;
}

}  // namespace ssmv::tensor_file
