// `ssmv bounds`: the grid (grid.h) run contract by contract — for every formats × (T, N) of
// the grid one problem, its certified exact values (reference/reference.h, computed once) and
// its fp32 reference (verify/allclose/), then one BoundsRow per contract and chunk size. Another
// recurrence family's presets named in the grid's contracts (Mamba-3's: verify/family/registry.h
// family_of_contract) are that family's to run on each (T, N) of the grid (Family::bounds_rows),
// summarised here as FamilyRows.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "verify/bounds_report/bounds_row.h"
#include "verify/bounds_report/grid.h"

namespace ssmv::verify {

struct BoundsReport {
  BoundsGrid grid;
  std::string command;                // the command line that made it (for the page)
  std::string plots_command;          // the command that makes its plots (empty: none given)
  int threads = 0;                    // worker threads it ran on
  std::vector<BoundsRow> rows;
  std::vector<FamilyRow> family_rows;  // other families' presets (none unless the grid names them)
  // Per family with rows: its name, what its problems are (BoundsRows::problems), and its
  // presets that have rows.
  struct FamilyPart {
    std::string family, problems;
    std::vector<family::ContractPreset> presets;
  };
  std::vector<FamilyPart> families;
  std::vector<std::string> skipped;   // contract × formats left out, and why
  double reference_seconds = 0;       // wall time of the certified reference, all problems (another
                                      // family's: summed over its workers)
  double seconds = 0;                 // wall time of the whole run
};

// Runs the grid (validate_grid first). Contracts are read with load_contract
// (verify/contracts/contract_json.h): a preset at every chunk size of the grid, a chunked
// contract file at its own chunk size only; another family's presets by that family, at every
// output format of the grid (its inputs' and state's formats are the family's). A contract that does not describe an input format
// of the grid (describes_input_format) skips it, noted in `skipped`. `progress` receives one
// line per problem and row. Throws std::invalid_argument for a bad grid or contract (the
// message names the option and value), and what the reference and the bounds throw.
BoundsReport bounds_report(const BoundsGrid& g, const std::function<void(const std::string&)>& progress);

}  // namespace ssmv::verify
