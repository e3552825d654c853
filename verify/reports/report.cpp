#include "verify/reports/report.h"

#include <algorithm>
#include <cmath>
#include <span>

#include "verify/reports/report_text.h"
#include "verify/tensor_file/tensor_file.h"

namespace ssmv::verify {
namespace {

using json::Value;

// ---- worst-element inputs ------------------------------------------------------------

InputValue scalar(std::string name, std::vector<int64_t> index, Format f, float v) {
  return {std::move(name), std::move(index), f, {round_nearest_even(f, v)}};
}

InputValue row(std::string name, std::vector<int64_t> index, Format f, const float* v, int64_t n) {
  InputValue in{std::move(name), std::move(index), f, {}};
  for (int64_t i = 0; i < n; ++i) in.bits.push_back(round_nearest_even(f, v[i]));
  return in;
}

void head_inputs(const Problem& p, int64_t h, std::vector<InputValue>& out) {
  out.push_back(scalar("A", {h}, Format::fp32, p.A[h]));
  if (p.has_dt_bias()) out.push_back(scalar("dt_bias", {h}, Format::fp32, p.dt_bias[h]));
}

// Token t's values that element (h, p[, n]) reads directly.
void token_inputs(const Problem& pr, int64_t t, int64_t h, int64_t p, std::vector<InputValue>& out) {
  const Format in = pr.formats.input;
  out.push_back(scalar("x", {t, h, p}, in, pr.x[pr.x_index(t, h, p)]));
  out.push_back(scalar("dt", {t, h}, in, pr.dt[pr.dt_index(t, h)]));
  head_inputs(pr, h, out);
}

// A state element of sequence s: its last token's inputs and the initial state.
void state_inputs(const Problem& pr, int64_t s, int64_t h, int64_t p, int64_t n, std::vector<InputValue>& out) {
  const Shape& sh = pr.shape;
  if (sh.seq_len(s) > 0) {
    const int64_t t = sh.cu_seqlens[s + 1] - 1, g = sh.group_of(h);
    token_inputs(pr, t, h, p, out);
    out.push_back(scalar("B", {t, g, n}, pr.formats.input, pr.B[pr.bc_index(t, g, n)]));
  } else {
    head_inputs(pr, h, out);
  }
  if (pr.has_initial_state()) {
    out.push_back(scalar("initial_state", {s, h, p, n}, pr.formats.state, pr.initial_state[pr.state_index(s, h, p, n)]));
  }
}

bool layout_is(const TensorReport& r, std::initializer_list<const char*> names) {
  return r.coord_names == std::vector<std::string>(names.begin(), names.end());
}

// ---- JSON helpers --------------------------------------------------------------------

Value str(std::string_view s) { return Value(std::string(s)); }

// A double exactly: {"decimal": "%.17g", "hex": "%a"} ("inf" in both when infinite).
Value real(double v) {
  return Value::object({{"decimal", str(decimal_text(v))},
                        {"hex", str(std::isfinite(v) ? hexfloat_text(v) : decimal_text(v))}});
}

// A format value: {"bits": "0x3f80", "decimal": ..., "hex": ...}.
Value format_value(Format f, Bits b) {
  const double v = decode(f, b);
  return Value::object({{"bits", str(hex_bits(f, b))},
                        {"decimal", str(decimal_text(v))},
                        {"hex", str(std::isfinite(v) ? hexfloat_text(v) : decimal_text(v))}});
}

// A ratio or statistic: a number, or "inf" when infinite.
Value number(double v) { return std::isfinite(v) ? Value(v) : str(decimal_text(v)); }

Value ints(const std::vector<int64_t>& v) {
  Value a = Value::array();
  for (int64_t x : v) a.push_back(Value(x));
  return a;
}

Value strings(const std::vector<std::string>& v) {
  Value a = Value::array();
  for (const std::string& x : v) a.push_back(str(x));
  return a;
}

Value difference_json(const DifferenceAt& d) {
  if (d.index < 0) return Value();
  return Value::object({{"index", Value(d.index)}, {"coords", ints(d.coords)}, {"value", real(d.value)}});
}

Value inputs_json(const std::vector<InputValue>& inputs) {
  Value a = Value::array();
  for (const InputValue& in : inputs) {
    Value values = Value::array();
    for (Bits b : in.bits) values.push_back(format_value(in.format, b));
    a.push_back(Value::object({{"name", str(in.name)},
                                     {"index", ints(in.index)},
                                     {"format", str(format_name(in.format))},
                                     {"values", std::move(values)}}));
  }
  return a;
}

Value worst_json(const TensorReport& r, const std::vector<InputValue>& inputs) {
  const WorstElement& w = r.worst;
  if (w.index < 0) return Value();
  const ElementJudgement& j = w.judgement;
  return Value::object(
      {{"index", Value(w.index)},
       {"coords", ints(w.coords)},
       {"verdict", str(verdict_name(j.verdict))},
       {"bound_usage", number(j.bound_usage)},
       {"unwritten", Value(j.unwritten)},
       {"ulps", j.ulps == kNanUlpDistance ? Value() : Value(j.ulps)},
       {"computed", format_value(r.format, w.computed)},
       {"exact", Value::object({{"decimal40", str(w.exact_decimal)},
                                {"nearest_double", real(w.exact)},
                                {"rounded", format_value(r.format, w.exact_rounded)}})},
       {"error", real(j.error)},
       {"bound", real(w.bound)},
       {"inputs", inputs_json(inputs)}});
}

Value bound_sources_json(const std::vector<BoundShare>& shares) {
  Value a = Value::array();
  for (const BoundShare& b : shares) {
    a.push_back(Value::object(
        {{"source", str(b.source)}, {"label", str(b.label)}, {"share", Value(b.share)}}));
  }
  return a;
}

Value slice_json(const SharpSlice& s) {
  return Value::object({{"head", s.head < 0 ? Value() : Value(s.head)},
                        {"elements", Value(s.elements)},
                        {"observed", number(s.observed)},
                        {"null_mean", number(s.null_mean)},
                        {"null_sd", number(s.null_sd)},
                        {"ratio", number(s.ratio)},
                        {"p_bound", number(s.p_bound)}});
}

// The sharp verdict (docs/sharp-verdicts.md): null when it was not run.
Value sharp_json(const SharpResult& r) {
  if (!r.evaluated && r.why_not.empty()) return Value();
  if (!r.evaluated) return Value::object({{"evaluated", Value(false)}, {"why_not", str(r.why_not)}});
  Value attribution = Value::array();
  for (const SharpCandidate& c : r.attribution) {
    attribution.push_back(Value::object({{"name", str(c.name)},
                                         {"description", str(c.description)},
                                         {"residual", number(c.residual)},
                                         {"explained", number(c.explained)},
                                         {"consistent", Value(c.consistent)}}));
  }
  return Value::object({{"evaluated", Value(true)},
                        {"verdict", str(r.suspicious ? "SUSPICIOUS" : "NOT_SUSPICIOUS")},
                        {"allowed_configuration", str(r.allowed)},
                        {"whole", slice_json(r.whole)},
                        {"worst_slice", slice_json(r.worst)},
                        {"p_value_bound", number(r.p_value_bound)},
                        {"calibration", Value::object({{"runs", Value(r.runs)},
                                                       {"margin", number(r.margin)},
                                                       {"false_alarm", number(r.false_alarm)},
                                                       {"sd_factor", number(r.sd_factor)},
                                                       {"seed", Value(r.seed)}})},
                        {"attribution", std::move(attribution)}});
}

Value tensor_json(const TensorReport& r, const std::vector<InputValue>& inputs) {
  Value counts = Value::object();
  for (Verdict v : {Verdict::exact, Verdict::within_contract, Verdict::violation, Verdict::invalid}) {
    counts.emplace(std::string(verdict_name(v)), Value(r.count(v)));
  }
  return Value::object(
      {{"name", str(r.name)},
       {"format", str(format_name(r.format))},
       {"coord_names", strings(r.coord_names)},
       {"elements", Value(r.elements)},
       {"verdict", str(verdict_name(r.overall()))},
       {"counts", std::move(counts)},
       {"exact_share", number(r.elements ? double(r.count(Verdict::exact)) / double(r.elements) : 0.0)},
       {"ulp", Value::object({{"p50", Value(r.ulp_p50)},
                              {"p99", Value(r.ulp_p99)},
                              {"max", Value(r.ulp_max)}})},
       {"max_bound_usage", number(r.max_bound_usage)},
       {"max_abs_difference", difference_json(r.max_abs_difference)},
       {"max_rel_difference", difference_json(r.max_rel_difference)},
       {"max_err_over_scale", difference_json(r.max_err_over_scale)},
       {"max_ulps_at_scale", difference_json(r.max_ulps_at_scale)},
       {"worst", worst_json(r, inputs)},
       {"worst_bound_sources", bound_sources_json(r.worst_bound_sources)},
       {"sharp", sharp_json(r.sharp)}});
}

Value side_json(const std::string& k, const std::string& c, const std::string& d) {
  return Value::object({{"kernel", str(k)}, {"contract", str(c)}, {"device", str(d)}});
}

Value comparison_json(const SideBySide& s) {
  Value tensors = Value::array();
  for (const SideBySideTensor& t : s.tensors) {
    const DivergentElement& w = t.worst;
    Value worst = Value();
    if (w.index >= 0) {
      worst = Value::object({{"index", Value(w.index)},
                             {"coords", ints(w.coords)},
                             {"explained", Value(w.divergence <= w.bound_a + w.bound_b)},
                             {"a", format_value(t.format, w.a)},
                             {"b", format_value(t.format, w.b)},
                             {"exact_nearest_double", real(w.exact)},
                             {"bound_a", real(w.bound_a)},
                             {"bound_b", real(w.bound_b)},
                             {"divergence", real(w.divergence)},
                             {"usage", number(w.usage)}});
    }
    tensors.push_back(Value::object({{"name", str(t.name)},
                                           {"format", str(format_name(t.format))},
                                           {"coord_names", strings(t.coord_names)},
                                           {"elements", Value(t.elements)},
                                           {"identical", Value(t.identical)},
                                           {"explained", Value(t.explained)},
                                           {"unexplained", Value(t.unexplained)},
                                           {"ulp_max", Value(t.ulp_max)},
                                           {"max_divergence_over_scale", number(t.max_divergence_over_scale)},
                                           {"max_usage", number(t.max_usage)},
                                           {"verdict_a", str(verdict_name(t.verdict_a))},
                                           {"verdict_b", str(verdict_name(t.verdict_b))},
                                           {"bound_usage_a", number(t.bound_usage_a)},
                                           {"bound_usage_b", number(t.bound_usage_b)},
                                           {"worst", std::move(worst)}}));
  }
  return Value::object({{"name", str(s.name)},
                        {"a", side_json(s.kernel_a, s.contract_a, s.device_a)},
                        {"b", side_json(s.kernel_b, s.contract_b, s.device_b)},
                        {"explained_all", Value(s.explained_all())},
                        {"tensors", std::move(tensors)}});
}

// ---- Markdown helpers ----------------------------------------------------------------

// A Markdown table cell: '|' would end the cell, a newline the row.
std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\|";
    else out += c == '\n' ? ' ' : c;
  }
  return out;
}

