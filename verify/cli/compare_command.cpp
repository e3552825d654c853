// ssmv compare: two dumps of the same problem (typically one from a chunked prefill, one
// from a token-by-token decode), each judged against the exact value, and every element
// where they differ classified identical / explained (within bound_a + bound_b) /
// unexplained — the side-by-side report of `ssmv run`, for kernels written elsewhere. Any
// family's kernels: each side is read and checked through its family (verify/family/family.h),
// keeping its elements; the two sides must be of one family.
#include "verify/cli/compare_command.h"

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "reference/reference.h"
#include "verify/cli/command_line.h"
#include "verify/cli/dump_options.h"
#include "verify/cli/verdict_table.h"
#include "verify/family/family.h"
#include "verify/judge/side_by_side.h"

namespace ssmv::cli {
namespace {

using tensor_file::DumpOptions;

// The options that describe the problem (shared by both sides), without the kernel's.
DumpOptions problem_part(const DumpOptions& o) {
  DumpOptions p;
  p.input_format = o.input_format;
  p.state_format = o.state_format;
  p.output_format = o.output_format;
  p.dt_softplus = o.dt_softplus;
  p.dt_limit = o.dt_limit;
  return p;
}

bool has_problem_tensors(const LoadedFile& f) { return f.tensors.count("x") != 0; }

struct Side {
  LoadedFile file;
  DumpOptions flags;  // --a-... / --b-...
};

struct SideResult {
  const family::Family* family = nullptr;
  std::unique_ptr<family::Dump> dump;  // the problem file's inputs under this side's options, its outputs
  family::CheckedDump checked;         // its elements kept; the element maps read `dump`
};

// A side's options: its own flags and the shared ones, its file's metadata, then what is
// still unset from the problem file's metadata. The formats must agree with the problem
// file's; dt_softplus and dt_limit may differ (a decode kernel has no dt_limit where a
// chunked one takes (0, inf)): whether the two sides still compute the same function is
// decided on their exact values (compare_command).
DumpOptions side_options(const std::string& label, const Side& side, const LoadedFile& problem_file,
                         const DumpOptions& shared) {
  DumpOptions o = side.flags;
  o.input_format = shared.input_format;
  o.state_format = shared.state_format;
  o.output_format = shared.output_format;
  o.dt_softplus = shared.dt_softplus;
  o.dt_limit = shared.dt_limit;
  o = merge_declared(o, "option", side.file);
  if (side.file.path != problem_file.path) {
    DumpOptions formats;  // the problem file's formats must be this side's
    formats.input_format = problem_file.declared.input_format;
    formats.state_format = problem_file.declared.state_format;
    formats.output_format = problem_file.declared.output_format;
    LoadedFile formats_only{problem_file.path, {}, formats};
    o = merge_declared(o, "side " + label + "'s option or " + side.file.path + " metadata", formats_only);
    if (!o.dt_softplus) o.dt_softplus = problem_file.declared.dt_softplus;
    if (!o.dt_limit) o.dt_limit = problem_file.declared.dt_limit;
  }
  return o;
}

// The side read by its family: the problem file's inputs under the side's options `o`, the
// side's outputs; a hand-off's per-sequence prefix belongs to its side: the tensor
// prefill_tokens of the side's own file (the other side of a compare is usually no hand-off).
SideResult read_side(const std::string& label, const Side& side, const LoadedFile& problem_file,
                     const DumpOptions& o) {
  SideResult r;
  r.family = &family_of(o, side.file.path, label + "-");
  family::DumpFiles files{problem_file.path, &problem_file.tensors, side.file.path, &side.file.tensors, o,
                          side.file.path, &side.file.tensors, label + "-"};
  r.dump = r.family->read(files);
  // The same problem on both sides: a dump that holds inputs must hold these inputs.
  if (has_problem_tensors(side.file) && side.file.path != problem_file.path) {
    family::DumpFiles own = files;
    own.problem_path = side.file.path;
    own.problem_tensors = &side.file.tensors;
    const std::string diff = r.dump->problem_difference(*r.family->read(own));
    if (!diff.empty()) {
      throw UsageError("ssmv compare: " + side.file.path + " (side " + label + ") is a dump of another problem than " +
                       problem_file.path + ": " + diff);
    }
  }
  return r;
}

// Both sides of one recurrence: their kernels of one family (before either is read: the problem
// file's tensors are one family's).
void expect_one_family(const DumpOptions& a, const DumpOptions& b, const Side& sa, const Side& sb) {
  const family::Family &fa = family_of(a, sa.file.path, "a-"), &fb = family_of(b, sb.file.path, "b-");
  if (&fa != &fb) {
    throw UsageError("ssmv compare: side a's kernel '" + *a.kernel + "' is of the " + fa.name() +
                     " family and side b's '" + *b.kernel + "' of the " + fb.name() +
                     " family: compare sets kernels of one recurrence side by side");
  }
}

// Both sides reading the problem file alike (its formats, as each side's options and file
// declare them).
void expect_same_problem(const SideResult& a, const SideResult& b) {
  const std::string diff = a.dump->problem_difference(*b.dump);
  if (!diff.empty()) throw UsageError("ssmv compare: the two sides read the problem differently: " + diff);
}

// Every element judged, its values kept for the side-by-side comparison (no sharp verdict).
void check(const std::string& label, const std::string& path, SideResult& r) {
  family::CheckOptions options;
  options.sharp = false;
  options.keep_elements = true;
  try {
    r.checked = r.dump->check(path, options);
  } catch (const std::invalid_argument& e) {  // e.g. a transcendental outside its budget's range
    const std::string hint = r.dump->error_hint();
    throw UsageError("ssmv compare: side " + label + ": " + e.what() + (hint.empty() ? "" : "\n" + hint));
  }
}

// Two sides compute the same function when their exact values agree element for element
// (options that differ without effect, such as a dt_limit of (0, inf) after softplus, are
// fine; a circular tensor's exact values may be different turns of the same angle);
// otherwise comparing them says nothing.
void expect_same_function(const SideResult& a, const SideResult& b) {
  const verify::KernelCheck &ca = a.checked.entry.check, &cb = b.checked.entry.check;
  for (size_t t = 0; t < ca.tensors.size(); ++t) {
    const verify::TensorReport& ta = ca.tensors[t];
    const double period = a.checked.element_maps[t].period;
    for (const verify::TensorReport& tb : cb.tensors) {
      if (ta.name != tb.name) continue;
      if (ta.format != tb.format || ta.exact_nearest.size() != tb.exact_nearest.size()) {
        throw UsageError("ssmv compare: the two sides declare different formats or sizes of '" + ta.name + "' (" +
                         std::string(format_name(ta.format)) + ", " + std::to_string(ta.exact_nearest.size()) +
                         " elements vs " + std::string(format_name(tb.format)) + ", " +
                         std::to_string(tb.exact_nearest.size()) + ")");
      }
      for (size_t i = 0; i < ta.exact_nearest.size(); ++i) {
        const double ea = ta.exact_nearest[i], eb = tb.exact_nearest[i];
        if (ea == eb) continue;
        // Two turns of one exact angle: their nearest doubles differ by a multiple of the period
        // within a few of their ULPs (2^-40 of the period is far above that, far below any
        // difference between two functions' angles).
        if (period > 0 && verify::divergence(ea, eb, period) <= period * 0x1p-40) continue;
        char buf[160];
        std::snprintf(buf, sizeof buf, "exact %s[%zu] is %a on side a and %a on side b", ta.name.c_str(), i, ea, eb);
        throw UsageError(std::string("ssmv compare: the two sides compute different functions (") + buf +
                         "): their options (e.g. dt_softplus, dt_limit) differ where it matters");
      }
    }
  }
}

}  // namespace

int compare_command(const std::vector<std::string>& args) {
  std::string problem_path, json_path, markdown_path, junit_path;
  DeclaredOptions common;
  Side a, b;
  std::string a_path, b_path;
  CommandLine line("ssmv compare",
                   "Two kernels' outputs on the same problem, side by side (e.g. a chunk_scan prefill and a "
                   "token-by-token SSU decode of the same prompt, or Mamba-3's mamba3_prefill and mamba3_step on the "
                   "same tokens; both kernels of one family): each against the exact value under its own "
                   "contract, then every element where they differ: identical, explained (|a - b| <= bound_a + "
                   "bound_b, an angle state on the circle: both may be honest rounding paths) or unexplained (at "
                   "least one of them is outside its contract).",
                   "exit codes: 0 every divergence explained and no VIOLATION/INVALID, 1 otherwise, 2 bad input or "
                   "usage.");
  line.group("Files");
  line.input_file("--a", "side a's outputs (y, optional final_states, a hand-off's prefill_tokens), with optional "
                  "metadata", a_path);
  line.input_file("--b", "side b's outputs, likewise", b_path);
  line.input_file("--problem", "the inputs (default: the --a file); a side's file that holds inputs too must hold "
                  "the same ones", problem_path);
  line.report_files(json_path, markdown_path, junit_path);
  add_kernel_options(line, "a-", a.flags);
  add_kernel_options(line, "b-", b.flags);
  add_problem_options(line, common);
  line.group("Judging");
  line.integer("--threads", "N", "reference worker threads (default 0: every core; results identical)", 0, 1024,
               [](int64_t n) { ref::set_default_threads(int(n)); });
  if (!line.parse(args)) return 0;
  if (a_path.empty() || b_path.empty()) throw UsageError("ssmv compare: --a FILE and --b FILE are required");

  a.file = load_dump_file(a_path);
  b.file = load_dump_file(b_path);
  contracts_override(a.flags, a.file, "a-");
  contracts_override(b.flags, b.file, "b-");
  const LoadedFile problem_file = problem_path.empty() ? a.file : load_dump_file(problem_path);
  if (!has_problem_tensors(problem_file)) {
    throw UsageError("ssmv compare: " + problem_file.path + " holds no inputs (x, dt, A, B, C): give --problem FILE");
  }
  const DumpOptions shared = problem_part(resolve_declared(common));
  const DumpOptions oa = side_options("a", a, problem_file, shared), ob = side_options("b", b, problem_file, shared);
  expect_one_family(oa, ob, a, b);
  SideResult ra = read_side("a", a, problem_file, oa);
  SideResult rb = read_side("b", b, problem_file, ob);
  expect_same_problem(ra, rb);
  check("a", a_path, ra);
  check("b", b_path, rb);
  expect_same_function(ra, rb);
  VerdictTable table("ssmv compare");
  const verify::SideBySide sbs = verify::side_by_side("a = " + a_path + " vs b = " + b_path, ra.checked.entry.check,
                                                      rb.checked.entry.check, ra.checked.element_maps);
  ra.checked.entry.name = "a: " + a_path;
  rb.checked.entry.name = "b: " + b_path;
  table.add(std::move(ra.checked.entry));
  table.add(std::move(rb.checked.entry));
  table.add(sbs);
  table.print(stdout);
  table.print_bad_elements(stdout);
  table.print_comparisons(stdout);
  table.write_files(json_path, markdown_path, junit_path);
  if (!table.ok()) {
    std::printf("\nnext: --markdown FILE lists the bad elements, the worst one's inputs and the worst divergence\n");
  }
  std::printf("\n%s\n", table.ok() ? "no VIOLATION, no INVALID, every divergence explained"
                                   : "FOUND VIOLATION, INVALID or an unexplained divergence");
  return table.ok() ? 0 : 1;
}

}  // namespace ssmv::cli
