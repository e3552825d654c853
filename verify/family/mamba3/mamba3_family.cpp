#include "verify/family/mamba3/mamba3_family.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "spec/progress.h"
#include "verify/bound/mamba3/step_bound.h"
#include "verify/cli/usage_error.h"
#include "verify/family/hints.h"
#include "verify/family/mamba3/certified_trace.h"
#include "verify/family/mamba3/dump_reading.h"
#include "verify/judge/tensor_judge.h"

namespace ssmv::family::mamba3 {
namespace {

using ssmv::mamba3::Problem;
using ref::mamba3::CertifiedValues;

bound::mamba3::StepContract step_contract(const std::string& name) {
  if (name == "mamba3_siso_step.production") return bound::mamba3::production_h200();
  if (name == "mamba3_siso_step.host_emulation") return bound::mamba3::host_emulation();
  throw cli::UsageError("contract '" + name + "' is not a Mamba-3 step contract: expected mamba3_siso_step.production "
                        "or mamba3_siso_step.host_emulation (Mamba-3 contract files are not read yet)");
}

// The sequence of packed token t.
int64_t sequence_of(const Problem& p, int64_t t) {
  const std::vector<int64_t>& cu = p.shape.cu_seqlens;
  return int64_t(std::upper_bound(cu.begin(), cu.end(), t) - cu.begin()) - 1;
}

// y [T, H, P] as (sequence, token in its sequence, head, dim).
verify::TensorLayout y_layout(const Problem& p) {
  const int64_t T = p.shape.num_tokens(), H = p.shape.H, P = p.shape.P;
  return {{"sequence", "token", "head", "dim"}, {T, H, P}, [&p, H, P](int64_t i) {
            const int64_t t = i / (H * P), s = sequence_of(p, t);
            return std::vector<int64_t>{s, t - p.shape.cu_seqlens[size_t(s)], (i / P) % H, i % P};
          }};
}

// A final-state part [S, H, rest...] as (sequence, head, rest...); `inner` the trailing dims.
verify::TensorLayout state_layout(const Problem& p, std::vector<std::string> names, std::vector<int64_t> inner) {
  std::vector<int64_t> dims = {p.shape.num_sequences(), p.shape.H};
  dims.insert(dims.end(), inner.begin(), inner.end());
  return {std::move(names), dims, [dims](int64_t i) {
            std::vector<int64_t> c(dims.size());
            for (size_t k = dims.size(); k-- > 0;) {
              c[k] = i % dims[k];
              i /= dims[k];
            }
            return c;
          }};
}

// 2π as a double-double (hi = RN(2π)).
constexpr double kTwoPiHi = 6.283185307179586, kTwoPiLo = 2.4492935982947064e-16;

// One tensor judged: the kernel's `computed` (values of `f`) against the certified values with
// the bounds. `circular`: an angle, judged against the representative θ + 2πk of the exact θ
// nearest the kernel's value (the bound is a distance on the circle, step_bound.h).
verify::TensorReport judge(const std::string& name, Format f, const std::vector<float>& computed,
                           const CertifiedValues& exact, const std::vector<double>& bounds, int check_bits,
                           verify::TensorLayout layout, bool circular) {
  verify::TensorJudge judge(name, f, int64_t(computed.size()), std::move(layout), verify::ElementDetail::summary);
  for (size_t i = 0; i < computed.size(); ++i) {
    double hi = exact.hi[i], lo = exact.lo[i], error = certified_error(exact, i);
    Bits exact_rounded = exact.rounded(f, i);
    if (circular && std::isfinite(computed[i])) {
      const double k = std::nearbyint((double(computed[i]) - hi) / kTwoPiHi);
      if (k != 0) {
        // hi + lo + k·2π in double-double: TwoSum of the leading parts, the rest in lo; the
        // error of this sum (below 2^-100 for |k| ≤ 2^20 of a value below 2^24) is charged.
        const double a = hi, b = k * kTwoPiHi, s = a + b, bb = s - a, e = (a - (s - bb)) + (b - bb);
        hi = s + (e + lo + k * kTwoPiLo);
        lo = (s - hi) + (e + lo + k * kTwoPiLo);
        error += std::ldexp(std::fabs(hi), -90);
        exact_rounded = round_nearest_even(f, hi);
      }
    }
    const ref::HandedValue value{nullptr, hi, lo, check_bits};
    judge.add(int64_t(i), round_nearest_even(f, double(computed[i])), exact_rounded, hi, error, exact.magnitude[i],
              bounds[i], value);
  }
  return judge.finish();
}

std::string summary(const Problem& p) {
  const ssmv::mamba3::Shape& s = p.shape;
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "Mamba-3 SISO: %lld sequences, %lld tokens, H=%lld P=%lld N=%lld G=%lld R=%lld; input %s, angles %s, "
                "state %s, output %s%s%s%s",
                (long long)s.num_sequences(), (long long)s.num_tokens(), (long long)s.H, (long long)s.P,
                (long long)s.N, (long long)s.G, (long long)s.R, std::string(format_name(p.formats.input)).c_str(),
                std::string(format_name(p.formats.angles)).c_str(), std::string(format_name(p.formats.state)).c_str(),
                std::string(format_name(p.formats.output)).c_str(), p.has_D() ? ", D" : "", p.has_z() ? ", z" : "",
                p.has_initial_state() ? ", initial state" : "");
  return buf;
}

class Mamba3Dump : public Dump {
 public:
  explicit Mamba3Dump(ResolvedDump d) : d_(std::move(d)), contract_(step_contract(d_.contract)) {}

