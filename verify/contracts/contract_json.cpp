#include "verify/contracts/contract_json.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <span>
#include <stdexcept>

#include "fast/chunk_scan/contract.h"
#include "fast/ssu/contract.h"
#include "verify/contracts/budget_json.h"
#include "verify/tensor_file/tensor_file.h"
#include "verify/contracts/flashinfer_presets.h"
#include "verify/contracts/triton_presets.h"

namespace ssmv::verify {
namespace {

using json::Value;

constexpr Point kPoints[] = {Point::dt_scaled_B,  Point::decayed_CB, Point::incoming_state,
                             Point::stored_state, Point::output,     Point::final_incoming_state};
constexpr FormatRef kFormatRefs[] = {FormatRef::input, FormatRef::state, FormatRef::output,
                                     FormatRef::fp32,  FormatRef::bf16,  FormatRef::fp16};
constexpr ReductionOrder kOrders[] = {ReductionOrder::sequential_fma, ReductionOrder::tree,
                                      ReductionOrder::mma_m16n8k16, ReductionOrder::any_order};
constexpr Sum kSums[] = {Sum::cumsum, Sum::chunk_state, Sum::state_passing, Sum::cb, Sum::y};
constexpr ChunkLayout kLayouts[] = {ChunkLayout::sequence, ChunkLayout::global};
constexpr Family kFamilies[] = {Family::sequential, Family::chunked};
// The functions the bounds evaluate (verify/bound/error_model.h budget()).
const std::vector<std::string> kFunctions{"exp", "softplus", "sigmoid", "log1p"};

// The enum value whose name is `text`, or a failure listing the names.
template <typename E, size_t K, typename NameFn>
E parse_enum(const Field& f, const E (&values)[K], NameFn name, const char* what) {
  const std::string& text = f.as_string();
  std::string expected;
  for (E v : values) {
    if (name(v) == text) return v;
    expected += (expected.empty() ? "" : ", ") + std::string(name(v));
  }
  f.fail("unknown " + std::string(what) + " '" + text + "' (expected " + expected + ")");
}

Format parse_accumulation(const Field& f) {
  const std::string& text = f.as_string();
  for (Format v : {Format::fp32, Format::bf16, Format::fp16}) {
    if (format_name(v) == text) return v;
  }
  f.fail("unknown format '" + text + "' (expected fp32, bf16, fp16)");
}

// {point, format} with an optional "mode": "nearest" (the default) or "stochastic", which only
// a stored value (stored_state, output) in a format coarser than fp32 can have.
Rounding parse_rounding(const Field& f) {
  const bool has_mode = f.value().is_object() && f.value().contains("mode");
  const ObjectFields o = has_mode ? ObjectFields(f, {"point", "format", "mode"}) : ObjectFields(f, {"point", "format"});
  Rounding r{parse_enum(o.get("point"), kPoints, point_name, "point"),
             parse_enum(o.get("format"), kFormatRefs, format_ref_name, "format")};
  if (has_mode) {
    constexpr RoundingMode kModes[] = {RoundingMode::nearest, RoundingMode::stochastic};
    r.mode = parse_enum(o.get("mode"), kModes, rounding_mode_name, "mode");
    if (r.mode == RoundingMode::stochastic && !stochastic_rounding_allowed(r.point, r.format)) {
      o.get("mode").fail("'stochastic' at point '" + std::string(point_name(r.point)) + "' in format '" +
                         std::string(format_ref_name(r.format)) +
                         "': only a stored value (stored_state, output) in a format coarser than fp32 is "
                         "rounded stochastically");
    }
  }
  return r;
}


Reduction parse_reduction(const Field& f) {
  const ObjectFields o(f, {"sum", "what", "order", "partials", "detail"});
  Reduction r;
  r.sum = parse_enum(o.get("sum"), kSums, sum_name, "sum");
  r.what = o.get("what").as_string();
  r.order = parse_enum(o.get("order"), kOrders, reduction_order_name, "order");
  const Field partials = o.get("partials");
  r.partials = partials.as_int64();
  if (r.partials < 1) partials.fail("must be >= 1, found " + std::to_string(r.partials));
  if (r.order != ReductionOrder::sequential_fma && r.partials != 1) {
    partials.fail("must be 1 for order '" + std::string(reduction_order_name(r.order)) + "', found " +
                  std::to_string(r.partials));
  }
  r.detail = o.get("detail").as_string();
  return r;
}

}  // namespace

json::Value contract_to_json(const Contract& c) {
  Value v = Value::object();
  v.emplace("name", Value(c.name));
  v.emplace("kernel", Value(c.kernel));
  v.emplace("family", Value(std::string(family_name(c.family))));
  v.emplace("chunk_size", Value(c.chunk_size));
  v.emplace("chunk_layout", Value(std::string(chunk_layout_name(c.chunk_layout))));
  v.emplace("accumulation", Value(std::string(format_name(c.accumulation))));
  Value inputs = Value::array();
  for (Format f : c.input_formats) inputs.push_back(Value(std::string(format_name(f))));
  v.emplace("input_formats", std::move(inputs));
  Value roundings = Value::array();
  for (const Rounding& r : c.roundings) {
    Value entry = Value::object({{"point", Value(std::string(point_name(r.point)))},
                                 {"format", Value(std::string(format_ref_name(r.format)))}});
    if (r.mode != RoundingMode::nearest) entry.emplace("mode", Value(std::string(rounding_mode_name(r.mode))));
    roundings.push_back(std::move(entry));
  }
  v.emplace("roundings", std::move(roundings));
  Value budgets = Value::array();
  for (const TranscendentalBudget& b : c.transcendentals) {
    budgets.push_back(budget_to_json(b));
  }
  v.emplace("transcendentals", std::move(budgets));
  Value reductions = Value::array();
  for (const Reduction& r : c.reductions) {
    reductions.push_back(
        Value::object({{"sum", Value(std::string(sum_name(r.sum)))},
                       {"what", Value(r.what)},
                       {"order", Value(std::string(reduction_order_name(r.order)))},
                       {"partials", Value(r.partials)},
                       {"detail", Value(r.detail)}}));
  }
  v.emplace("reductions", std::move(reductions));
  v.emplace("flush_to_zero", Value(c.flush_to_zero));
  v.emplace("softplus_shortcut", Value(c.softplus_shortcut));
  v.emplace("gpu_twin_max_ulps", Value(c.gpu_twin_max_ulps));
  v.emplace("gpu_twin_how_measured", Value(c.gpu_twin_how_measured));
  return v;
}

Contract contract_from_json(const json::Value& v, const std::string& file) {
  const ObjectFields o(Field(v, file),
                       {"name", "kernel", "family", "chunk_size", "chunk_layout", "accumulation", "input_formats", "roundings",
                        "transcendentals",
                        "reductions", "flush_to_zero", "softplus_shortcut", "gpu_twin_max_ulps",
                        "gpu_twin_how_measured"});
  Contract c;
  const Field name = o.get("name");
  c.name = name.as_string();
  if (c.name.empty()) name.fail("must not be empty");
  c.kernel = o.get("kernel").as_string();
  c.family = parse_enum(o.get("family"), kFamilies, family_name, "family");
  const Field chunk = o.get("chunk_size");
  c.chunk_size = chunk.as_int64();
  if (c.family == Family::chunked && c.chunk_size < 1) {
    chunk.fail("must be >= 1 for the chunked family, found " + std::to_string(c.chunk_size));
  }
  if (c.family == Family::sequential && c.chunk_size != 0) {
    chunk.fail("must be 0 for the sequential family, found " + std::to_string(c.chunk_size));
  }
  const Field layout = o.get("chunk_layout");
  c.chunk_layout = parse_enum(layout, kLayouts, chunk_layout_name, "chunk layout");
  if (c.family == Family::sequential && c.chunk_layout != ChunkLayout::sequence) {
    layout.fail("must be 'sequence' for the sequential family, found '" + layout.as_string() + "'");
  }
  c.accumulation = parse_accumulation(o.get("accumulation"));
  for (const Field& f : o.get("input_formats").items()) {
    Format fmt;
    if (!parse_format(f.as_string(), fmt)) f.fail("unknown format '" + f.as_string() + "' (expected fp32, bf16, fp16)");
    if (describes_input_format(c, fmt) && !c.input_formats.empty()) f.fail("format '" + f.as_string() + "' is listed twice");
    c.input_formats.push_back(fmt);
  }
  std::set<Point> rounded;
  for (const Field& f : o.get("roundings").items()) {
    c.roundings.push_back(parse_rounding(f));
    if (!rounded.insert(c.roundings.back().point).second) {
      f.member("point").fail("point '" + std::string(point_name(c.roundings.back().point)) +
                             "' is listed twice");
    }
  }
  std::set<std::string> functions;
  for (const Field& f : o.get("transcendentals").items()) {
    c.transcendentals.push_back(budget_from_json(f, kFunctions));
    if (!functions.insert(c.transcendentals.back().function).second) {
      f.member("function").fail("function '" + c.transcendentals.back().function + "' is listed twice");
    }
  }
  const std::vector<Sum>& used = family_sums(c.family);
  std::set<Sum> sums;
  for (const Field& f : o.get("reductions").items()) {
    c.reductions.push_back(parse_reduction(f));
    const Sum s = c.reductions.back().sum;
    if (std::find(used.begin(), used.end(), s) == used.end()) {
      std::string expected;
      for (Sum u : used) expected += (expected.empty() ? "" : ", ") + std::string(sum_name(u));
      f.member("sum").fail("sum '" + std::string(sum_name(s)) + "' is not used by the " +
                           std::string(family_name(c.family)) + " family (expected " + expected + ")");
    }
    if (!sums.insert(s).second) {
      f.member("sum").fail("sum '" + std::string(sum_name(s)) + "' is listed twice");
    }
  }
  // A sum the file does not declare is bounded as one sequential chain (the deepest order);
  // the contract says so explicitly (docs/contracts.md).
  for (Sum s : used) {
    if (sums.count(s) == 0) c.reductions.push_back(undeclared_reduction(s));
  }
  c.flush_to_zero = o.get("flush_to_zero").as_bool();
  c.softplus_shortcut = o.get("softplus_shortcut").as_bool();
  c.gpu_twin_max_ulps = non_negative_number(o.get("gpu_twin_max_ulps"));
  c.gpu_twin_how_measured = o.get("gpu_twin_how_measured").as_string();
  return c;
}

Contract parse_contract(std::string_view text, const std::string& file) {
  return contract_from_json(parse_json_file_text(text, file), file);
}

Contract read_contract_file(const std::string& path) { return parse_contract(read_text_file(path), path); }

void write_contract_file(const std::string& path, const Contract& c) {
  const std::string text = json::dump(contract_to_json(c), 2) + "\n";
  tensor_file::write_file_atomically(
      path, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

const std::vector<std::string>& contract_preset_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n{"ssu", "chunk_scan.production", "chunk_scan.fp32"};
    for (std::string_view t : triton_preset_names()) n.emplace_back(t);
    for (std::string_view f : flashinfer_preset_names()) n.emplace_back(f);
    return n;
  }();
  return names;
}

Contract contract_preset(std::string_view name, int64_t chunk_size) {
  if (name == "ssu") return ssu::contract();
  if (is_triton_preset(name)) return triton_preset(name, chunk_size);
  if (is_flashinfer_preset(name)) return flashinfer_preset(name);
  chunk_scan::ContractKind kind;
  if (name.starts_with("chunk_scan.") &&
      chunk_scan::parse_contract_kind(name.substr(std::string_view("chunk_scan.").size()), kind)) {
    if (chunk_size < 1) {
      throw std::invalid_argument("contract '" + std::string(name) + "' needs a chunk size >= 1, got " +
                                  std::to_string(chunk_size));
    }
    return chunk_scan::contract(kind, chunk_size);
  }
  std::string list;
  for (const std::string& n : contract_preset_names()) list += (list.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown contract preset '" + std::string(name) + "' (presets: " + list + ")");
}

Contract load_contract(std::string_view name_or_path, int64_t chunk_size) {
  for (const std::string& n : contract_preset_names()) {
    if (n == name_or_path) return contract_preset(name_or_path, chunk_size);
  }
  const std::string path(name_or_path);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    std::string list;
    for (const std::string& n : contract_preset_names()) list += (list.empty() ? "" : ", ") + n;
    throw std::invalid_argument("contract '" + path + "' is neither a preset (" + list +
                                ") nor an existing JSON file");
  }
  if (std::filesystem::is_directory(path, ec)) {
    throw std::invalid_argument("contract '" + path + "' is a folder, not a contract JSON file (docs/contracts.md)");
  }
  Contract c = read_contract_file(path);
  if (c.family == Family::chunked && chunk_size > 0 && chunk_size != c.chunk_size) {
    throw FileFormatError(path + ": field 'chunk_size': the contract is for chunk size " +
                          std::to_string(c.chunk_size) + ", the run uses " + std::to_string(chunk_size));
  }
  // A preset saved with `ssmv contract show` and edited keeps the preset's name: reported
  // under it, the edited contract would pass for the preset. It is reported under the file's
  // own name instead ("mine (edited from triton.ssu)"); an unedited copy keeps the name.
  for (const std::string& n : contract_preset_names()) {
    if (n != c.name) continue;
    const Contract preset = contract_preset(n, c.family == Family::chunked ? c.chunk_size : 256);
    if (json::dump(contract_to_json(preset), 0) != json::dump(contract_to_json(c), 0)) {
      c.name = std::filesystem::path(path).stem().string() + " (edited from " + n + ")";
    }
  }
  return c;
}

}  // namespace ssmv::verify
