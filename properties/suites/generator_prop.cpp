// The generators themselves: values exact in their format, specials only when asked, shrink
// candidates exact, within the limits and strictly simpler (so shrinking terminates), and
// every generated problem valid (spec validate, the kernels' own checks).
//
// Case counts (base; ×100 in campaign mode): 6000 per value property, 1000 per problem property.
#include <cmath>

#include "fast/chunk_scan/chunk_scan.h"
#include "fast/ssu/ssu.h"
#include "properties/gen/choice.h"
#include "properties/gen/float_gen.h"
#include "properties/gen/problem_gen.h"
#include "properties/harness/property.h"

namespace ssmv::prop {
namespace {

// (nonzero, mantissa bits, |exponent|, sign): simpler_values promises a strict decrease.
std::tuple<int, int, int, int> complexity(double v) {
  if (v == 0) return {0, 0, 0, 0};
  int e;
  double m = std::frexp(std::fabs(v), &e);
  int bits = 0;
  while (m != std::floor(m)) {
    m *= 2;
    ++bits;
  }
  return {1, bits, std::abs(e - 1), std::signbit(v) ? 1 : 0};
}

}  // namespace

SSMV_PROPERTY(Generators, EdgeValuesExactAndShrinkSimpler, 6000, ()) {
  const Format f = *choice(Format::bf16, Format::fp16, Format::fp32);
  EdgeRange r;
  r.specials = *rc::gen::arbitrary<bool>();
  r.keep_sign = *rc::gen::arbitrary<bool>();
  r.negative = *rc::gen::arbitrary<bool>();
  const float v = *edge_value(f, r);
  RC_TAG(std::string(format_name(f)), std::isnan(v) ? "nan" : std::isinf(v) ? "inf" : v == 0 ? "zero" : "finite");
  if (!r.specials) RC_ASSERT(std::isfinite(v));
  if (std::isnan(v)) return;
  RC_ASSERT(representable(f, v));
  if (r.keep_sign && v != 0) RC_ASSERT(std::signbit(v) == r.negative);
  ShrinkLimits lim;
  lim.keep_sign = r.keep_sign;
  for (float c : simpler_values(f, v, lim)) {
    RC_ASSERT(representable(f, c));
    RC_ASSERT(std::isfinite(c));
    if (std::isfinite(v)) RC_ASSERT(complexity(c) < complexity(v));
    if (lim.keep_sign && c != 0) RC_ASSERT(std::signbit(c) == std::signbit(v));
  }
}

SSMV_PROPERTY(Generators, NormalValuesExact, 6000, ()) {
  const Format f = *choice(Format::bf16, Format::fp16, Format::fp32);
  const float v = *normal_value(f, 0, 1);
  RC_ASSERT(representable(f, v));
  RC_ASSERT(std::isfinite(v));
}

SSMV_PROPERTY(Generators, PrefillProblemsValid, 1000, ()) {
  const ChunkCase c = draw_chunk_case(PrefillOptions{});
  const Problem& p = c.g.problem;
  validate(p);  // throws ProblemError naming the field: a failure
  chunk_scan::Config cfg;
  cfg.contract = c.kind;
  cfg.chunk_size = c.L;
  chunk_scan::validate(p, cfg);
  for (float a : p.A) RC_ASSERT(a <= 0.0f);  // the chunked bound refuses A > 0
}

SSMV_PROPERTY(Generators, DecodeProblemsValid, 1000, ()) {
  const GeneratedDecode g = *decode_problem(DecodeOptions{});
  label_case(g);
  ssu::validate(g.decode);
  RC_ASSERT(g.decode.problem.initial_state.empty());
}

}  // namespace ssmv::prop
