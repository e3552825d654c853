#include "verify/bounds_report/bounds_markdown.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace ssmv::verify {
namespace {

// Two significant digits; "—" for a non-finite value (nothing meets it).
std::string num(double v) {
  if (!std::isfinite(v)) return "—";
  if (v == 0) return "0";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", v);
  return buf;
}

std::string triple(const Percentiles& p) {
  if (p.count == 0) return "—";
  return num(p.p50) + " / " + num(p.p99) + " / " + num(p.max);
}

std::string formats_text(const Formats& f) {
  return std::string(format_name(f.input)) + "/" + std::string(format_name(f.state)) + "/" +
         std::string(format_name(f.output));
}

std::string shape_text(const BoundsRow& r) {
  std::string s = std::to_string(r.T) + " | " + std::to_string(r.N) + " | ";
  s += r.chunk_size > 0 ? std::to_string(r.chunk_size) : "—";
  return s;
}

// The largest source of an element's bound, with its share.
std::string top_source(const SourcesAt& s) {
  if (s.shares.empty()) return "—";
  char buf[32];
  std::snprintf(buf, sizeof buf, " %.0f%%", 100 * s.shares.front().share);
  return s.shares.front().label + buf;
}

std::string sources_text(const TensorBounds& t) {
  std::string out;
  for (const SourcesAt& s : t.sources) out += (out.empty() ? "" : "; ") + s.at + ": " + top_source(s);
  return out.empty() ? "—" : out;
}

const TensorBounds* tensor(const BoundsRow& r, const std::string& name) {
  for (const TensorBounds& t : r.tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

// The contracts in the order of the grid.
std::vector<std::string> contracts_of(const BoundsReport& r) {
  std::vector<std::string> out;
  for (const BoundsRow& row : r.rows) {
    if (std::find(out.begin(), out.end(), row.contract) == out.end()) out.push_back(row.contract);
  }
  return out;
}

void reading(std::ostringstream& o, const BoundsReport& r) {
  const BoundsGrid& g = r.grid;
  o << "## Reading this page\n\n"
    << "Each row is one contract on one problem: a single sequence of T tokens, H = " << g.heads
    << " heads in G = " << g.groups << " group(s), head dim P = " << g.head_dim
    << ", state dim N, chunk size L (chunked contracts), formats input/state/output, Mamba2-realistic data "
       "(`spec/realistic_problem.h`, seed "
    << g.seed
    << ": softplus with dt_bias, D per head, the gate z, an initial state). The shapes are three sweeps "
       "through T0 = "
    << g.base_length << ", N0 = " << g.base_state_dim << ", L0 = " << g.base_chunk_size
    << ": T at (N0, L0), N at (T0, L0), L at (T0, N0).\n\n"
    << "* **bound ÷ |exact|** — the rigorous per-element bound of `verify/bound/` (docs/bounds.md) over the "
       "certified exact value, at p50 / p99 / max over the tensor's elements (nearest rank; elements whose "
       "exact value is 0 are left out). Near zero this ratio is large and says little.\n"
    << "* **bound ÷ scale** — over the element's scale, the recurrence on absolute values Σ|terms| that the "
       "verdicts use as yardstick near zero (`ref::ExactValues::magnitude`): the relative bound a "
       "tolerance in units of the data's size would need.\n"
    << "* **ULPs** — the bound in ULPs of the tensor's format at |exact|. Under the contracts that keep "
       "every intermediate in fp32 a 16-bit output's bound is about half an ULP (its final rounding dominates); "
       "the production chunk_scan contracts round intermediates to bf16 and reach a few ULPs.\n"
    << "* **largest source** — where the bound of the p50, p99 and max element (by bound ÷ scale) comes from "
       "(`verify/bound/attribution.h`; the parts sum to the bound): rounding points (`output`, "
       "`stored_state`, `dt_scaled_B`, `decayed_CB`, `incoming_state`), transcendental budgets (`exp`, "
       "`softplus`, `sigmoid`), reductions (`sum:…`), other fp32 `arithmetic`, `underflow`.\n"
    << "* **measured** — the bundled host twin that implements the contract (`ssu`: one launch per sequence; "
       "`chunk_scan.production` and `chunk_scan.fp32`: the chunk_scan twin; bit-identical to the CUDA kernels): "
       "its error as the verdicts compute it, ÷ scale, and **usage** = error ÷ bound (≤ 1 for a kernel within "
       "its contract; any element above 1 is a VIOLATION and is counted in *over bound*). The Triton presets "
       "have no twin here: their measured usage on real dumps is in docs/contracts.md.\n"
    << "* **tolerances** — `allclose(kernel, ref, rtol, atol)` passes when |kernel − ref| ≤ atol + rtol·|ref| "
       "for every element, with ref the fp32 sequential recurrence that kernel tests compare against "
       "(`verify/allclose/fp32_reference.h`). The smallest passing pair is a frontier: the smallest atol at "
       "rtol = 0, 3e-4, 1e-3, 1e-2, and the smallest rtol at atol = 0. *Measured*: what the twin needs "
       "(no false alarm on it at this shape). *Guaranteed*: what provably accepts every kernel honouring the contract — "
       "per element the bound plus the fp32 reference's own distance from the exact value. *mamba_ssm*: "
       "elements its tests' tolerance (fp32 rtol 3e-4 atol 1e-3; bf16 rtol 1e-2 atol 5e-2) would fail.\n\n";
}

// Growth of the p99 bound ÷ scale (and the twin's p99 error ÷ scale, in parentheses) along one sweep.
void growth_table(std::ostringstream& o, const BoundsReport& r, const std::string& title, const std::string& axis,
                  const std::vector<int64_t>& values, bool chunked_only,
                  const std::function<bool(const BoundsRow&, int64_t&)>& on_sweep) {
  o << "### " << title << "\n\n| contract | formats | tensor |";
  for (const int64_t v : values) o << " " << axis << " = " << v << " |";
  o << "\n|---|---|---|";
  for (size_t i = 0; i < values.size(); ++i) o << "---|";
  o << "\n";
  std::map<std::string, std::map<int64_t, std::string>> cells;
  std::vector<std::string> keys;
  for (const BoundsRow& row : r.rows) {
    if (chunked_only && row.family != Family::chunked) continue;
    int64_t v = 0;
    if (!on_sweep(row, v)) continue;
    for (const TensorBounds& t : row.tensors) {
      const std::string key = "`" + row.contract + "` | " + formats_text(row.formats) + " | " + t.name;
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
      std::string cell = num(t.bound_over_scale.p99);
      if (t.measured) cell += " (" + num(t.error_over_scale.p99) + ")";
      cells[key][v] = cell;
    }
  }
  for (const std::string& key : keys) {
    o << "| " << key << " |";
    for (const int64_t v : values) {
      const auto it = cells[key].find(v);
      o << " " << (it == cells[key].end() ? "" : it->second) << " |";
    }
    o << "\n";
  }
  o << "\n";
}

void growth(std::ostringstream& o, const BoundsReport& r, const std::string& plots) {
  const BoundsGrid& g = r.grid;
  const auto base_L = [&](const BoundsRow& row) { return row.family == Family::sequential || row.chunk_size == g.base_chunk_size; };
  o << "## Growth with T, N and the chunk size\n\n"
    << "p99 of bound ÷ scale; in parentheses the twin's measured p99 error ÷ scale where a twin implements the "
       "contract.\n\n";
  if (!plots.empty()) {
    o << "![p99 bound ÷ scale and measured error against T](" << plots << "bounds-vs-T.svg)\n\n"
      << "![p99 bound ÷ scale and measured error against N](" << plots << "bounds-vs-N.svg)\n\n";
  }
  growth_table(o, r, "Sequence length T (N = " + std::to_string(g.base_state_dim) + ", L = " +
                         std::to_string(g.base_chunk_size) + ")",
               "T", g.lengths, false, [&](const BoundsRow& row, int64_t& v) {
                 v = row.T;
                 return row.N == g.base_state_dim && base_L(row);
               });
  growth_table(o, r, "State dim N (T = " + std::to_string(g.base_length) + ", L = " +
                         std::to_string(g.base_chunk_size) + ")",
               "N", g.state_dims, false, [&](const BoundsRow& row, int64_t& v) {
                 v = row.N;
                 return row.T == g.base_length && base_L(row);
               });
  growth_table(o, r, "Chunk size L (T = " + std::to_string(g.base_length) + ", N = " +
                         std::to_string(g.base_state_dim) + ")",
               "L", g.chunk_sizes, true, [&](const BoundsRow& row, int64_t& v) {
                 v = row.chunk_size;
                 return row.T == g.base_length && row.N == g.base_state_dim;
               });
}

// The final state does not depend on the output format (its bound and the twin's state do
// not read y): its tables show the grid's first output format only.
bool shown(const BoundsRow& row, const std::string& tensor_name, const BoundsGrid& g) {
  return tensor_name != "final_state" || row.formats.output == g.output_formats.front();
}

void contract_section(std::ostringstream& o, const BoundsReport& r, const std::string& contract) {
  std::vector<const BoundsRow*> rows;
  for (const BoundsRow& row : r.rows) {
    if (row.contract == contract) rows.push_back(&row);
  }
  const BoundsRow& first = *rows.front();
  o << "## `" << contract << "` (" << family_name(first.family) << ")\n\n";
  o << (first.twin.empty() ? "No twin measured: " + first.twin_note + ".\n\n"
                           : "Measured: the `" + first.twin + "` host twin.\n\n");
  for (const std::string name : {"y", "final_state"}) {
    o << "### " << name << ": the bound\n\n";
    if (name == "final_state") {
      o << "(Output format " << format_name(r.grid.output_formats.front())
        << " only: the final state does not depend on it.)\n\n";
    }
    o << "| T | N | L | formats | bound ÷ \\|exact\\| p50 / p99 / max | bound ÷ scale p50 / p99 / max | "
         "ULPs p50 / p99 / max | largest source |\n|---|---|---|---|---|---|---|---|\n";
    for (const BoundsRow* row : rows) {
      const TensorBounds* t = tensor(*row, name);
      if (t == nullptr || !shown(*row, name, r.grid)) continue;
      o << "| " << shape_text(*row) << " | " << formats_text(row->formats) << " | " << triple(t->bound_over_exact)
        << " | " << triple(t->bound_over_scale) << " | " << triple(t->bound_ulps) << " | " << sources_text(*t)
        << " |\n";
    }
    o << "\n";
    if (first.twin.empty()) continue;
    o << "### " << name << ": the twin beside it\n\n"
      << "| T | N | L | formats | error ÷ scale p50 / p99 / max | usage p50 / p99 / max | over bound | exact |\n"
         "|---|---|---|---|---|---|---|---|\n";
    for (const BoundsRow* row : rows) {
      const TensorBounds* t = tensor(*row, name);
      if (t == nullptr || !t->measured || !shown(*row, name, r.grid)) continue;
      char exact[32];
      std::snprintf(exact, sizeof exact, "%.0f%%", t->elements > 0 ? 100.0 * double(t->exact_elements) / double(t->elements) : 0.0);
      o << "| " << shape_text(*row) << " | " << formats_text(row->formats) << " | " << triple(t->error_over_scale)
        << " | " << triple(t->usage) << " | " << (t->over_bound > 0 ? "**" + std::to_string(t->over_bound) + "**" : "0")
        << " | " << exact << " |\n";
    }
    o << "\n";
  }
}

std::string frontier_text(const ToleranceFrontier& f) {
  std::string s;
  for (const auto& [rtol, atol] : f.atol_at_rtol) s += (s.empty() ? "" : " / ") + num(atol);
  return s + " | " + num(f.rtol_at_atol0) + " | " + std::to_string(f.mamba_violations);
}

// Per contract and output format, the largest over the grid's shapes of each frontier value:
// the tolerance one test at every shape of the grid would need.
void recommendations(std::ostringstream& o, const BoundsReport& r) {
  o << "### Over every shape of the grid\n\n"
    << "Per contract and output format, the largest value over the shapes above (y against the fp32 "
       "reference): the smallest allclose one test covering every shape of this grid would need. *Measured* "
       "holds for the bundled twin on this data; *guaranteed* for any kernel honouring the contract on it.\n\n"
    << "| contract | output | measured: atol at rtol 0 / 3e-4 / 1e-3 / 1e-2 | rtol at atol 0 | guaranteed: atol at "
       "rtol 0 / 3e-4 / 1e-3 / 1e-2 | rtol at atol 0 | shapes mamba_ssm's tolerance fails: twin / guaranteed |\n"
       "|---|---|---|---|---|---|---|\n";
  struct Worst {
    ToleranceFrontier measured, guaranteed;
    bool has_measured = false;
    int64_t shapes = 0, measured_alarms = 0, guaranteed_alarms = 0;
  };
  std::vector<std::pair<std::string, Worst>> worst;
  const auto widen = [](ToleranceFrontier& into, const ToleranceFrontier& f) {
    if (into.atol_at_rtol.empty()) {
      into = f;
      return;
    }
    for (size_t k = 0; k < f.atol_at_rtol.size(); ++k) {
      into.atol_at_rtol[k].second = std::max(into.atol_at_rtol[k].second, f.atol_at_rtol[k].second);
    }
    into.rtol_at_atol0 = std::max(into.rtol_at_atol0, f.rtol_at_atol0);
  };
  for (const BoundsRow& row : r.rows) {
    const TensorBounds* t = tensor(row, "y");
    if (t == nullptr) continue;
    const std::string key = "`" + row.contract + "` | " + std::string(format_name(t->format));
    auto it = std::find_if(worst.begin(), worst.end(), [&](const auto& w) { return w.first == key; });
    if (it == worst.end()) {
      worst.push_back({key, Worst{}});
      it = worst.end() - 1;
    }
    Worst& w = it->second;
    ++w.shapes;
    widen(w.guaranteed, t->guaranteed);
    if (t->guaranteed.mamba_violations > 0) ++w.guaranteed_alarms;
    if (t->measured) {
      w.has_measured = true;
      widen(w.measured, t->measured_tolerance);
      if (t->measured_tolerance.mamba_violations > 0) ++w.measured_alarms;
    }
  }
  const auto atols = [](const ToleranceFrontier& f) {
    std::string s;
    for (const auto& [rtol, atol] : f.atol_at_rtol) s += (s.empty() ? "" : " / ") + num(atol);
    return s;
  };
  for (const auto& [key, w] : worst) {
    o << "| " << key << " | " << (w.has_measured ? atols(w.measured) + " | " + num(w.measured.rtol_at_atol0) : "— | —")
      << " | " << atols(w.guaranteed) << " | " << num(w.guaranteed.rtol_at_atol0) << " | "
      << (w.has_measured ? std::to_string(w.measured_alarms) : "—") << " / " << w.guaranteed_alarms << " of "
      << w.shapes << " |\n";
  }
  o << "\n### Per shape\n\n";
}

void tolerances(std::ostringstream& o, const BoundsReport& r) {
  o << "## Tolerances: the smallest allclose that never raises a false alarm\n\n"
    << "Against the fp32 reference, y only (final states: in the JSON). *atol at rtol* lists the smallest "
       "atol at rtol = 0 / 3e-4 / 1e-3 / 1e-2; *rtol* the smallest rtol at atol = 0; *mamba* the elements "
       "mamba_ssm's tolerance for the output format fails (a false alarm when the kernel is correct).\n\n";
  recommendations(o, r);
  o << "*fp32 ref* is the fp32 reference's own error ÷ scale (p99 / max): what allclose measures of the "
       "reference rather than of the kernel.\n\n"
    << "| contract | T | N | L | formats | fp32 ref | measured: atol at rtol | rtol | mamba | guaranteed: atol at "
       "rtol | rtol | mamba |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const BoundsRow& row : r.rows) {
    const TensorBounds* t = tensor(row, "y");
    if (t == nullptr) continue;
    o << "| `" << row.contract << "` | " << shape_text(row) << " | " << formats_text(row.formats) << " | "
      << num(t->fp32_error_over_scale.p99) << " / " << num(t->fp32_error_over_scale.max) << " | "
      << (t->measured ? frontier_text(t->measured_tolerance) : "— | — | —") << " | " << frontier_text(t->guaranteed)
      << " |\n";
  }
  o << "\n";
}

// The argument, with this run's numbers: per output format, the largest guaranteed atol at
// mamba_ssm's rtol against mamba_ssm's atol, and the false alarms it raises.
void why_contract(std::ostringstream& o, const BoundsReport& r) {
  o << "## Why the contract is the better test\n\n"
    << "* **Per element, derived.** The bound is computed for each element from the contract and the exact "
       "values: small where the output is well conditioned, larger where a long decay or a cancellation makes "
       "it so. One (rtol, atol) pair must cover the worst element of every shape at once, so it is loose "
       "everywhere else.\n"
    << "* **No false alarms.** A kernel that honours its contract is within its bound by construction; "
       "the guaranteed frontier above shows how large a single tolerance must be to promise the same, and "
       "it grows with T and N where the bound does.\n"
    << "* **It catches what allclose misses.** Everything below a tolerance passes allclose; the contract "
       "judges each element against its own bound, which for well-conditioned elements is far below any "
       "tolerance that accepts the worst one. Measured on real bugs: the planted-bug catalogue "
       "(docs/planted-bugs.md) — the contract catches all 48 semantic and precision bugs and passes all 9 "
       "rounding-path changes; allclose with mamba_ssm's tolerances misses 4 of the 13 precision bugs on "
       "the properties' problems and 6 of 11 on production-width ones.\n";
  for (const Format f : {Format::bf16, Format::fp16, Format::fp32}) {
    const Tolerance m = mamba_ssm_tolerance(f);
    double guaranteed = 0, measured = 0;
    int64_t rows = 0, measured_rows = 0, false_alarm_rows = 0, guaranteed_alarm_rows = 0;
    std::vector<double> allowed_p50;  // per row: the median element's allowance ÷ bound
    for (const BoundsRow& row : r.rows) {
      const TensorBounds* t = tensor(row, "y");
      if (t == nullptr || t->format != f) continue;
      ++rows;
      for (const auto& [rtol, atol] : t->guaranteed.atol_at_rtol) {
        if (rtol == m.rtol) guaranteed = std::max(guaranteed, atol);
      }
      if (t->guaranteed.mamba_violations > 0) ++guaranteed_alarm_rows;
      if (t->mamba_allowed_over_bound.count > 0) allowed_p50.push_back(t->mamba_allowed_over_bound.p50);
      if (t->measured) {
        ++measured_rows;
        for (const auto& [rtol, atol] : t->measured_tolerance.atol_at_rtol) {
          if (rtol == m.rtol) measured = std::max(measured, atol);
        }
        if (t->measured_tolerance.mamba_violations > 0) ++false_alarm_rows;
      }
    }
    if (rows == 0) continue;
    o << "* **" << format_name(f) << " outputs** (" << rows << " rows): at mamba_ssm's rtol " << num(m.rtol)
      << ", the atol that provably accepts every contract-honouring kernel on every shape is " << num(guaranteed)
      << " (the twins measured: " << num(measured) << "), against mamba_ssm's atol " << num(m.atol) << ". "
      << "mamba_ssm's tolerance fails the twins on " << false_alarm_rows << " of the " << measured_rows
      << " measured rows and could fail a contract-honouring kernel on " << guaranteed_alarm_rows << " of " << rows
      << ".";
    if (!allowed_p50.empty()) {
      std::sort(allowed_p50.begin(), allowed_p50.end());
      o << " For the median element, mamba_ssm's tolerance allows " << num(allowed_p50.front()) << " to "
        << num(allowed_p50.back()) << " times its bound (over the rows): an error that many times what any "
        << "correct kernel can reach still passes allclose there.";
    }
    o << "\n";
  }
  o << "\n";
}

// Another family's rows (FamilyRow): per family what its problems are, per contract one table
// of every row and tensor.
void family_sections(std::ostringstream& o, const BoundsReport& r) {
  const BoundsGrid& g = r.grid;
  for (const BoundsReport::FamilyPart& part : r.families) {
    o << "## Family `" << part.family << "`\n\n" << part.problems << "\n\n"
      << "The grid: H = " << g.heads << " heads in G = " << g.groups << " group(s), head dim P = " << g.head_dim
      << "; T at N0 = " << g.base_state_dim << ", N at T0 = " << g.base_length << ", the chunked kernels' L at (T0, N0) "
      << "and L0 = " << g.base_chunk_size << " elsewhere; formats input/state/output. Per row and tensor, at p50 / p99 / "
      << "max over its elements (nearest rank): bound ÷ |exact| (elements whose exact value is 0 left out), bound ÷ "
         "scale (the scale: the recurrence on absolute values, the certified reference's magnitude) and the bound "
         "in ULPs of the tensor's format at |exact|; where the contract's host emulation is measured, its usage "
         "(error ÷ bound: ≤ 1 within the contract) and its elements over the bound (a finding). Tensors other than "
         "y do not depend on the output format: shown at the grid's first output format only (every row in the "
         "JSON).\n\n";
    for (const family::ContractPreset& preset : part.presets) {
      std::vector<const FamilyRow*> rows;
      for (const FamilyRow& row : r.family_rows) {
        if (row.family == part.family && row.contract == preset.name) rows.push_back(&row);
      }
      if (rows.empty()) continue;
      o << "### `" << preset.name << "` (" << preset.family << ")\n\nContract: " << preset.description << ".\n\n";
      o << (rows.front()->measured.empty() ? "Not measured: " + rows.front()->note + ".\n\n"
                                           : "Measured: " + rows.front()->measured + ".\n\n");
      o << "| T | N | L | formats | tensor | bound ÷ \\|exact\\| p50 / p99 / max | bound ÷ scale p50 / p99 / max | "
           "ULPs p50 / p99 / max | usage p50 / p99 / max | over bound |\n|---|---|---|---|---|---|---|---|---|---|\n";
      for (const FamilyRow* row : rows) {
        for (const FamilyTensorBounds& t : row->tensors) {
          if (t.name != "y" && row->formats.output != g.output_formats.front()) continue;
          o << "| " << row->T << " | " << row->N << " | " << (row->chunk_size > 0 ? std::to_string(row->chunk_size) : "—")
            << " | " << formats_text(row->formats) << " | " << t.name << " | " << triple(t.bound_over_exact) << " | "
            << triple(t.bound_over_scale) << " | " << triple(t.bound_ulps) << " | "
            << (t.measured ? triple(t.usage) : "—") << " | "
            << (!t.measured ? "—" : t.over_bound > 0 ? "**" + std::to_string(t.over_bound) + "**" : "0") << " |\n";
        }
      }
      o << "\n";
    }
  }
}

}  // namespace

std::string bounds_to_markdown(const BoundsReport& r, const std::string& plots) {
  std::ostringstream o;
  o << "# Error bounds of the contracts on realistic data\n\n"
    << "Generated (do not edit by hand) by\n\n```\n" << r.command << "\n```\n\n";
  char buf[160];
  std::snprintf(buf, sizeof buf, "%zu rows on %d threads in %.0f s (the certified reference: %.0f s).",
                r.rows.size() + r.family_rows.size(), r.threads, r.seconds, r.reference_seconds);
  o << buf << " JSON: the same data (`--out-json`, schema `" << "ssmv.bounds/1" << "`).";
  if (!r.plots_command.empty()) o << " Plots: `" << r.plots_command << "`.";
  o << "\n\n";
  // Mamba2's parts (the allclose tolerances against its fp32 reference among them) unless only
  // another family's contracts made rows.
  const bool mamba2 = !r.rows.empty() || r.family_rows.empty();
  if (mamba2) {
    reading(o, r);
    growth(o, r, plots);
  }
  for (const std::string& c : contracts_of(r)) contract_section(o, r, c);
  family_sections(o, r);
  if (mamba2) {
    tolerances(o, r);
    why_contract(o, r);
  }
  if (!r.skipped.empty()) {
    o << "## Left out\n\n";
    for (const std::string& s : r.skipped) o << "* " << s << "\n";
    o << "\n";
  }
  return o.str();
}

}  // namespace ssmv::verify