std::string pct(int64_t part, int64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", whole ? 100.0 * double(part) / double(whole) : 0.0);
  return buf;
}

std::string index_text(const std::vector<int64_t>& index) {
  std::string s = "[";
  for (size_t i = 0; i < index.size(); ++i) s += (i ? ", " : "") + std::to_string(index[i]);
  return s + (index.empty() ? "]" : "]");
}

std::string inputs_markdown(const std::vector<InputValue>& inputs) {
  if (inputs.empty()) return "";
  std::string m = "\n| input | index | format | value |\n|---|---|---|---|\n";
  for (const InputValue& in : inputs) {
    std::string v;
    if (in.bits.size() == 1) {
      v = "`" + value_text(in.format, in.bits[0]) + "`";
    } else {
      // (appended piecewise: "literal" + std::string&& trips GCC 12's -Wrestrict false positive)
      v = "row of ";
      v += std::to_string(in.bits.size());
      v += ": `";
      for (size_t i = 0; i < in.bits.size(); ++i) {
        if (i) v += ' ';
        v += hex_bits(in.format, in.bits[i]);
      }
      v += "`";
    }
    m += "| " + in.name + " | " + index_text(in.index) + (in.bits.size() > 1 ? "[:]" : "") + " | " +
         std::string(format_name(in.format)) + " | " + v + " |\n";
  }
  return m;
}

