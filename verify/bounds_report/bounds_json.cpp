#include "verify/bounds_report/bounds_json.h"

#include <cmath>

namespace ssmv::verify {
namespace {

using json::Value;

Value number(double v) { return std::isfinite(v) ? Value(v) : Value(nullptr); }

Value percentiles_json(const Percentiles& p) {
  Value v = Value::object();
  v["count"] = p.count;
  v["p50"] = number(p.p50);
  v["p99"] = number(p.p99);
  v["max"] = number(p.max);
  return v;
}

Value frontier_json(const ToleranceFrontier& f) {
  Value v = Value::object();
  Value atol = Value::array();
  for (const auto& [rtol, a] : f.atol_at_rtol) atol.push_back(Value{{"rtol", rtol}, {"atol", number(a)}});
  v["smallest_atol"] = std::move(atol);
  v["smallest_rtol_at_atol_0"] = number(f.rtol_at_atol0);
  v["mamba_ssm"] = Value{{"rtol", f.mamba.rtol}, {"atol", f.mamba.atol}, {"violations", f.mamba_violations}};
  return v;
}

Value formats_json(const Formats& f) {
  return Value{{"input", std::string(format_name(f.input))},
               {"state", std::string(format_name(f.state))},
               {"output", std::string(format_name(f.output))}};
}

// A row's problem (BoundsRow, FamilyRow): T, N, P, H, G, chunk_size, formats.
template <class Row>
void shape_members(Value& x, const Row& row) {
  x["T"] = row.T;
  x["N"] = row.N;
  x["P"] = row.P;
  x["H"] = row.H;
  x["G"] = row.G;
  x["chunk_size"] = row.chunk_size;
  x["formats"] = formats_json(row.formats);
}

// A tensor's bound (TensorBounds, FamilyTensorBounds): its name, format, elements and the ratios.
template <class Tensor>
void bound_members(Value& v, const Tensor& t) {
  v["name"] = t.name;
  v["format"] = std::string(format_name(t.format));
  v["elements"] = t.elements;
  v["zero_exact"] = t.zero_exact;
  v["bound_over_exact"] = percentiles_json(t.bound_over_exact);
  v["bound_over_scale"] = percentiles_json(t.bound_over_scale);
  v["bound_ulps"] = percentiles_json(t.bound_ulps);
  v["bound_ulps_at_scale"] = percentiles_json(t.bound_ulps_at_scale);
}

Value tensor_json(const TensorBounds& t) {
  Value v = Value::object();
  bound_members(v, t);
  Value sources = Value::array();
  for (const SourcesAt& s : t.sources) {
    Value shares = Value::array();
    for (const bound::SourceShare& sh : s.shares) {
      shares.push_back(Value{{"source", std::string(bound::bound_source_name(sh.source))},
                             {"label", sh.label},
                             {"value", sh.value},
                             {"share", sh.share}});
    }
    sources.push_back(Value{{"at", s.at}, {"index", s.index}, {"bound", s.bound}, {"parts_sum", s.parts_sum},
                            {"shares", std::move(shares)}});
  }
  v["sources"] = std::move(sources);
  v["fp32_reference_error_over_scale"] = percentiles_json(t.fp32_error_over_scale);
  v["tolerance_guaranteed"] = frontier_json(t.guaranteed);
  v["mamba_ssm_allowed_over_bound"] = percentiles_json(t.mamba_allowed_over_bound);
  if (t.measured) {
    v["measured"] = Value{{"error_over_exact", percentiles_json(t.error_over_exact)},
                          {"error_over_scale", percentiles_json(t.error_over_scale)},
                          {"usage", percentiles_json(t.usage)},
                          {"over_bound", t.over_bound},
                          {"exact_elements", t.exact_elements},
                          {"tolerance", frontier_json(t.measured_tolerance)}};
  } else {
    v["measured"] = nullptr;
  }
  return v;
}

// Another family's row (FamilyRow): the bound's ratios and, where measured, the usage.
Value family_row_json(const FamilyRow& row) {
  Value x = Value::object();
  x["family"] = row.family;
  x["contract"] = row.contract;
  x["kernel"] = row.kernel;
  x["measured"] = row.measured.empty() ? Value(nullptr) : Value(row.measured);
  x["note"] = row.note;
  shape_members(x, row);
  x["bound_seconds"] = row.bound_seconds;
  x["measured_seconds"] = row.measured_seconds;
  Value tensors = Value::array();
  for (const FamilyTensorBounds& t : row.tensors) {
    Value v = Value::object();
    bound_members(v, t);
    v["measured"] = t.measured ? Value{{"usage", percentiles_json(t.usage)}, {"over_bound", t.over_bound}} : Value(nullptr);
    tensors.push_back(std::move(v));
  }
  x["tensors"] = std::move(tensors);
  return x;
}

}  // namespace

Value bounds_to_json(const BoundsReport& r) {
  const BoundsGrid& g = r.grid;
  Value v = Value::object();
  v["schema"] = kBoundsSchema;
  v["command"] = r.command;
  v["threads"] = r.threads;
  v["seconds"] = r.seconds;
  v["reference_seconds"] = r.reference_seconds;
  Value formats = Value::array();
  const auto names = [](const std::vector<Format>& fs) {
    Value a = Value::array();
    for (const Format f : fs) a.push_back(std::string(format_name(f)));
    return a;
  };
  v["grid"] = Value{{"contracts", g.contracts},
                    {"lengths", g.lengths},
                    {"state_dims", g.state_dims},
                    {"chunk_sizes", g.chunk_sizes},
                    {"base_length", g.base_length},
                    {"base_state_dim", g.base_state_dim},
                    {"base_chunk_size", g.base_chunk_size},
                    {"heads", g.heads},
                    {"head_dim", g.head_dim},
                    {"groups", g.groups},
                    {"input_formats", names(g.input_formats)},
                    {"state_formats", names(g.state_formats)},
                    {"output_formats", names(g.output_formats)},
                    {"seed", g.seed}};
  v["skipped"] = r.skipped;
  Value rows = Value::array();
  for (const BoundsRow& row : r.rows) {
    Value x = Value::object();
    x["contract"] = row.contract;
    x["family"] = std::string(family_name(row.family));
    x["twin"] = row.twin.empty() ? Value(nullptr) : Value(row.twin);
    x["twin_note"] = row.twin_note;
    shape_members(x, row);
    x["bound_seconds"] = row.bound_seconds;
    x["twin_seconds"] = row.twin_seconds;
    Value tensors = Value::array();
    for (const TensorBounds& t : row.tensors) tensors.push_back(tensor_json(t));
    x["tensors"] = std::move(tensors);
    rows.push_back(std::move(x));
  }
  v["rows"] = std::move(rows);
  if (r.family_rows.empty()) return v;  // Mamba2's contracts only: the members above, as before
  Value families = Value::array();
  for (const BoundsReport::FamilyPart& part : r.families) {
    Value presets = Value::array();
    for (const family::ContractPreset& p : part.presets) {
      presets.push_back(Value{{"name", p.name}, {"kind", p.family}, {"description", p.description}});
    }
    families.push_back(Value{{"family", part.family}, {"problems", part.problems}, {"presets", std::move(presets)}});
  }
  v["families"] = std::move(families);
  Value family_rows = Value::array();
  for (const FamilyRow& row : r.family_rows) family_rows.push_back(family_row_json(row));
  v["family_rows"] = std::move(family_rows);
  return v;
}

}  // namespace ssmv::verify
