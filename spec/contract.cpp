#include "spec/contract.h"

namespace ssmv {

std::string_view point_name(Point p) {
  switch (p) {
    case Point::dt_scaled_B: return "dt_scaled_B";
    case Point::decayed_CB: return "decayed_CB";
    case Point::incoming_state: return "incoming_state";
    case Point::stored_state: return "stored_state";
    case Point::output: return "output";
  }
  return "?";
}

std::string_view format_ref_name(FormatRef f) {
  switch (f) {
    case FormatRef::input: return "input";
    case FormatRef::state: return "state";
    case FormatRef::output: return "output";
    case FormatRef::fp32: return "fp32";
    case FormatRef::bf16: return "bf16";
    case FormatRef::fp16: return "fp16";
  }
  return "?";
}

namespace {
int64_t ceil_log2(int64_t v) {
  int64_t d = 0;
  while ((int64_t{1} << d) < v) ++d;
  return d;
}
}  // namespace

int64_t reduction_depth(const Reduction& r, int64_t length) {
  if (length <= 1) return length;  // one term: at most the rounding of its own product
  switch (r.order) {
    case ReductionOrder::sequential_fma: {
      const int64_t k = r.partials < 1 ? 1 : r.partials;
      return (length + k - 1) / k + ceil_log2(k);
    }
    case ReductionOrder::tree: return ceil_log2(length);
    case ReductionOrder::mma_m16n8k16: return (length + 15) / 16;
  }
  return length;
}

Format resolve(FormatRef ref, Format input, Format state, Format output) {
  switch (ref) {
    case FormatRef::input: return input;
    case FormatRef::state: return state;
    case FormatRef::output: return output;
    case FormatRef::fp32: return Format::fp32;
    case FormatRef::bf16: return Format::bf16;
    case FormatRef::fp16: return Format::fp16;
  }
  return Format::fp32;
}

}  // namespace ssmv