void write_text_atomically(const std::string& path, const std::string& text) {
  tensor_file::write_file_atomically(
      path, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

}  // namespace

std::vector<InputValue> element_inputs(const Problem& p, const TensorReport& r, int64_t index) {
  std::vector<InputValue> out;
  if (index < 0 || index >= r.elements) return out;
  const std::vector<int64_t> c = r.coord_names.size() == 4 ? (layout_is(r, {"sequence", "token", "head", "dim"})
                                                                   ? y_coords(p, index)
                                                                   : state_coords(p, index))
                                                            : std::vector<int64_t>{};
  if (layout_is(r, {"sequence", "token", "head", "dim"})) {
    const Shape& s = p.shape;
    const int64_t t = s.cu_seqlens[c[0]] + c[1], h = c[2], d = c[3], g = s.group_of(h);
    token_inputs(p, t, h, d, out);
    if (p.d_mode() == DMode::per_head) out.push_back(scalar("D", {h}, Format::fp32, p.D[h]));
    if (p.d_mode() == DMode::per_head_dim) out.push_back(scalar("D", {h, d}, Format::fp32, p.D[h * s.P + d]));
    if (p.has_z()) out.push_back(scalar("z", {t, h, d}, p.formats.input, p.z[p.x_index(t, h, d)]));
    std::vector<float> buffer(size_t(s.N));
    out.push_back(row("B", {t, g}, p.formats.input,
                      p.B.read(size_t(p.bc_index(t, g, 0)), size_t(s.N), buffer.data()), s.N));
    out.push_back(row("C", {t, g}, p.formats.input,
                      p.C.read(size_t(p.bc_index(t, g, 0)), size_t(s.N), buffer.data()), s.N));
  } else if (layout_is(r, {"sequence", "head", "dim", "state"})) {
    state_inputs(p, c[0], c[1], c[2], c[3], out);
  } else if (r.coord_names.size() == 4) {
    head_inputs(p, c[1], out);
  }
  return out;
}

std::vector<InputValue> element_inputs(const DecodeProblem& d, const TensorReport& r, int64_t index) {
  if (!layout_is(r, {"slot", "head", "dim", "state"})) return element_inputs(d.problem, r, index);
  std::vector<InputValue> out;
  if (index < 0 || index >= r.elements) return out;
  const std::vector<int64_t> c = state_coords(d.problem, index);  // slot as the first coordinate
  const int64_t slot = c[0], h = c[1], p = c[2], n = c[3];
  const int64_t per = d.problem.shape.state_elements_per_sequence();
  for (int64_t q = 0; q < d.problem.shape.num_sequences(); ++q) {
    if (d.is_pad(q) || d.out_slot(q) != slot) continue;
    state_inputs(d.problem, q, h, p, n, out);
    out.push_back(scalar("state_pool", {d.slot_in[q], h, p, n}, d.problem.formats.state,
                         d.state_pool[d.slot_in[q] * per + (h * d.problem.shape.P + p) * d.problem.shape.N + n]));
    return out;
  }
  // No request wrote the slot: its value must be unchanged.
  out.push_back(scalar("state_pool", {slot, h, p, n}, d.problem.formats.state, d.state_pool[index]));
  return out;
}

ReportEntry report_entry(std::string name, KernelCheck check, const Problem& p) {
  ReportEntry e{std::move(name), problem_summary(p), std::move(check), {}};
  for (const TensorReport& r : e.check.tensors) e.worst_inputs.push_back(element_inputs(p, r, r.worst.index));
  return e;
}

ReportEntry report_entry(std::string name, KernelCheck check, const DecodeProblem& d) {
  ReportEntry e{std::move(name), problem_summary(d), std::move(check), {}};
  for (const TensorReport& r : e.check.tensors) e.worst_inputs.push_back(element_inputs(d, r, r.worst.index));
  return e;
}

ReportEntry report_entry(std::string name, std::string summary, KernelCheck check) {
  ReportEntry e{std::move(name), std::move(summary), std::move(check), {}};
  e.worst_inputs.resize(e.check.tensors.size());
  return e;
}

bool Report::ok() const {
  return std::all_of(entries.begin(), entries.end(), [](const ReportEntry& e) { return e.check.ok(); }) &&
         std::all_of(comparisons.begin(), comparisons.end(), [](const SideBySide& s) { return s.explained_all(); });
}

json::Value report_to_json(const Report& r) {
  Value entries = Value::array();
  for (const ReportEntry& e : r.entries) {
    Value tensors = Value::array();
    for (size_t i = 0; i < e.check.tensors.size(); ++i) {
      static const std::vector<InputValue> kNone;
      tensors.push_back(tensor_json(e.check.tensors[i], i < e.worst_inputs.size() ? e.worst_inputs[i] : kNone));
    }
    entries.push_back(Value::object({{"name", str(e.name)},
                                           {"problem", str(e.problem)},
                                           {"kernel", str(e.check.kernel)},
                                           {"contract", str(e.check.contract)},
                                           {"device", str(e.check.device)},
                                           {"verdict", str(verdict_name(e.check.overall()))},
                                           {"ok", Value(e.check.ok())},
                                           {"tensors", std::move(tensors)}}));
  }
  Value comparisons = Value::array();
  for (const SideBySide& s : r.comparisons) comparisons.push_back(comparison_json(s));
  return Value::object({{"schema", str("ssmv report")},
                        {"schema_version", Value(1)},
                        {"ssmv_version", str(r.ssmv_version)},
                        {"command", str(r.command)},
                        {"ok", Value(r.ok())},
                        {"entries", std::move(entries)},
                        {"comparisons", std::move(comparisons)}});
}

std::string report_to_markdown(const Report& r) {
  std::string m = "# ssmv report\n\nssmv " + r.ssmv_version + " · `" + r.command + "` · **" +
                  (r.ok() ? "PASS" : "FAIL") + "**\n\n";
  m += "| case | kernel | contract | device | tensor | elements | % exact | err/scale max | ULPs at scale max | max "
       "bound usage | verdict |\n";
  m += "|---|---|---|---|---|---:|---:|---:|---:|---:|---|\n";
  for (const ReportEntry& e : r.entries) {
    for (const TensorReport& t : e.check.tensors) {
      m += "| " + cell(e.name) + " | " + cell(e.check.kernel) + " | " + cell(e.check.contract) + " | " +
           cell(e.check.device) + " | " + cell(t.name) +
           " | " + std::to_string(t.elements) + " | " + pct(t.count(Verdict::exact), t.elements) + " | " +
           err_over_scale_text(t) + " | " + ulps_at_scale_text(t) + " | " + usage_text(t.max_bound_usage) +
           " | " + (t.ok() ? "" : "**") + std::string(verdict_name(t.overall())) + (t.ok() ? "" : "**") + " |\n";
    }
  }
  bool sources_heading = false;
  for (const ReportEntry& e : r.entries) {
    for (const TensorReport& t : e.check.tensors) {
      const std::string line = bound_sources_text(t);
      if (line.empty()) continue;
      if (!sources_heading) m += "\n## Where the bounds come from\n\n";
      sources_heading = true;
      // Appended piece by piece: `"* " + std::string` trips GCC 12's -Wrestrict false positive.
      m += "* ";
      m += cell(e.name) + " (" + cell(e.check.contract) + "): " + line + "\n";
    }
  }
  bool heading = false;
  for (const ReportEntry& e : r.entries) {
    for (size_t i = 0; i < e.check.tensors.size(); ++i) {
      const TensorReport& t = e.check.tensors[i];
      if (t.ok()) continue;
      if (!heading) m += "\n## Failing tensors\n";
      heading = true;
      m += "\n### " + e.name + ": " + e.check.kernel + " (" + e.check.contract + ", " + e.check.device + "), tensor `" +
           t.name + "`: " + std::string(verdict_name(t.overall())) + "\n\nProblem: " + e.problem + "\n\n";
      m += "Verdicts: EXACT " + std::to_string(t.count(Verdict::exact)) + ", WITHIN_CONTRACT " +
           std::to_string(t.count(Verdict::within_contract)) + ", VIOLATION " +
           std::to_string(t.count(Verdict::violation)) + ", INVALID " + std::to_string(t.count(Verdict::invalid)) +
           "\n\n```\n";
      for (const std::string& line : worst_element_lines(t)) m += line + "\n";
      m += "```\n\n";
      m += bad_count_text(t) + "; the " + std::to_string(t.bad.size()) + " worst" +
           (t.bad.size() < size_t(t.count(Verdict::violation) + t.count(Verdict::invalid)) ? " (of at most " +
                std::to_string(kKeptBadElements) + " kept)" : "") + ", worst first:\n\n```\n";
      for (const std::string& line : bad_element_lines(t, kKeptBadElements)) m += line + "\n";
      m += "```\n";
      if (i < e.worst_inputs.size()) m += inputs_markdown(e.worst_inputs[i]);
    }
  }
  if (!r.comparisons.empty()) {
    m += "\n## Side by side\n";
    for (const SideBySide& s : r.comparisons) {
      m += "\n### " + s.name + "\n\na = " + s.kernel_a + " (" + s.contract_a + ", " + s.device_a + "), b = " +
           s.kernel_b + " (" + s.contract_b + ", " + s.device_b + "). A divergence is explained when |a − b| ≤ " +
           "bound_a + bound_b.\n\n";
      m += "| tensor | elements | identical | explained | unexplained | max \\|a−b\\| / scale | max \\|a−b\\| / "
           "(bound_a + bound_b) | a vs exact | b vs exact |\n|---|---:|---:|---:|---:|---:|---:|---|---|\n";
      for (const SideBySideTensor& t : s.tensors) {
        m += "| " + t.name + " | " + std::to_string(t.elements) + " | " + std::to_string(t.identical) + " | " +
             std::to_string(t.explained) + " | " + (t.unexplained ? "**" : "") + std::to_string(t.unexplained) +
             (t.unexplained ? "**" : "") + " | " + scale_text(t.max_divergence_over_scale) + " | " + usage_text(t.max_usage) +
             " | " + std::string(verdict_name(t.verdict_a)) + " (usage " + usage_text(t.bound_usage_a) + ") | " +
             std::string(verdict_name(t.verdict_b)) + " (usage " + usage_text(t.bound_usage_b) + ") |\n";
      }
      for (const SideBySideTensor& t : s.tensors) {
        const DivergentElement& w = t.worst;
        if (w.index < 0) continue;
        const bool explained = w.divergence <= w.bound_a + w.bound_b;
        m += "\n`" + t.name + "`, " + (explained ? "largest divergence (explained)" : "worst unexplained divergence") +
             " at (" + coords_text(t.coord_names, w.coords) + ") [flat index " + std::to_string(w.index) +
             "]:\n\n```\n";
        m += "a:          " + value_text(t.format, w.a) + "\n";
        m += "b:          " + value_text(t.format, w.b) + "\n";
        m += "exact:      " + exact_text(w.exact) + " (nearest double)\n";
        m += "|a - b|:    " + exact_text(w.divergence) + "\n";
        m += "bound_a:    " + exact_text(w.bound_a) + "\nbound_b:    " + exact_text(w.bound_b) + "\n";
        m += "usage:      " + usage_text(w.usage) + " of bound_a + bound_b\n```\n";
      }
    }
  }
  return m;
}

void write_report_json(const std::string& path, const Report& r) {
  write_text_atomically(path, json::dump(report_to_json(r), 2) + "\n");
}

void write_report_markdown(const std::string& path, const Report& r) { write_text_atomically(path, report_to_markdown(r)); }

}  // namespace ssmv::verify
