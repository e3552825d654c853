// ssmv compare: two dumps of the same problem (typically one from a chunked prefill, one
// from a token-by-token decode), each judged against the exact value, and every element
// where they differ classified identical / explained (within bound_a + bound_b) /
// unexplained — the side-by-side report of `ssmv run`, for kernels written elsewhere.
#include "verify/cli/compare_command.h"

#include <bit>
#include <cstdio>
#include <string>

#include "reference/reference.h"
#include "verify/cli/command_line.h"
#include "verify/cli/dump_options.h"
#include "verify/cli/verdict_table.h"
#include "verify/family/mamba2/dump_reading.h"
#include "verify/judge/external_check.h"
#include "verify/judge/side_by_side.h"

namespace ssmv::cli {
namespace {

using family::mamba2::kernel_of;
using family::mamba2::problem_of;
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

// The first difference between two problems' inputs, "" when they are the same problem.
std::string first_difference(const Problem& a, const Problem& b) {
  const Shape &sa = a.shape, &sb = b.shape;
  if (sa.cu_seqlens != sb.cu_seqlens) return "cu_seqlens (the sequences) differ";
  if (sa.H != sb.H || sa.P != sb.P || sa.N != sb.N || sa.G != sb.G) {
    return "shapes differ: H, P, N, G = " + std::to_string(sa.H) + ", " + std::to_string(sa.P) + ", " +
           std::to_string(sa.N) + ", " + std::to_string(sa.G) + " vs " + std::to_string(sb.H) + ", " +
           std::to_string(sb.P) + ", " + std::to_string(sb.N) + ", " + std::to_string(sb.G);
  }
  const std::pair<const char*, const std::vector<float> Problem::*> tensors[] = {
      {"x", &Problem::x},   {"dt", &Problem::dt},           {"A", &Problem::A},
      {"B", &Problem::B},   {"C", &Problem::C},             {"z", &Problem::z},
      {"dt_bias", &Problem::dt_bias}, {"D", &Problem::D},   {"initial_states", &Problem::initial_state}};
  for (const auto& [name, member] : tensors) {
    const std::vector<float>&va = a.*member, &vb = b.*member;
    if (va.size() != vb.size()) {
      return "tensor '" + std::string(name) + "': " + std::to_string(va.size()) + " vs " + std::to_string(vb.size()) +
             " elements";
    }
    for (size_t i = 0; i < va.size(); ++i) {
      if (std::bit_cast<uint32_t>(va[i]) != std::bit_cast<uint32_t>(vb[i])) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "element %zu: %a vs %a", i, double(va[i]), double(vb[i]));
        return "tensor '" + std::string(name) + "' " + buf;
      }
    }
  }
  return "";
}

bool has_problem_tensors(const LoadedFile& f) { return f.tensors.count("x") != 0; }

struct Side {
  LoadedFile file;
  DumpOptions flags;  // --a-... / --b-...
};

struct SideResult {
  Problem problem;  // the inputs of the problem file under this side's options
  verify::KernelCheck check;
};

// A side's options: its own flags and the shared ones, its file's metadata, then what is
// still unset from the problem file's metadata. The formats must agree with the problem
// file's; dt_softplus and dt_limit may differ (a decode kernel has no dt_limit where a
// chunked one takes (0, inf)): whether the two sides still compute the same function is
// decided on their exact values (compare_command).
SideResult check_side(const std::string& label, const Side& side, const LoadedFile& problem_file,
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
  // Side by side is Mamba2's so far: the other families' checks keep no per-element values.
  const family::Family& fam = family_of(o, side.file.path, label + "-");
  if (fam.name() != "mamba2") {
    throw UsageError("ssmv compare: side " + label + "'s kernel '" + *o.kernel + "' is of the " + fam.name() +
                     " family; compare sets Mamba2's kernels (ssu, chunk_scan, handoff) side by side only");
  }
  SideResult r{problem_of(problem_file.tensors, problem_file.path, o), {}};
  // The same problem on both sides: a dump that holds inputs must hold these inputs.
  if (has_problem_tensors(side.file) && side.file.path != problem_file.path) {
    const std::string diff = first_difference(r.problem, problem_of(side.file.tensors, side.file.path, o));
    if (!diff.empty()) {
      throw UsageError("ssmv compare: " + side.file.path + " (side " + label + ") is a dump of another problem than " +
                       problem_file.path + ": " + diff);
    }
  }
  // A hand-off's per-sequence prefix belongs to its side: the tensor prefill_tokens of the
  // side's own file (the other side of a compare is usually no hand-off).
  const verify::ExternalKernel kernel = kernel_of(o, side.file.tensors, side.file.path, r.problem, label + "-");
  const tensor_file::KernelOutputs outputs =
      tensor_file::outputs_from_tensors(side.file.tensors, side.file.path, r.problem);
  r.check = verify::check_external(r.problem, kernel, outputs.y, outputs.final_states);
  return r;
}

// Two sides compute the same function when their exact values agree element for element
// (options that differ without effect, such as a dt_limit of (0, inf) after softplus, are
// fine); otherwise comparing them says nothing.
void expect_same_function(const SideResult& a, const SideResult& b) {
  if (!(a.problem.formats.input == b.problem.formats.input && a.problem.formats.state == b.problem.formats.state &&
        a.problem.formats.output == b.problem.formats.output)) {
    throw UsageError("ssmv compare: the two sides declare different formats");
  }
  for (const verify::TensorReport& ta : a.check.tensors) {
    for (const verify::TensorReport& tb : b.check.tensors) {
      if (ta.name != tb.name) continue;
      for (size_t i = 0; i < ta.exact_nearest.size(); ++i) {
        if (ta.exact_nearest[i] == tb.exact_nearest[i]) continue;
        char buf[160];
        std::snprintf(buf, sizeof buf, "exact %s[%zu] is %a on side a and %a on side b", ta.name.c_str(), i,
                      ta.exact_nearest[i], tb.exact_nearest[i]);
        throw UsageError(std::string("ssmv compare: the two sides compute different functions (") + buf +
                         "): their dt_softplus or dt_limit differ where it matters");
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
                   "token-by-token SSU decode of the same prompt): each against the exact value under its own "
                   "contract, then every element where they differ: identical, explained (|a - b| <= bound_a + "
                   "bound_b: both may be honest rounding paths) or unexplained (at least one of them is outside its "
                   "contract).",
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
  const SideResult ra = check_side("a", a, problem_file, shared);
  const SideResult rb = check_side("b", b, problem_file, shared);
  expect_same_function(ra, rb);
  VerdictTable table("ssmv compare");
  table.add(verify::report_entry("a: " + a_path, ra.check, ra.problem));
  table.add(verify::report_entry("b: " + b_path, rb.check, rb.problem));
  table.add(verify::side_by_side("a = " + a_path + " vs b = " + b_path, ra.check, rb.check, ra.problem));
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
