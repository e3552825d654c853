// The Mamba-3 step generator (step_gen.h) itself: every problem validates, has the promised
// shape (N even in [4, 32], R even in [2, N/2], G | H, 1–3 sequences of min_len–8 tokens, at
// most max_updates state updates unless min_len forces more, or one long sequence) and values in the promised ranges
// (16-bit inputs exact in bf16, dt in (0, 0.1], adt = −a·dt with a in [1, 16], θ in [0, 6.28),
// the state's parts exact in the state format), with and without min_len = 2.
//
// Case counts (base; ×100 in campaign mode): 10000.
#include <cmath>

#include "properties/harness/property.h"
#include "properties/mamba3/step_gen.h"

namespace ssmv::prop::mamba3 {

SSMV_PROPERTY(Mamba3PropertyGenerator, StepProblemsValid, 10000, ()) {
  StepOptions o;
  o.min_len = *rc::gen::inRange<int64_t>(1, 3);
  const GeneratedStep g = *step_problem(o);
  label_case(g);
  const ssmv::mamba3::Problem& p = g.problem;
  const ssmv::mamba3::Shape& s = p.shape;
  ssmv::mamba3::validate(p);  // throws: the property fails
  RC_ASSERT(s.N % 2 == 0 && s.N >= 4 && s.N <= 32);
  RC_ASSERT(s.R % 2 == 0 && s.R >= 2 && 2 * s.R <= s.N);
  RC_ASSERT(s.H % s.G == 0 && s.P >= 1 && s.P <= 8);
  RC_ASSERT(s.num_sequences() >= 1 && s.num_sequences() <= o.max_sequences);
  const int64_t HPN = s.H * s.P * s.N;
  if (s.num_sequences() == 1 && s.num_tokens() > o.max_len) {  // a long case
    RC_ASSERT(s.num_tokens() >= kLongMin && s.num_tokens() <= kLongMax);
    RC_ASSERT(s.num_tokens() == kLongMin || s.num_tokens() * HPN <= 4 * o.max_updates);
  } else {
    for (int64_t q = 0; q < s.num_sequences(); ++q) RC_ASSERT(s.seq_len(q) >= o.min_len && s.seq_len(q) <= o.max_len);
    RC_ASSERT(s.num_tokens() * HPN <= std::max(o.max_updates, s.num_sequences() * o.min_len * HPN));
    RC_ASSERT(s.num_sequences() == 1 || s.num_sequences() * o.min_len * HPN <= o.max_updates);
  }
  for (const std::vector<float>* v : {&p.x, &p.B, &p.C, &p.trap, &p.angles, &p.z}) {
    for (float e : *v) RC_ASSERT(representable(Format::bf16, e));
  }
  for (size_t i = 0; i < p.dt.size(); ++i) {
    RC_ASSERT(p.dt[i] > 0.0f && p.dt[i] <= 0.1f);
    const double a = -double(p.adt[i]) / double(p.dt[i]);
    RC_ASSERT(a >= 1.0 - 0x1p-23 && a <= 16.0 * (1 + 0x1p-23));
  }
  for (float th : p.initial.angle) RC_ASSERT(th >= 0.0f && th < 6.28f);
  for (const std::vector<float>* v : {&p.initial.S, &p.initial.B_prev, &p.initial.x_prev}) {
    for (float e : *v) RC_ASSERT(representable(p.formats.state, e));
  }
}

}  // namespace ssmv::prop::mamba3
