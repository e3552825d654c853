#include "verify/family/mamba3/bounds_rows.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <numeric>

#include "reference/reference.h"  // ref::default_threads
#include "spec/mamba3/random_problem.h"
#include "spec/parallel.h"
#include "verify/bound/mamba3/prefill_bound.h"
#include "verify/bound/mamba3/prefill_emulation.h"
#include "verify/bound/mamba3/step_bound.h"
#include "verify/bound/mamba3/step_emulation.h"
#include "verify/family/mamba3/certified_trace.h"
#include "verify/family/mamba3/contracts.h"
#include "verify/family/mamba3/dump_reading.h"  // kStepKernel, kPrefillKernel
#include "verify/judge/verdict.h"

namespace ssmv::family::mamba3 {
namespace {

using ref::mamba3::CertifiedValues;
using ssmv::mamba3::Problem;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The tensors of a row: y, then the final state's parts that have a bound above 0.
constexpr size_t kTensors = 4;
constexpr std::array<const char*, kTensors> kNames = {"y", "final_angle_state", "final_state", "final_B_prev"};
constexpr size_t kAngle = 1;

// One row: a step contract, or a prefill contract at one chunk size; in one output format.
struct RowSpec {
  std::string name;
  bool step = false;
  ssmv::mamba3::StepContract step_contract;
  ssmv::mamba3::PrefillContract prefill_contract;
  int64_t chunk = 0;  // the prefill's chunk size
  Format output{};
  bool host = false;  // a host emulation implements it: measured
};

// `t`, of one sequence with |S| kept at the ends of chunks of `from` tokens, with |S| kept at the
// ends of chunks of `to` tokens instead (`to` a multiple of `from`: every end of theirs is one of
// `from`'s, and the sequence's last token ends both).
bound::mamba3::ExactTrace coarser(const bound::mamba3::ExactTrace& t, const ssmv::mamba3::Shape& sh, int64_t from,
                                  int64_t to) {
  if (from == to) return t;
  bound::mamba3::ExactTrace c;
  c.angle = t.angle;
  c.angle_error = t.angle_error;
  c.y_abs = t.y_abs;
  const int64_t width = sh.H * sh.P * sh.N, ends_from = bound::mamba3::chunk_ends(sh, from);
  const int64_t ends_to = bound::mamba3::chunk_ends(sh, to);
  c.S_abs.reserve(size_t(ends_to * width));
  for (int64_t k = 0; k < ends_to; ++k) {
    const int64_t e = std::min((k + 1) * (to / from), ends_from) - 1;
    c.S_abs.insert(c.S_abs.end(), t.S_abs.begin() + e * width, t.S_abs.begin() + (e + 1) * width);
  }
  return c;
}

std::vector<RowSpec> row_specs(const std::vector<std::string>& contracts, const BoundsProblem& q) {
  std::vector<RowSpec> specs;
  for (const Format output : q.outputs) {
    for (const std::string& name : contracts) {
      RowSpec s;
      s.name = name;
      s.output = output;
      s.host = is_host_contract(name);
      if (is_step_contract(name)) {
        s.step = true;
        s.step_contract = step_contract(name);
        specs.push_back(s);
        continue;
      }
      s.prefill_contract = prefill_contract(name);
      for (const int64_t L : q.chunk_sizes) {
        s.chunk = L;
        specs.push_back(s);
      }
    }
  }
  return specs;
}

std::string problems_text(const BoundsProblem& q) {
  return "One sequence of T tokens, H heads in G groups, head dim P, state dim N, R = max(1, N/4) rotary angles "
         "(rope_fraction 0.5), drawn like upstream's test (`spec/mamba3/random_problem.h`, seed " +
         std::to_string(q.seed) +
         "): x, B, C, z, trap and angles N(0,1) in bf16, dt log-uniform in [1e-3, 0.1], adt = −a·dt with a uniform "
         "in [1, 16], the B/C biases and D N(0,1), an initial four-part state. bf16 inputs and angles, fp32 state, "
         "as mamba_ssm's kernels take them (`--input-formats` and `--state-formats` apply to Mamba2's contracts). "
         "The exact values: the certified reference token by token (`verify/family/mamba3/certified_trace.h`), "
         "once per problem for all its rows. The angle state's bound is a distance on the circle (fp32, as `ssmv "
         "check` judges it); final_x_prev is left out (the last token's bf16 x in the fp32 state: exact, bound 0). "
         "*measured*: the host emulation of a `.host_emulation` contract, judged as `ssmv check` judges a kernel "
         "(usage = error ÷ bound); mamba_ssm's kernels on an H200 against the production contracts: "
         "docs/mamba3-bounds.md §14 and §II.12.";
}

}  // namespace

BoundsRows bounds_rows(const std::vector<std::string>& contracts, const BoundsProblem& q) {
  const int64_t T = q.T, H = q.H, P = q.P, N = q.N, R = std::max<int64_t>(1, N / 4);
  const Problem pr = ssmv::mamba3::random_problem({0, T}, H, P, N, q.G, R, q.seed, true);
  const std::vector<RowSpec> specs = row_specs(contracts, q);
  // The reference keeps |S| at the ends of chunks every row's trace can be cut from.
  int64_t chunk = 0;
  for (const RowSpec& s : specs) chunk = std::gcd(chunk, s.step ? int64_t{1} : s.chunk);
  chunk = std::max<int64_t>(chunk, 1);

  BoundsRows out;
  out.problems = problems_text(q);
  const std::array<int64_t, kTensors> sizes = {T * H * P, H * R, H * P * N, H * N};
  for (const RowSpec& s : specs) {
    BoundsRow row;
    row.contract = s.name;
    row.kernel = s.step ? kStepKernel : kPrefillKernel;
    row.chunk_size = s.step ? 0 : s.chunk;
    row.formats = {pr.formats.input, pr.formats.state, s.output};
    if (s.host) {
      row.measured = s.step ? "the host emulation (verify/bound/mamba3/step_emulation.h)"
                            : "the host emulation (verify/bound/mamba3/prefill_emulation.h)";
    } else {
      row.note = "no host emulation implements this contract (mamba_ssm's kernels on an H200 against it: "
                 "docs/mamba3-bounds.md §14, §II.12)";
    }
    const std::array<Format, kTensors> formats = {s.output, Format::fp32, pr.formats.state, pr.formats.state};
    for (size_t k = 0; k < kTensors; ++k) {
      BoundsTensor t;
      t.name = kNames[k];
      t.format = formats[k];
      t.bound.resize(size_t(sizes[k]));
      t.exact.resize(size_t(sizes[k]));
      t.scale.resize(size_t(sizes[k]));
      if (s.host) t.usage.resize(size_t(sizes[k]));
      row.tensors.push_back(std::move(t));
    }
    out.rows.push_back(std::move(row));
  }

  // Per head (the one sequence's pair): seconds and elements over the bound, summed afterwards.
  const size_t rows = specs.size();
  std::vector<double> reference_s(static_cast<size_t>(H)), bound_s(size_t(H) * rows), measured_s(size_t(H) * rows);
  std::vector<int64_t> over(size_t(H) * rows * kTensors, 0);
  for_each_task(H, ref::default_threads(), [&](int64_t h, int64_t) {
    const Problem pair = pair_problem(pr, 0, h);
    auto t0 = std::chrono::steady_clock::now();
    const CertifiedRun run = certified_run(pair, 1, chunk);
    reference_s[size_t(h)] = seconds_since(t0);
    const std::array<const CertifiedValues*, kTensors> exact = {&run.y, &run.angle, &run.S, &run.B_prev};
    const std::array<int64_t, kTensors> width = {P, R, P * N, N};  // the pair's elements per token or head
    for (size_t r = 0; r < rows; ++r) {
      const RowSpec& s = specs[r];
      Problem p = pair;
      p.formats.output = s.output;
      t0 = std::chrono::steady_clock::now();
      const bound::mamba3::StepBounds b =
          s.step ? bound::mamba3::step_bounds(p, s.step_contract, run.trace)
                 : bound::mamba3::prefill_bounds(p, s.chunk, s.prefill_contract,
                                                 coarser(run.trace, p.shape, chunk, s.chunk));
      bound_s[size_t(h) * rows + r] = seconds_since(t0);
      bound::mamba3::EmulatedSteps e;
      if (s.host) {
        t0 = std::chrono::steady_clock::now();
        if (s.step) {
          bound::mamba3::EmulationOptions o;
          o.dot_operands = s.step_contract.dot_operands;
          e = bound::mamba3::emulate_steps(p, o);
        } else {
          bound::mamba3::PrefillEmulationOptions o;
          o.chunk_size = s.chunk;
          o.angle_store = s.prefill_contract.angle_store;
          o.qk_store = s.prefill_contract.qk_store;
          o.dot_operands = s.prefill_contract.dot_operands;
          o.qk_dot_tf32 = s.prefill_contract.qk_dot_tf32;
          e = bound::mamba3::emulate_prefill(p, o);
        }
        measured_s[size_t(h) * rows + r] = seconds_since(t0);
      }
      const std::array<const std::vector<double>*, kTensors> bounds = {&b.y, &b.angle, &b.S, &b.B_prev};
      const std::array<const std::vector<float>*, kTensors> computed = {&e.y, &e.angle, &e.S, &e.B_prev};
      for (size_t k = 0; k < kTensors; ++k) {
        BoundsTensor& t = out.rows[r].tensors[k];
        const CertifiedValues& x = *exact[k];
        for (size_t i = 0; i < x.size(); ++i) {
          // y: the pair's [T, P] rows at head h of [T, H, P]; a state part: head h's slot.
          const int64_t at = k == 0 ? (int64_t(i) / P * H + h) * P + int64_t(i) % P : h * width[k] + int64_t(i);
          const double bound = (*bounds[k])[i];
          t.bound[size_t(at)] = bound;
          t.exact[size_t(at)] = x.hi[i];
          t.scale[size_t(at)] = x.magnitude[i];
          if (!s.host) continue;
          const float v = (*computed[k])[i];
          const JudgedExact je = exact_near(t.format, v, x, i, k == kAngle);
          const verify::ElementJudgement j =
              verify::judge(t.format, round_nearest_even(t.format, double(v)), je.rounded, je.hi, je.error, bound);
          t.usage[size_t(at)] = j.bound_usage;
          if (j.verdict == verify::Verdict::violation || j.verdict == verify::Verdict::invalid) {
            ++over[(size_t(h) * rows + r) * kTensors + k];
          }
        }
      }
    }
  });
  for (int64_t h = 0; h < H; ++h) {
    out.reference_seconds += reference_s[size_t(h)];
    for (size_t r = 0; r < rows; ++r) {
      out.rows[r].bound_seconds += bound_s[size_t(h) * rows + r];
      out.rows[r].measured_seconds += measured_s[size_t(h) * rows + r];
      for (size_t k = 0; k < kTensors; ++k) out.rows[r].tensors[k].over_bound += over[(size_t(h) * rows + r) * kTensors + k];
    }
  }
  return out;
}

}  // namespace ssmv::family::mamba3
