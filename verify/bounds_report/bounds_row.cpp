#include "verify/bounds_report/bounds_row.h"

#include <chrono>
#include <cmath>
#include <functional>

#include "verify/bound/chunked_bound.h"
#include "verify/bound/sequential_bound.h"
#include "verify/judge/exact_bounds.h"
#include "verify/judge/verdict.h"
#include "verify/run/twin_for_contract.h"

namespace ssmv::verify {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// An upper bound of |exact_i − v| from the reference's nearest double, as
// verify/judge/verdict.cpp judge() bounds a kernel's error: the double difference nudged up
// by 2^-52, the certified error, and the rounding of the exact value to its nearest double.
double distance_to_exact(double v, double nearest, double certified_error) {
  return std::fabs(v - nearest) * (1 + 0x1p-52) + certified_error + std::fabs(nearest) * 0x1p-53;
}

using Attribute = std::function<bound::Attribution(int64_t index)>;

// The bound's summary of n elements into `t` (a TensorBounds or FamilyTensorBounds): bound ÷ |exact|
// and the bound in ULPs of f at |exact| (elements whose exact value is 0 counted in zero_exact),
// bound ÷ scale and in ULPs at the scale.
template <class Summary, class Exact, class Scale, class Bound>
void bound_ratios(Summary& t, Format f, int64_t n, const Exact& exact_at, const Scale& scale_at, const Bound& bound_at) {
  std::vector<std::pair<double, int64_t>> over_exact, over_scale, ulps, ulps_scale;
  for (int64_t i = 0; i < n; ++i) {
    const double exact = std::fabs(exact_at(i)), scale = scale_at(i), b = bound_at(i);
    if (exact > 0) {
      over_exact.emplace_back(b / exact, i);
      ulps.emplace_back(b / ulp_of(f, exact), i);
    } else {
      ++t.zero_exact;
    }
    if (scale > 0) {
      over_scale.emplace_back(b / scale, i);
      ulps_scale.emplace_back(b / ulp_of(f, scale), i);
    }
  }
  t.bound_over_exact = percentiles(std::move(over_exact));
  t.bound_over_scale = percentiles(std::move(over_scale));
  t.bound_ulps = percentiles(std::move(ulps));
  t.bound_ulps_at_scale = percentiles(std::move(ulps_scale));
}

// One tensor's summary. `bound`, `fp32` and (when given) `twin` are in the tensor's layout.
TensorBounds tensor_bounds(const std::string& name, Format f, const ref::ExactValues& ex,
                           const std::vector<double>& bound, const std::vector<double>& fp32,
                           const std::vector<Bits>* twin, const Attribute& attribute) {
  TensorBounds t;
  t.name = name;
  t.format = f;
  const int64_t n = int64_t(ex.size());
  t.elements = n;
  bound_ratios(t, f, n, [&](int64_t i) { return ex.nearest[i]; }, [&](int64_t i) { return ex.magnitude[i]; },
               [&](int64_t i) { return bound[i]; });
  std::vector<std::pair<double, int64_t>> fp32_err, allowed;
  std::vector<double> guaranteed(static_cast<size_t>(n));
  const Tolerance mamba = mamba_ssm_tolerance(f);
  for (int64_t i = 0; i < n; ++i) {
    const double scale = ex.magnitude[i], b = bound[i];
    if (scale > 0) fp32_err.emplace_back(std::fabs(fp32[i] - ex.nearest[i]) / scale, i);
    guaranteed[i] = b + distance_to_exact(fp32[i], ex.nearest[i], ex.certified_error[i]);
    if (b > 0) allowed.emplace_back((mamba.atol + mamba.rtol * std::fabs(fp32[i])) / b, i);
  }
  t.fp32_error_over_scale = percentiles(std::move(fp32_err));
  t.guaranteed = tolerance_frontier(guaranteed, fp32, f);
  t.mamba_allowed_over_bound = percentiles(std::move(allowed));
  const Percentiles& q = t.bound_over_scale;
  for (const auto& [at, index] : {std::pair{"p50", q.at_p50}, {"p99", q.at_p99}, {"max", q.at_max}}) {
    if (index < 0) continue;
    const bound::Attribution a = attribute(index);
    t.sources.push_back({at, index, bound[index], a.bound, a.shares});
  }
  if (twin == nullptr) return t;
  t.measured = true;
  std::vector<std::pair<double, int64_t>> err_exact, err_scale, usage;
  std::vector<double> kernel(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const Bits bits = (*twin)[i];
    kernel[i] = decode(f, bits);
    const ElementJudgement j = judge(f, bits, ex.rounded(f, size_t(i)), ex.nearest[i], ex.certified_error[i], bound[i]);
    if (j.verdict == Verdict::exact) ++t.exact_elements;
    if (j.verdict == Verdict::violation || j.verdict == Verdict::invalid) ++t.over_bound;
    const double exact = std::fabs(ex.nearest[i]), scale = ex.magnitude[i];
    if (exact > 0) err_exact.emplace_back(j.error / exact, i);
    if (scale > 0) err_scale.emplace_back(j.error / scale, i);
    usage.emplace_back(j.bound_usage, i);
  }
  t.error_over_exact = percentiles(std::move(err_exact));
  t.error_over_scale = percentiles(std::move(err_scale));
  t.usage = percentiles(std::move(usage));
  t.measured_tolerance = tolerance_frontier(deviations(kernel, fp32), fp32, f);
  return t;
}

}  // namespace