  CheckedDump check(const std::string& name, const CheckOptions& o) const override {
    const Problem& p = d_.problem;
    const Outputs& out = d_.outputs;
    const CertifiedRun run = [&] {
      const progress::Phase phase("reference", 0, "");
      return certified_run(p, ref::default_threads());
    }();
    const bound::mamba3::StepBounds b = bound::mamba3::step_bounds(p, contract_, run.trace);
    const int64_t P = p.shape.P, N = p.shape.N, R = p.shape.R;
    verify::KernelCheck kc;
    kc.kernel = d_.kernel;
    kc.contract = contract_.name;
    kc.device = "external";
    const int bits = run.check_precision_bits;
    kc.tensors.push_back(judge("y", p.formats.output, out.y, run.y, b.y, bits, y_layout(p), false));
    const ssmv::mamba3::FourPartState& fs = out.final_state;
    if (!fs.angle.empty()) {
      kc.tensors.push_back(judge("final_angle_state", Format::fp32, fs.angle, run.angle, b.angle, bits,
                                 state_layout(p, {"sequence", "head", "angle"}, {R}), true));
    }
    if (!fs.S.empty()) {
      kc.tensors.push_back(judge("final_state", p.formats.state, fs.S, run.S, b.S, bits,
                                 state_layout(p, {"sequence", "head", "dim", "state"}, {P, N}), false));
    }
    if (!fs.B_prev.empty()) {
      kc.tensors.push_back(judge("final_B_prev", p.formats.state, fs.B_prev, run.B_prev, b.B_prev, bits,
                                 state_layout(p, {"sequence", "head", "state"}, {N}), false));
    }
    if (!fs.x_prev.empty()) {
      kc.tensors.push_back(judge("final_x_prev", p.formats.state, fs.x_prev, run.x_prev, b.x_prev, bits,
                                 state_layout(p, {"sequence", "head", "dim"}, {P}), false));
    }
    if (o.sharp) {
      for (verify::TensorReport& t : kc.tensors) {
        t.sharp.why_not = "the Mamba-3 family has no emulation of its rounding model yet";
      }
    }
    CheckedDump r;
    r.entry = verify::report_entry(name, summary(p), std::move(kc));
    return r;
  }

  std::vector<std::string> failure_hints() const override {
    std::vector<std::string> hints;
    for (std::string hint : {narrower_format_hint("y", d_.problem.formats.output, d_.outputs.y),
                             narrower_format_hint("final_states", d_.problem.formats.state, d_.outputs.final_state.S)}) {
      if (!hint.empty()) hints.push_back(std::move(hint));
    }
    return hints;
  }

  // The production contract's exp budget was measured for adt <= 0 (step_contract.h).
  std::string error_hint() const override {
    const std::vector<float>& adt = d_.problem.adt;
    const int64_t positive = std::count_if(adt.begin(), adt.end(), [](float v) { return v > 0; });
    if (positive == 0) return "";
    return "hint: adt > 0 at " + std::to_string(positive) + " of " + std::to_string(adt.size()) +
           " (token, head) pairs: a decaying state has adt = A·dt <= 0 (A < 0); was adt stored with the wrong sign?";
  }

 private:
  ResolvedDump d_;
  bound::mamba3::StepContract contract_;
};

class Mamba3Family : public Family {
 public:
  std::string name() const override { return "mamba3"; }
  std::vector<std::string> kernels() const override { return {"mamba3_step"}; }
  std::string kernel_help() const override {
    return "mamba3_step: mamba_ssm's Mamba-3 SISO decode step kernel, one launch per token, the four-part state "
           "stored after every token (docs/tensor-files.md, Mamba-3 dumps)";
  }
  std::unique_ptr<Dump> read(const DumpFiles& f) const override { return std::make_unique<Mamba3Dump>(resolve(f)); }
};

}  // namespace

const Family& family() {
  static const Mamba3Family f;
  return f;
}

}  // namespace ssmv::family::mamba3
