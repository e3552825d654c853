#include "verify/reports/report_text.h"

#include <cmath>
#include <cstdio>

namespace ssmv::verify {
namespace {

std::string printf_text(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string formats_text(const Problem& p) {
  return std::string(format_name(p.formats.input)) + " in / " + std::string(format_name(p.formats.state)) +
         " state / " + std::string(format_name(p.formats.output)) + " out";
}

std::string percent(int64_t part, int64_t whole) {
  return printf_text("%.3g%%", whole > 0 ? 100.0 * double(part) / double(whole) : 0.0);
}

}  // namespace

std::string decimal_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return printf_text("%.17g", v);
}

std::string hexfloat_text(double v) { return printf_text("%a", v); }

std::string exact_text(double v) {
  if (!std::isfinite(v)) return decimal_text(v);
  return decimal_text(v) + " (" + hexfloat_text(v) + ")";
}

std::string value_text(Format f, Bits b) { return hex_bits(f, b) + " = " + exact_text(decode(f, b)); }

std::string coords_text(const std::vector<std::string>& names, const std::vector<int64_t>& coords) {
  std::string s;
  for (size_t i = 0; i < coords.size(); ++i) {
    s += (i ? ", " : "") + (i < names.size() ? names[i] : "axis " + std::to_string(i)) + " " +
         std::to_string(coords[i]);
  }
  return s;
}

std::string scale_text(double over_scale) {
  return std::isfinite(over_scale) ? printf_text("%.1e", over_scale) : decimal_text(over_scale);
}

std::string err_over_scale_text(const TensorReport& r) {
  const DifferenceAt& d = r.max_err_over_scale;
  return d.index < 0 ? "-" : scale_text(d.value);
}

std::string ulps_at_scale_text(const TensorReport& r) {
  const DifferenceAt& d = r.max_ulps_at_scale;
  if (d.index < 0) return "-";
  return std::isfinite(d.value) ? printf_text("%.3g", d.value) : decimal_text(d.value);
}

std::string usage_text(double usage) { return std::isinf(usage) ? "inf" : printf_text("%.4g", usage); }

std::string problem_summary(const Problem& p) {
  const Shape& s = p.shape;
  std::string t = "S=" + std::to_string(s.num_sequences()) + " T=" + std::to_string(s.num_tokens()) +
                  " H=" + std::to_string(s.H) + " P=" + std::to_string(s.P) + " N=" + std::to_string(s.N) +
                  " G=" + std::to_string(s.G) + ", " + formats_text(p);
  if (p.dt_softplus) t += ", dt_softplus";
  if (std::isfinite(p.dt_limit_lo) || std::isfinite(p.dt_limit_hi)) {
    t += ", dt_limit [" + decimal_text(p.dt_limit_lo) + ", " + decimal_text(p.dt_limit_hi) + "]";
  }
  if (p.has_z()) t += ", z";
  if (p.d_mode() != DMode::none) t += p.d_mode() == DMode::per_head ? ", D[H]" : ", D[H,P]";
  if (p.has_dt_bias()) t += ", dt_bias";
  if (p.has_initial_state()) t += ", initial states";
  return t;
}

std::string problem_summary(const DecodeProblem& d) {
  return problem_summary(d.problem) + ", slots=" + std::to_string(d.slots) + " pad=" + std::to_string(d.pad_slot_id);
}

std::string bound_sources_text(const TensorReport& r) {
  if (r.worst_bound_sources.empty() || r.worst.index < 0) return "";
  // Built by appends: `"literal" + std::string` trips GCC 12's -Wrestrict false positive.
  std::string t = "bound of worst ";
  t += r.name;
  t += "[";
  for (size_t i = 0; i < r.worst.coords.size(); ++i) {
    if (i) t += ",";
    t += std::to_string(r.worst.coords[i]);
  }
  t += "]:";
  // Percent: "62%", "9.1%", "0.38%"; shares below 0.01 % go to the summed rest.
  const auto pct = [](double share) {
    const double v = 100.0 * share;
    return printf_text(v >= 9.5 ? "%.0f%%" : "%.2g%%", v);
  };
  constexpr size_t kShown = 6;
  constexpr double kSmallest = 1e-4;
  double rest = 0;
  size_t shown = 0, more = 0;
  for (const BoundShare& b : r.worst_bound_sources) {
    if (shown < kShown && b.share >= kSmallest) {
      t += shown++ ? ", " : " ";
      t += pct(b.share);
      t += " ";
      t += b.label;
    } else {
      rest += b.share;
      ++more;
    }
  }
  if (more > 0) {
    t += ", ";
    t += std::to_string(more);
    t += " more ";
    t += rest < kSmallest ? std::string("< 0.01%") : pct(rest);
  }
  return t;
}

std::vector<std::string> worst_element_lines(const TensorReport& r) {
  const WorstElement& w = r.worst;
  if (w.index < 0) return {"no elements"};
  const ElementJudgement& j = w.judgement;
  std::vector<std::string> out;
  out.push_back("worst element: (" + coords_text(r.coord_names, w.coords) + ") [flat index " +
                std::to_string(w.index) + "]: " + std::string(verdict_name(j.verdict)) + ", " +
                usage_text(j.bound_usage) + " x bound" + (j.unwritten ? ", never written (poison pattern)" : ""));
  out.push_back("  computed: " + value_text(r.format, w.computed));
  out.push_back("  exact:    " + w.exact_decimal + " (nearest double " + hexfloat_text(w.exact) +
                "); correctly rounded " + value_text(r.format, w.exact_rounded));
  out.push_back("  error:    " + exact_text(j.error) + " (upper bound of |computed - exact|); bound " +
                exact_text(w.bound) + "; ULP distance " +
                (j.ulps == kNanUlpDistance ? std::string("n/a (NaN)") : std::to_string(j.ulps)));
  return out;
}

std::string tensor_index_text(const TensorReport& r, int64_t index) {
  std::vector<int64_t> idx(r.dims.size(), 0);
  int64_t rest = index;
  for (size_t d = r.dims.size(); d-- > 0;) {
    const int64_t n = r.dims[d] > 0 ? r.dims[d] : 1;
    idx[d] = d == 0 ? rest : rest % n;
    rest /= n;
  }
  if (idx.empty()) idx.push_back(index);
  std::string t = r.name + "[";
  for (size_t d = 0; d < idx.size(); ++d) t += (d ? ", " : "") + std::to_string(idx[d]);
  return t + "]";
}

std::string bad_count_text(const TensorReport& r) {
  const int64_t bad = r.count(Verdict::violation) + r.count(Verdict::invalid);
  return std::to_string(bad) + " of " + std::to_string(r.elements) + " elements bad (" +
         printf_text("%.3g", 100.0 * double(bad) / double(r.elements ? r.elements : 1)) + "%): " +
         std::to_string(r.count(Verdict::violation)) + " VIOLATION, " + std::to_string(r.count(Verdict::invalid)) +
         " INVALID";
}

std::vector<std::string> bad_element_lines(const TensorReport& r, size_t n) {
  std::vector<std::string> out;
  const std::string format(format_name(r.format));
  for (size_t k = 0; k < r.bad.size() && k < n; ++k) {
    const WorstElement& w = r.bad[k];
    const ElementJudgement& j = w.judgement;
    const double v = decode(r.format, w.computed);
    std::string what = "computed " + printf_text("%.7g", v) + " (" + format + " " + hex_bits(r.format, w.computed) + ")";
    if (j.unwritten) what = "never written: the poison pattern " + hex_bits(r.format, w.computed) + " is still there";
    std::string line = tensor_index_text(r, w.index) + " (" + coords_text(r.coord_names, w.coords) + "): " +
                       std::string(verdict_name(j.verdict)) + ", " + what + ", exact " + printf_text("%.7g", w.exact);
    if (j.verdict == Verdict::violation) {
      line += ", error " + printf_text("%.2e", j.error) + " > bound " + printf_text("%.2e", w.bound) + ", usage " +
              usage_text(j.bound_usage);
    } else {
      line += ", bound " + printf_text("%.2e", w.bound);
    }
    out.push_back(line);
  }
  return out;
}

std::string worst_element_line(const KernelCheck& c) {
  const TensorReport* worst = nullptr;
  for (const TensorReport& r : c.tensors) {
    if (!worst || r.overall() > worst->overall() ||
        (r.overall() == worst->overall() && r.max_bound_usage > worst->max_bound_usage)) {
      worst = &r;
    }
  }
  if (!worst) return "no tensors";
  const WorstElement& w = worst->worst;
  std::string t = worst->name + "[";
  for (size_t i = 0; i < w.coords.size(); ++i) {
    t += (i ? ", " : "") + (i < worst->coord_names.size() ? worst->coord_names[i] : std::string("?")) + " " +
         std::to_string(w.coords[i]);
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, "] computed %s (%a), exact %a, bound %a, usage %.3g, %s",
                hex_bits(worst->format, w.computed).c_str(), decode(worst->format, w.computed), w.exact, w.bound,
                w.judgement.bound_usage, std::string(verdict_name(w.judgement.verdict)).c_str());
  return t + buf + " (" + c.kernel + ", " + c.contract + ", " + c.device + ")";
}

std::string check_failure_message(const KernelCheck& c) {
  std::string m = "kernel " + c.kernel + " (contract " + c.contract + ", device " + c.device + "): " +
                  std::string(verdict_name(c.overall())) + (c.ok() ? "" : ", not within its contract") + "\n";
  for (const TensorReport& r : c.tensors) {
    const int64_t bad = r.count(Verdict::violation) + r.count(Verdict::invalid);
    m += "tensor '" + r.name + "' (" + std::string(format_name(r.format)) + ", " + std::to_string(r.elements) +
         " elements): " + std::string(verdict_name(r.overall()));
    if (r.ok()) {
      m += ", max bound usage " + usage_text(r.max_bound_usage) + ", ULP max " + std::to_string(r.ulp_max) + "\n";
      continue;
    }
    m += "\n  Mismatched elements (VIOLATION + INVALID): " + std::to_string(bad) + " / " +
         std::to_string(r.elements) + " (" + percent(bad, r.elements) + ")\n";
    for (const auto& [label, d] : {std::pair<const char*, const DifferenceAt*>{"absolute", &r.max_abs_difference},
                                   {"relative", &r.max_rel_difference}}) {
      m += std::string("  Greatest ") + label + " difference: ";
      if (d->index < 0) {
        m += "none (no finite computed value)\n";
        continue;
      }
      // No "allowed there" figure: the JSON report, which the Python assertion prints from,
      // carries no bound at these indices, and both assertions print the same facts.
      m += exact_text(d->value) + " at index (" + coords_text(r.coord_names, d->coords) + ") [flat " +
           std::to_string(d->index) + "]\n";
    }
    m += "  Verdicts: EXACT " + std::to_string(r.count(Verdict::exact)) + ", WITHIN_CONTRACT " +
         std::to_string(r.count(Verdict::within_contract)) + ", VIOLATION " +
         std::to_string(r.count(Verdict::violation)) + ", INVALID " + std::to_string(r.count(Verdict::invalid)) +
         "\n";
    m += "  ULP distance p50 / p99 / max (valid elements): " + std::to_string(r.ulp_p50) + " / " +
         std::to_string(r.ulp_p99) + " / " + std::to_string(r.ulp_max) + "\n";
    m += "  Max bound usage (error / bound): " + usage_text(r.max_bound_usage) + "\n";
    for (const std::string& line : worst_element_lines(r)) m += "  " + line + "\n";
    const std::string sources = bound_sources_text(r);
    if (!sources.empty()) m += "  " + sources + "\n";
  }
  m += "How to read this: docs/report-schema.md\n";
  return m;
}

}  // namespace ssmv::verify
