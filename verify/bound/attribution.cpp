#include "verify/bound/attribution.h"

#include <algorithm>

#include "verify/bound/tagged.h"

namespace ssmv::bound {
namespace {

// The rounding point a source is, if it is one.
bool source_point(BoundSource s, Point& p) {
  switch (s) {
    case BoundSource::dt_scaled_B: p = Point::dt_scaled_B; return true;
    case BoundSource::decayed_CB: p = Point::decayed_CB; return true;
    case BoundSource::incoming_state: p = Point::incoming_state; return true;
    case BoundSource::final_incoming_state: p = Point::final_incoming_state; return true;
    case BoundSource::stored_state: p = Point::stored_state; return true;
    case BoundSource::output: p = Point::output; return true;
    default: return false;
  }
}

bool source_sum(BoundSource s, Sum& out) {
  switch (s) {
    case BoundSource::sum_cumsum: out = Sum::cumsum; return true;
    case BoundSource::sum_chunk_state: out = Sum::chunk_state; return true;
    case BoundSource::sum_state_passing: out = Sum::state_passing; return true;
    case BoundSource::sum_cb: out = Sum::cb; return true;
    case BoundSource::sum_y: out = Sum::y; return true;
    default: return false;
  }
}

Attribution shares_of(const Tagged& parts, const Contract& c, const Formats& f) {
  Attribution a;
  a.bound = total(parts);
  for (size_t i = 0; i < kBoundSources; ++i) {
    if (parts.v[i] == 0) continue;
    const BoundSource s = BoundSource(i);
    a.shares.push_back({s, source_label(s, c, f), parts.v[i], a.bound > 0 ? parts.v[i] / a.bound : 0.0});
  }
  std::stable_sort(a.shares.begin(), a.shares.end(),
                   [](const SourceShare& x, const SourceShare& y) { return x.value > y.value; });
  return a;
}

}  // namespace

std::string_view bound_source_name(BoundSource s) {
  switch (s) {
    case BoundSource::dt_scaled_B: return "dt_scaled_B";
    case BoundSource::decayed_CB: return "decayed_CB";
    case BoundSource::incoming_state: return "incoming_state";
    case BoundSource::final_incoming_state: return "final_incoming_state";
    case BoundSource::stored_state: return "stored_state";
    case BoundSource::output: return "output";
    case BoundSource::exp: return "exp";
    case BoundSource::softplus: return "softplus";
    case BoundSource::sigmoid: return "sigmoid";
    case BoundSource::sum_cumsum: return "sum:cumsum";
    case BoundSource::sum_chunk_state: return "sum:chunk_state";
    case BoundSource::sum_state_passing: return "sum:state_passing";
    case BoundSource::sum_cb: return "sum:CB";
    case BoundSource::sum_y: return "sum:y";
    case BoundSource::arithmetic: return "arithmetic";
    case BoundSource::initial_error: return "initial_error";
    case BoundSource::underflow: return "underflow";
  }
  return "?";
}

std::string source_label(BoundSource s, const Contract& c, const Formats& f) {
  std::string label(bound_source_name(s));
  Point p;
  Sum sum;
  if (source_point(s, p)) {
    // The point's format as the contract names it; stored_state and output are the state
    // and output formats when the contract does not list them.
    Format fmt = p == Point::output ? f.output : f.state;
    for (const Rounding& r : c.roundings) {
      if (r.point == p) fmt = resolve(r.format, f.input, f.state, f.output);
    }
    label += " (" + std::string(format_name(fmt)) + ")";
  } else if (source_sum(s, sum)) {
    const Reduction* r = find_reduction(c, sum);
    const bool declared = r != nullptr && r->detail != undeclared_reduction(sum).detail;
    label += declared ? " (" + std::string(reduction_order_name(r->order)) + ")" : " (not declared: sequential_fma)";
  } else if (s == BoundSource::arithmetic) {
    label = std::string(format_name(c.accumulation)) + " arithmetic";
  }
  return label;
}

Attribution attribute_sequential(const SequentialInput& in, BoundOf which, int64_t index, const YElement* y_element) {
  return shares_of(sequential_bound_parts(in, which, index, y_element), *in.contract, in.problem->formats);
}

Attribution attribute_chunked(const ChunkedInput& in, BoundOf which, int64_t index) {
  return shares_of(chunked_bound_parts(in, which, index), *in.contract, in.problem->formats);
}

}  // namespace ssmv::bound
