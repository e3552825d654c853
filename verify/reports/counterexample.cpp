#include "verify/reports/counterexample.h"

#include <cmath>
#include <span>

#include "verify/json/json.h"
#include "verify/contracts/json_fields.h"
#include "verify/tensor_file/tensor_file.h"
#include "verify/judge/verdict.h"

namespace ssmv::verify {
namespace {

using json::Value;

constexpr const char* kFormatTag = "ssmv counterexample";
constexpr int64_t kVersion = 1;

// ---- writing ------------------------------------------------------------------------

Value int_array(const std::vector<int64_t>& v) {
  Value a = Value::array();
  for (int64_t x : v) a.push_back(Value(x));
  return a;
}

Value limit(float v) {
  if (std::isinf(v)) return Value(v > 0 ? "inf" : "-inf");
  return Value(v);  // the shortest literal that reads back to this float's value
}

// {"shape": [...], "format": "bf16", "bits": ["0x3f80", ...]} — or null when empty. Values:
// std::vector<float> or FormatValues.
template <class Values>
Value tensor(const Values& values, std::vector<int64_t> shape, Format f) {
  if (values.empty()) return Value();
  Value bits = Value::array();
  bits.get_ref<Value::array_t&>().reserve(values.size());
  for (float v : values) bits.push_back(Value(hex_bits(f, encode_exact(f, v))));
  return Value::object({{"shape", int_array(shape)},
                        {"format", Value(std::string(format_name(f)))},
                        {"bits", std::move(bits)}});
}

Value problem_json(const Problem& p) {
  const Shape& s = p.shape;
  const int64_t T = s.num_tokens(), S = s.num_sequences();
  Value v = Value::object();
  v.emplace("shape", Value::object({{"cu_seqlens", int_array(s.cu_seqlens)},
                                {"H", Value(s.H)},
                                {"P", Value(s.P)},
                                {"N", Value(s.N)},
                                {"G", Value(s.G)}}));
  v.emplace("formats", Value::object({{"input", Value(std::string(format_name(p.formats.input)))},
                                  {"state", Value(std::string(format_name(p.formats.state)))},
                                  {"output", Value(std::string(format_name(p.formats.output)))}}));
  v.emplace("options", Value::object({{"dt_softplus", Value(p.dt_softplus)},
                                  {"dt_limit_lo", limit(p.dt_limit_lo)},
                                  {"dt_limit_hi", limit(p.dt_limit_hi)}}));
  const Format in = p.formats.input;
  Value t = Value::object();
  t.emplace("x", tensor(p.x, {T, s.H, s.P}, in));
  t.emplace("dt", tensor(p.dt, {T, s.H}, in));
  t.emplace("A", tensor(p.A, {s.H}, Format::fp32));
  t.emplace("B", tensor(p.B, {T, s.G, s.N}, in));
  t.emplace("C", tensor(p.C, {T, s.G, s.N}, in));
  t.emplace("z", tensor(p.z, {T, s.H, s.P}, in));
  t.emplace("dt_bias", tensor(p.dt_bias, {s.H}, Format::fp32));
  t.emplace("D", tensor(p.D, p.d_mode() == DMode::per_head_dim ? std::vector<int64_t>{s.H, s.P}
                                                            : std::vector<int64_t>{s.H},
                    Format::fp32));
  t.emplace("initial_state", tensor(p.initial_state, {S, s.H, s.P, s.N}, p.formats.state));
  v.emplace("tensors", std::move(t));
  return v;
}

Value decode_json(const DecodeProblem& d) {
  const Shape& s = d.problem.shape;
  return Value::object({{"slots", Value(d.slots)},
                        {"state_pool", tensor(d.state_pool, {d.slots, s.H, s.P, s.N}, d.problem.formats.state)},
                        {"slot_in", int_array(d.slot_in)},
                        {"slot_out", int_array(d.slot_out)},
                        {"pad_slot_id", Value(d.pad_slot_id)}});
}

// ---- reading ------------------------------------------------------------------------

Format parse_format_field(const Field& f) {
  const std::string& text = f.as_string();
  for (Format v : {Format::fp32, Format::bf16, Format::fp16}) {
    if (format_name(v) == text) return v;
  }
  f.fail("unknown format '" + text + "' (expected fp32, bf16, fp16)");
}

std::vector<int64_t> parse_int_array(const Field& f) {
  std::vector<int64_t> out;
  for (const Field& e : f.items()) out.push_back(e.as_int64());
  return out;
}

float parse_limit(const Field& f) {
  const double v = f.as_extended();
  if (std::isfinite(v) && double(float(v)) != v) f.fail("value " + f.text() + " is not an fp32 value");
  return float(v);
}

std::string shape_text(const std::vector<int64_t>& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

// A tensor of the expected format and one of the allowed shapes, or null (empty) when
// `optional`.
std::vector<float> parse_tensor(const Field& f, Format expected_format,
                                const std::vector<std::vector<int64_t>>& allowed_shapes, bool optional,
                                std::vector<int64_t>* shape_out = nullptr) {
  if (f.value().is_null()) {
    if (!optional) f.fail("required tensor is null");
    return {};
  }
  const ObjectFields o(f, {"shape", "format", "bits"});
  const Field shape_field = o.get("shape");
  const std::vector<int64_t> shape = parse_int_array(shape_field);
  bool shape_ok = false;
  std::string expected;
  for (const auto& s : allowed_shapes) {
    shape_ok = shape_ok || s == shape;
    expected += (expected.empty() ? "" : " or ") + shape_text(s);
  }
  if (!shape_ok) shape_field.fail(shape_text(shape) + " disagrees with the problem's shape " + expected);
  if (shape_out) *shape_out = shape;
  const Field format_field = o.get("format");
  const Format fmt = parse_format_field(format_field);
  if (fmt != expected_format) {
    // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on "'" + string.
    std::string message = "'";
    message.append(format_name(fmt)).append("', expected '").append(format_name(expected_format)).append("'");
    format_field.fail(message);
  }
  int64_t count = 1;
  for (int64_t d : shape) {
    // Bounded before multiplying (a hostile file must not overflow the count).
    if (d < 0 || (d > 0 && count > (int64_t{1} << 40) / d)) shape_field.fail(shape_text(shape) + " is too large");
    count *= d;
  }
  const std::vector<Field> bits = o.get("bits").items();
  if (int64_t(bits.size()) != count) {
    o.get("bits").fail(std::to_string(bits.size()) + " values, the shape " + shape_text(shape) + " holds " +
                       std::to_string(count));
  }
  const int digits = format_info(fmt).total_bits / 4;
  std::vector<float> values(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) {
    const std::string& s = bits[i].as_string();
    bool ok = s.size() == size_t(2 + digits) && s[0] == '0' && s[1] == 'x';
    Bits b = 0;
    for (size_t k = 2; ok && k < s.size(); ++k) {
      const char c = s[k];
      const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      ok = d >= 0;
      b = (b << 4) | Bits(d < 0 ? 0 : d);
    }
    if (!ok) {
      bits[i].fail("'" + s + "' is not a " + std::string(format_name(fmt)) + " bit pattern (0x and " +
                   std::to_string(digits) + " hex digits)");
    }
    values[i] = float(decode(fmt, b));
  }
  return values;
}

Problem parse_problem(const Field& f) {
  const ObjectFields o(f, {"shape", "formats", "options", "tensors"});
  Problem p;
  {
    const ObjectFields s(o.get("shape"), {"cu_seqlens", "H", "P", "N", "G"});
    p.shape.cu_seqlens = parse_int_array(s.get("cu_seqlens"));
    p.shape.H = s.get("H").as_int64();
    p.shape.P = s.get("P").as_int64();
    p.shape.N = s.get("N").as_int64();
    p.shape.G = s.get("G").as_int64();
    // Sizes are checked before the tensors are (their expected shapes multiply them).
    for (const char* k : {"H", "P", "N", "G"}) {
      if (s.get(k).as_int64() < 1) s.get(k).fail("must be >= 1, found " + s.get(k).text());
    }
    if (p.shape.cu_seqlens.size() < 2) s.get("cu_seqlens").fail("needs at least 2 entries");
  }
  {
    const ObjectFields fm(o.get("formats"), {"input", "state", "output"});
    p.formats.input = parse_format_field(fm.get("input"));
    p.formats.state = parse_format_field(fm.get("state"));
    p.formats.output = parse_format_field(fm.get("output"));
  }
  {
    const ObjectFields op(o.get("options"), {"dt_softplus", "dt_limit_lo", "dt_limit_hi"});
    p.dt_softplus = op.get("dt_softplus").as_bool();
    p.dt_limit_lo = parse_limit(op.get("dt_limit_lo"));
    p.dt_limit_hi = parse_limit(op.get("dt_limit_hi"));
  }
  const Shape& s = p.shape;
  const int64_t T = s.num_tokens(), S = s.num_sequences();
  const Format in = p.formats.input;
  const ObjectFields t(o.get("tensors"),
                       {"x", "dt", "A", "B", "C", "z", "dt_bias", "D", "initial_state"});
  p.x = parse_tensor(t.get("x"), in, {{T, s.H, s.P}}, false);
  p.dt = parse_tensor(t.get("dt"), in, {{T, s.H}}, false);
  p.A = parse_tensor(t.get("A"), Format::fp32, {{s.H}}, false);
  p.B = parse_tensor(t.get("B"), in, {{T, s.G, s.N}}, false);
  p.C = parse_tensor(t.get("C"), in, {{T, s.G, s.N}}, false);
  p.z = parse_tensor(t.get("z"), in, {{T, s.H, s.P}}, true);
  p.dt_bias = parse_tensor(t.get("dt_bias"), Format::fp32, {{s.H}}, true);
  p.D = parse_tensor(t.get("D"), Format::fp32, {{s.H}, {s.H, s.P}}, true);
  p.initial_state = parse_tensor(t.get("initial_state"), p.formats.state, {{S, s.H, s.P, s.N}}, true);
  return p;
}

std::string one_of(const Field& f, std::initializer_list<std::string_view> allowed) {
  const std::string& v = f.as_string();
  std::string list;
  for (std::string_view a : allowed) {
    if (a == v) return v;
    list += (list.empty() ? "" : ", ") + std::string(a);
  }
  f.fail("unknown value '" + v + "' (expected " + list + ")");
}

}  // namespace

void write_counterexample(const std::string& path, const Counterexample& c) {
  const bool decode = c.kernel == "ssu";
  Value v = Value::object();
  v.emplace("format", Value(kFormatTag));
  v.emplace("version", Value(kVersion));
  v.emplace("kernel", Value(c.kernel));
  v.emplace("contract", Value(c.contract));
  v.emplace("chunk_size", Value(c.chunk_size));
  v.emplace("split", Value(c.split));
  v.emplace("device", Value(c.device));
  v.emplace("planted_bug", Value(c.planted_bug));
  v.emplace("property", Value(c.property));
  v.emplace("reproduce", Value(c.reproduce));
  v.emplace("verdict", Value(c.verdict));
  v.emplace("worst", Value(c.worst));
  v.emplace("problem", problem_json(decode ? c.decode.problem : c.problem));
  v.emplace("decode", decode ? decode_json(c.decode) : Value());
  const std::string text = json::dump(v, 1) + "\n";
  tensor_file::write_file_atomically(
      path, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

Counterexample read_counterexample(const std::string& path) {
  const Value root = parse_json_file_text(read_text_file(path), path);
  const ObjectFields o(Field(root, path),
                       {"format", "version", "kernel", "contract", "chunk_size", "split", "device", "planted_bug",
                        "property", "reproduce", "verdict", "worst", "problem", "decode"});
  if (o.get("format").as_string() != kFormatTag) {
    o.get("format").fail("'" + o.get("format").as_string() + "', expected '" + kFormatTag + "'");
  }
  if (o.get("version").as_int64() != kVersion) {
    o.get("version").fail("version " + o.get("version").text() + " is not supported (this ssmv reads " +
                          std::to_string(kVersion) + ")");
  }
  Counterexample c;
  c.kernel = one_of(o.get("kernel"), {"ssu", "chunk_scan", "chunk_scan+ssu"});
  const bool decode = c.kernel == "ssu", chunked = !decode, handoff = c.kernel == "chunk_scan+ssu";
  const Field contract = o.get("contract");
  c.contract = decode ? one_of(contract, {"ssu"})
               : handoff ? one_of(contract, {"chunk_scan.production+ssu", "chunk_scan.fp32+ssu"})
                         : one_of(contract, {"chunk_scan.production", "chunk_scan.fp32"});
  const Field chunk = o.get("chunk_size");
  c.chunk_size = chunk.as_int64();
  if (chunked && c.chunk_size < 1) chunk.fail("must be >= 1 for kernel '" + c.kernel + "', found " + chunk.text());
  if (decode && c.chunk_size != 0) chunk.fail("must be 0 for kernel 'ssu', found " + chunk.text());
  const Field split = o.get("split");
  c.split = split.as_int64();
  if (!handoff && c.split != 0) split.fail("must be 0 for kernel '" + c.kernel + "', found " + split.text());
  c.device = one_of(o.get("device"), {"twin", "gpu"});
  c.planted_bug = o.get("planted_bug").as_string();
  c.property = o.get("property").as_string();
  c.reproduce = o.get("reproduce").as_string();
  // The element verdicts, or ERROR: the case threw (a rejected problem, a bound that refuses
  // an argument outside its budget's range, a kernel error) — the property harness writes it.
  c.verdict = one_of(o.get("verdict"), {verdict_name(Verdict::exact), verdict_name(Verdict::within_contract),
                                        verdict_name(Verdict::violation), verdict_name(Verdict::invalid), "ERROR"});
  c.worst = o.get("worst").as_string();

  const Field problem_field = o.get("problem");
  Problem p = parse_problem(problem_field);
  const Field decode_field = o.get("decode");
  try {
    if (decode) {
      const ObjectFields d(decode_field, {"slots", "state_pool", "slot_in", "slot_out", "pad_slot_id"});
      c.decode.slots = d.get("slots").as_int64();
      if (c.decode.slots < 0) d.get("slots").fail("must be >= 0, found " + d.get("slots").text());
      const Shape& s = p.shape;
      c.decode.state_pool =
          parse_tensor(d.get("state_pool"), p.formats.state, {{c.decode.slots, s.H, s.P, s.N}}, c.decode.slots == 0);
      c.decode.slot_in = parse_int_array(d.get("slot_in"));
      c.decode.slot_out = parse_int_array(d.get("slot_out"));
      c.decode.pad_slot_id = d.get("pad_slot_id").as_int64();
      try {
        validate(p);  // the tokens first, so their errors name 'problem'
      } catch (const ProblemError& e) {
        throw FileFormatError(path + ": field 'problem': invalid problem: " + e.what());
      }
      c.decode.problem = std::move(p);
      validate(c.decode);
    } else {
      if (!decode_field.value().is_null()) decode_field.fail("must be null for kernel '" + c.kernel + "'");
      validate(p);
      for (int64_t q = 0; handoff && q < p.shape.num_sequences(); ++q) {
        if (c.split < 0 || c.split > p.shape.seq_len(q)) {
          split.fail(std::to_string(c.split) + " is outside [0, " + std::to_string(p.shape.seq_len(q)) +
                     "] for sequence " + std::to_string(q));
        }
      }
      c.problem = std::move(p);
    }
  } catch (const ProblemError& e) {
    throw FileFormatError(path + ": field '" + std::string(decode ? "decode" : "problem") +
                          "': invalid problem: " + e.what());
  }
  return c;
}

}  // namespace ssmv::verify
