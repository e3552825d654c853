#include "verify/bounds_report/bounds_report.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "verify/contracts/contract_json.h"

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
    throw std::invalid_argument("option '--contract' = '" + name + "': " + e.what());
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
  for (const std::string& name : g.contracts) contracts.push_back(resolve(name, g));
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
  report.seconds = seconds_since(start);
  return report;
}

}  // namespace ssmv::verify
