#include "verify/bounds_report/bounds_report.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>

#include "verify/contracts/contract_json.h"
#include "verify/family/registry.h"

namespace ssmv::verify {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A contract of the grid: a sequential one, or a chunked one at each chunk size it runs at.
struct GridContract {
  std::string name;
  Family family{};
  bool from_file = false;
  Contract sequential;  // family sequential
  int64_t file_chunk_size = 0;  // a chunked contract file's own chunk size
};

GridContract resolve(const std::string& name, const BoundsGrid& g) {
  GridContract gc;
  gc.name = name;
  const std::vector<std::string>& presets = contract_preset_names();
  gc.from_file = std::find(presets.begin(), presets.end(), name) == presets.end();
  Contract c;
  try {
    c = load_contract(name, gc.from_file ? 0 : g.base_chunk_size);
  } catch (const std::invalid_argument& e) {
    const std::string others = family::family_preset_list();  // which `ssmv bounds` runs too
    throw std::invalid_argument("option '--contract' = '" + name + "': " + e.what() +
                                (others.empty() ? "" : "; other families' presets: " + others));
  }
  gc.family = c.family;
  if (c.family == Family::sequential) gc.sequential = c;
  if (gc.from_file) gc.file_chunk_size = c.chunk_size;
  return gc;
}

// The contracts of one row group: the sequential contract, or the chunked one at each
// chunk size this problem runs at.
std::vector<Contract> contracts_at(const GridContract& gc, const GridProblem& q) {
  if (gc.family == Family::sequential) return {gc.sequential};
  std::vector<Contract> out;
  if (gc.from_file) {
    out.push_back(load_contract(gc.name, gc.file_chunk_size));
  } else {
    for (const int64_t L : q.chunk_sizes) out.push_back(load_contract(gc.name, L));
  }
  return out;
}

// The grid's contracts of another family than Mamba2, per family in registration order, each
// name once.
struct FamilyContracts {
  const family::Family* family = nullptr;
  std::vector<std::string> names;
};

std::vector<FamilyContracts> family_contracts(const BoundsGrid& g) {
  std::vector<FamilyContracts> out;
  for (const family::Family* f : family::families()) {
    FamilyContracts fc{f, {}};
    for (const std::string& name : g.contracts) {  // each once, in the grid's order
      if (family::family_of_contract(name) == f && std::find(fc.names.begin(), fc.names.end(), name) == fc.names.end()) {
        fc.names.push_back(name);
      }
    }
    if (!fc.names.empty()) out.push_back(std::move(fc));
  }
  return out;
}

// The rows of another family's contracts: each (T, N) of the grid, the family's problem at every
// output format, its chunked contracts at the chunk sizes that (T, N) runs at.
void family_rows(BoundsReport& report, const FamilyContracts& fc, const std::vector<GridProblem>& problems,
                 const std::function<void(const std::string&)>& progress) {
  const BoundsGrid& g = report.grid;
  BoundsReport::FamilyPart part;
  part.family = fc.family->name();
  const std::vector<family::ContractPreset> presets = fc.family->contract_presets();
  for (const std::string& name : fc.names) {  // in the grid's order
    part.presets.push_back(*std::find_if(presets.begin(), presets.end(), [&](const auto& p) { return p.name == name; }));
  }
  for (const GridProblem& q : problems) {
    const family::BoundsProblem bp{q.T, q.N, g.heads, g.head_dim, g.groups, q.chunk_sizes, g.output_formats, g.seed};
    const family::BoundsRows rows = fc.family->bounds_rows(fc.names, bp);
    report.reference_seconds += rows.reference_seconds;
    part.problems = rows.problems;
    char line[240];
    std::snprintf(line, sizeof line, "%s T=%lld N=%lld: reference %.2f s (summed over the workers)", part.family.c_str(),
                  (long long)q.T, (long long)q.N, rows.reference_seconds);
    progress(line);
    for (const family::BoundsRow& row : rows.rows) {
      report.family_rows.push_back(family_row(part.family, row, bp));
      const FamilyRow& r = report.family_rows.back();
      int64_t over = 0;
      for (const FamilyTensorBounds& t : r.tensors) over += t.over_bound;
      char measured[40] = "not measured";
      if (!r.measured.empty()) std::snprintf(measured, sizeof measured, "measured %.2f s", r.measured_seconds);
      std::snprintf(line, sizeof line, "  %-36s L=%-4lld %-5s bound %.2f s, %s%s", r.contract.c_str(),
                    (long long)r.chunk_size, std::string(format_name(r.formats.output)).c_str(), r.bound_seconds,
                    measured, over > 0 ? " — ELEMENTS OVER THE BOUND" : "");
      progress(line);
    }
  }
  report.families.push_back(std::move(part));
}

std::string formats_text(const Formats& f) {
  return std::string(format_name(f.input)) + "/" + std::string(format_name(f.state)) + "/" +
         std::string(format_name(f.output));
}

}  // namespace

BoundsReport bounds_report(const BoundsGrid& g, const std::function<void(const std::string&)>& progress) {
  validate_grid(g);
  const auto start = std::chrono::steady_clock::now();
  BoundsReport report;
  report.grid = g;
  report.threads = ref::default_threads();
  std::vector<GridContract> contracts;
  for (const std::string& name : g.contracts) {
    if (family::family_of_contract(name) == nullptr) contracts.push_back(resolve(name, g));
  }
  const std::vector<FamilyContracts> others = family_contracts(g);
  const std::vector<GridProblem> problems = grid_problems(g);
  for (const Format input : g.input_formats) {
    for (const Format state : g.state_formats) {
      for (const Format output : g.output_formats) {
        const Formats f{input, state, output};
        std::vector<const GridContract*> used;
        for (const GridContract& gc : contracts) {
          const Contract c = contracts_at(gc, problems.front()).front();
          if (describes_input_format(c, input)) {
            used.push_back(&gc);
          } else {
            report.skipped.push_back("contract '" + gc.name + "' with formats " + formats_text(f) +
                                     ": it does not describe " + std::string(format_name(input)) + " inputs");
          }
        }
        if (used.empty()) continue;
        for (const GridProblem& q : problems) {
          const Problem p = grid_problem(g, q.T, q.N, f);
          auto t0 = std::chrono::steady_clock::now();
          const ref::ExactResult exact = ref::compute(p);
          const double ref_s = seconds_since(t0);
          report.reference_seconds += ref_s;
          const Fp32Reference fp32 = fp32_reference(p);
          char line[200];
          std::snprintf(line, sizeof line, "T=%lld N=%lld %s: reference %.2f s", (long long)q.T, (long long)q.N,
                        formats_text(f).c_str(), ref_s);
          progress(line);
          for (const GridContract* gc : used) {
            for (const Contract& c : contracts_at(*gc, q)) {
              report.rows.push_back(bounds_row(p, exact, fp32, c));
              const BoundsRow& r = report.rows.back();
              std::snprintf(line, sizeof line, "  %-24s L=%-4lld bound %.2f s, twin %s %.2f s%s", c.name.c_str(),
                            (long long)r.chunk_size, r.bound_seconds, r.twin.empty() ? "none" : r.twin.c_str(),
                            r.twin_seconds,
                            r.tensors.front().measured && r.tensors.front().over_bound + r.tensors.back().over_bound > 0
                                ? " — ELEMENTS OVER THE BOUND"
                                : "");
              progress(line);
            }
          }
        }
      }
    }
  }
  for (const FamilyContracts& fc : others) family_rows(report, fc, problems, progress);
  report.seconds = seconds_since(start);
  return report;
}

}  // namespace ssmv::verify
