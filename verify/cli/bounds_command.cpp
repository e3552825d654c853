#include "verify/cli/bounds_command.h"

#include <cstdio>
#include <filesystem>
#include <optional>
#include <span>
#include <string>

#include "reference/reference.h"
#include "verify/bounds_report/bounds_json.h"
#include "verify/bounds_report/bounds_markdown.h"
#include "verify/bounds_report/bounds_report.h"
#include "verify/cli/command_line.h"
#include "verify/cli/dump_options.h"
#include "verify/tensor_file/tensor_file.h"

namespace ssmv::cli {
namespace {

// "a,b,c" → its items; an empty item is an error naming the option.
std::vector<std::string> items(const std::string& flag, const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    out.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (out.back().empty()) throw UsageError("option '" + flag + "' = '" + text + "': an empty item");
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

std::vector<int64_t> integers(const std::string& flag, const std::string& text, int64_t lo, int64_t hi) {
  std::vector<int64_t> out;
  for (const std::string& item : items(flag, text)) {
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || used == 0) throw UsageError("option '" + flag + "': '" + item + "' is not an integer");
    if (v < lo || v > hi) {
      throw UsageError("option '" + flag + "' = " + item + " is outside [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "]");
    }
    out.push_back(v);
  }
  return out;
}

std::vector<Format> formats(const std::string& flag, const std::string& text) {
  std::vector<Format> out;
  for (const std::string& item : items(flag, text)) {
    Format f;
    if (!parse_format(item, f)) throw UsageError("option '" + flag + "' = '" + item + "': expected fp32, bf16 or fp16");
    if (block_scaled(f)) {
      throw UsageError("option '" + flag + "' = '" + item + "': ssmv bounds runs the bundled kernels' twins, which "
                       "store fp32, bf16 or fp16 states");
    }
    out.push_back(f);
  }
  return out;
}

// The base of a sweep given as a list without its base: the list's value nearest the default.
int64_t nearest(const std::vector<int64_t>& list, int64_t to) {
  int64_t best = list.front();
  for (const int64_t v : list) {
    if (std::llabs(v - to) < std::llabs(best - to)) best = v;
  }
  return best;
}

void write_text(const std::string& path, const std::string& text) {
  tensor_file::write_file_atomically(path, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

}  // namespace

int bounds_command(const std::vector<std::string>& args) {
  bool quick = false;
  std::optional<std::vector<std::string>> contracts;
  std::optional<std::vector<int64_t>> lengths, state_dims, chunk_sizes;
  std::optional<int64_t> base_length, base_state_dim, base_chunk_size, heads, head_dim, groups;
  std::optional<std::vector<Format>> input_formats, state_formats, output_formats;
  std::optional<uint64_t> seed;
  std::string md_path, json_path, plots;
  CommandLine line("ssmv bounds",
                   "The rigorous per-element error bound of each contract (verify/bound/) over a grid of "
                   "Mamba2-realistic problems (one sequence of T tokens), beside the certified exact values: bound / "
                   "|exact| and bound / scale at p50/p99/max, in ULPs, which sources make it up, how it grows with T, "
                   "N and the chunk size; the measured error of the bundled host twin where one implements the "
                   "contract (usage = error / bound); the smallest allclose (rtol, atol) against an fp32 reference. "
                   "docs/error-bounds.md is its output for the bundled and Triton contracts. The shapes are three "
                   "sweeps through (T0, N0, L0): T over --lengths, N over --state-dims, L over --chunk-sizes "
                   "(chunked contracts); times every input x state x output format.",
                   "exit codes: 0 every twin element within its bound, 1 a twin's element exceeds its bound (a "
                   "finding), 2 bad usage.");
  line.group("Contracts and grid");
  line.text("--contract", "NAME|FILE,...", "presets (ssmv contract list) or contract JSON files, comma-separated "
            "(default: ssu,triton.ssu,chunk_scan.production,chunk_scan.fp32,triton.chunk_scan); a chunked file runs "
            "at its own chunk size. Mamba-3's presets (mamba3_siso_step.*, mamba3_siso_combined.*) run on Mamba-3 "
            "problems of the same grid (upstream's draws; bf16 inputs, fp32 state): their bounds beside the certified "
            "values, the host emulation's usage under the host_emulation presets",
            [&](const std::string& v) { contracts = items("--contract", v); });
  line.flag("--quick", "a grid of seconds: T 32,160; N 16,32; L 64; H 2, P 8, G 1 (options below override it)",
            [&] { quick = true; });
  line.text("--lengths", "T,...", "T values (default 64,256,1024,4096,8192)",
            [&](const std::string& v) { lengths = integers("--lengths", v, 1, 1 << 20); });
  line.text("--state-dims", "N,...", "N values (default 16,64,128,256)",
            [&](const std::string& v) { state_dims = integers("--state-dims", v, 1, 1024); });
  line.text("--chunk-sizes", "L,...", "L values (default 64,128,256)",
            [&](const std::string& v) { chunk_sizes = integers("--chunk-sizes", v, 1, 1 << 16); });
  line.integer("--base-length", "T0", "the other sweeps' T (default 1024, or the listed value nearest it)", 1, 1 << 20,
               [&](int64_t v) { base_length = v; });
  line.integer("--base-state-dim", "N0", "the other sweeps' N (default 128, or the listed value nearest it)", 1, 1024,
               [&](int64_t v) { base_state_dim = v; });
  line.integer("--base-chunk-size", "L0", "the other sweeps' L (default 256, or the listed value nearest it)", 1,
               1 << 16, [&](int64_t v) { base_chunk_size = v; });
  line.integer("--heads", "H", "heads (default 4)", 1, 1024, [&](int64_t v) { heads = v; });
  line.integer("--head-dim", "P", "head dimension (default 64)", 1, 1024, [&](int64_t v) { head_dim = v; });
  line.integer("--groups", "G", "B/C groups (default 2)", 1, 1024, [&](int64_t v) { groups = v; });
  line.text("--input-formats", "F,...", "fp32, bf16, fp16 (default bf16); a contract that does not describe an input "
            "format skips it", [&](const std::string& v) { input_formats = formats("--input-formats", v); });
  line.text("--state-formats", "F,...", "default fp32",
            [&](const std::string& v) { state_formats = formats("--state-formats", v); });
  line.text("--output-formats", "F,...", "default bf16,fp32",
            [&](const std::string& v) { output_formats = formats("--output-formats", v); });
  line.u64("--seed", "S", "the problems' seed (default 1)", [&](uint64_t v) { seed = v; });
  line.integer("--threads", "N", "worker threads of the reference, bounds and twins (default 0: every core)", 0, 1024,
               [](int64_t n) { ref::set_default_threads(int(n)); });
  line.group("Output");
  line.output_file("--out-md", "write the page (atomically)", md_path);
  line.output_file("--out-json", "write the data (atomically)", json_path);
  line.text("--plots", "PREFIX", "the page links PREFIXbounds-vs-T.svg and PREFIXbounds-vs-N.svg (made from the JSON "
            "by scripts/plot_bounds.py)", plots);
  if (!line.parse(args)) return 0;

  verify::BoundsGrid g = quick ? verify::quick_bounds_grid() : verify::default_bounds_grid();
  if (contracts) g.contracts = *contracts;
  if (lengths) g.lengths = *lengths;
  if (state_dims) g.state_dims = *state_dims;
  if (chunk_sizes) g.chunk_sizes = *chunk_sizes;
  g.base_length = base_length ? *base_length : nearest(g.lengths, g.base_length);
  g.base_state_dim = base_state_dim ? *base_state_dim : nearest(g.state_dims, g.base_state_dim);
  g.base_chunk_size = base_chunk_size ? *base_chunk_size : nearest(g.chunk_sizes, g.base_chunk_size);
  if (heads) g.heads = *heads;
  if (head_dim) g.head_dim = *head_dim;
  if (groups) g.groups = *groups;
  if (input_formats) g.input_formats = *input_formats;
  if (state_formats) g.state_formats = *state_formats;
  if (output_formats) g.output_formats = *output_formats;
  if (seed) g.seed = *seed;
  try {
    verify::validate_grid(g);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("ssmv bounds: ") + e.what());
  }

  std::string command = "ssmv bounds";
  for (const std::string& a : args) command += " " + a;
  verify::BoundsReport report;
  try {
    report = verify::bounds_report(g, [](const std::string& s) {
      std::printf("%s\n", s.c_str());
      std::fflush(stdout);
    });
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    if (what.rfind("option '", 0) == 0) throw UsageError("ssmv bounds: " + what);
    throw;
  }
  report.command = command;
  if (!plots.empty() && !json_path.empty() && !md_path.empty()) {
    // The plots' folder as the page links it: PREFIX relative to the page's folder.
    const std::filesystem::path page_dir = std::filesystem::path(md_path).parent_path();
    report.plots_command = "/usr/bin/python3 scripts/plot_bounds.py " + json_path + " " + (page_dir / plots).string();
  }
  if (!json_path.empty()) write_text(json_path, json::dump(verify::bounds_to_json(report), 1) + "\n");
  if (!md_path.empty()) write_text(md_path, verify::bounds_to_markdown(report, plots));
  int64_t over = 0;
  for (const verify::BoundsRow& row : report.rows) {
    for (const verify::TensorBounds& t : row.tensors) {
      if (t.over_bound == 0) continue;
      over += t.over_bound;
      std::printf("FINDING: %s T=%lld N=%lld L=%lld %s: %lld elements of the twin above the bound\n",
                  row.contract.c_str(), (long long)row.T, (long long)row.N, (long long)row.chunk_size,
                  t.name.c_str(), (long long)t.over_bound);
    }
  }
  for (const verify::FamilyRow& row : report.family_rows) {
    for (const verify::FamilyTensorBounds& t : row.tensors) {
      if (t.over_bound == 0) continue;
      over += t.over_bound;
      std::printf("FINDING: %s T=%lld N=%lld L=%lld %s %s: %lld elements of %s above the bound\n", row.contract.c_str(),
                  (long long)row.T, (long long)row.N, (long long)row.chunk_size,
                  std::string(format_name(row.formats.output)).c_str(), t.name.c_str(), (long long)t.over_bound,
                  row.measured.c_str());
    }
  }
  std::printf("\n%zu rows in %.1f s (reference %.1f s)%s\n", report.rows.size() + report.family_rows.size(), report.seconds,
              report.reference_seconds, over > 0 ? " — TWIN ELEMENTS OVER THE BOUND" : "; every twin element within its bound");
  return over > 0 ? 1 : 0;
}

}  // namespace ssmv::cli