ToleranceFrontier tolerance_frontier(const std::vector<double>& deviation, const std::vector<double>& ref,
                                     Format format) {
  ToleranceFrontier fr;
  for (const double rtol : kFrontierRtols) fr.atol_at_rtol.emplace_back(rtol, smallest_atol(deviation, ref, rtol));
  fr.rtol_at_atol0 = smallest_rtol(deviation, ref, 0.0);
  fr.mamba = mamba_ssm_tolerance(format);
  fr.mamba_violations = tolerance_violations(deviation, ref, fr.mamba.rtol, fr.mamba.atol);
  return fr;
}

FamilyRow family_row(const std::string& family, const family::BoundsRow& row, const family::BoundsProblem& q) {
  FamilyRow r;
  r.family = family;
  r.contract = row.contract;
  r.kernel = row.kernel;
  r.measured = row.measured;
  r.note = row.note;
  r.T = q.T;
  r.N = q.N;
  r.P = q.P;
  r.H = q.H;
  r.G = q.G;
  r.chunk_size = row.chunk_size;
  r.formats = row.formats;
  r.bound_seconds = row.bound_seconds;
  r.measured_seconds = row.measured_seconds;
  for (const family::BoundsTensor& bt : row.tensors) {
    FamilyTensorBounds t;
    t.name = bt.name;
    t.format = bt.format;
    t.elements = int64_t(bt.bound.size());
    bound_ratios(t, bt.format, t.elements, [&](int64_t i) { return bt.exact[size_t(i)]; },
                 [&](int64_t i) { return bt.scale[size_t(i)]; }, [&](int64_t i) { return bt.bound[size_t(i)]; });
    t.measured = !bt.usage.empty();
    if (t.measured) {
      std::vector<std::pair<double, int64_t>> usage;
      usage.reserve(bt.usage.size());
      for (size_t i = 0; i < bt.usage.size(); ++i) usage.emplace_back(bt.usage[i], int64_t(i));
      t.usage = percentiles(std::move(usage));
      t.over_bound = bt.over_bound;
    }
    r.tensors.push_back(std::move(t));
  }
  return r;
}

BoundsRow bounds_row(const Problem& p, const ref::ExactResult& exact, const Fp32Reference& fp32, const Contract& c) {
  const Shape& s = p.shape;
  BoundsRow row;
  row.contract = c.name;
  row.family = c.family;
  row.T = s.num_tokens();
  row.N = s.N;
  row.P = s.P;
  row.H = s.H;
  row.G = s.G;
  row.chunk_size = c.family == Family::chunked ? c.chunk_size : 0;
  row.formats = p.formats;

  auto t0 = std::chrono::steady_clock::now();
  const TwinOutputs twin = run_twin_for(p, c, ref::default_threads());
  row.twin_seconds = seconds_since(t0);
  row.twin = twin.ran ? twin.kernel : "";
  row.twin_note = twin.why_not;
  const std::vector<Bits>* twin_y = twin.ran ? &twin.y : nullptr;
  const std::vector<Bits>* twin_state = twin.ran ? &twin.final_state : nullptr;

  t0 = std::chrono::steady_clock::now();
  // The bounds of y and of the stored final state, and how to split one element's.
  std::vector<double> y_bound, state_bound;
  Attribute attribute_y, attribute_state;
  bound::SequentialInput seq_in;
  bound::ChunkedInput chunk_in;
  if (c.family == Family::sequential) {
    // One launch per sequence: the state stays in the accumulation format across its tokens
    // and is stored once (the twin's way; with an fp32 state the same as one launch per token).
    seq_in = sequential_input_for(p, c, exact, /*tokens_per_launch=*/0);  // one launch per sequence
    bound::SequentialBounds b = bound::sequential_bounds(seq_in);
    y_bound = std::move(b.y);
    state_bound = std::move(b.stored_state);
    attribute_y = [&](int64_t i) { return bound::attribute_sequential(seq_in, bound::BoundOf::y, i); };
    attribute_state = [&](int64_t i) { return bound::attribute_sequential(seq_in, bound::BoundOf::stored_state, i); };
  } else {
    chunk_in = chunked_input_for(p, c, exact);
    bound::ChunkedBounds b = bound::chunked_bounds(chunk_in);
    y_bound = std::move(b.y);
    state_bound = std::move(b.final_state);
    attribute_y = [&](int64_t i) { return bound::attribute_chunked(chunk_in, bound::BoundOf::y, i); };
    attribute_state = [&](int64_t i) { return bound::attribute_chunked(chunk_in, bound::BoundOf::final_state, i); };
  }
  row.tensors.push_back(tensor_bounds("y", p.formats.output, exact.y, y_bound, fp32.y, twin_y, attribute_y));
  row.tensors.push_back(tensor_bounds("final_state", p.formats.state, exact.final_state, state_bound,
                                      fp32.final_state, twin_state, attribute_state));
  row.bound_seconds = seconds_since(t0);
  return row;
}

}  // namespace ssmv::verify
