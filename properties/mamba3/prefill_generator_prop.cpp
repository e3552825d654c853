// The Mamba-3 prefill generator (prefill_check.h) itself: the chunk size is one of kChunkSizes
// (and chunk_size(except) never the excluded one), the problem validates, has the prefill's
// lengths (1–3 sequences of min_len–20 tokens, or one of 16–128) and what prefill_bounds requires
// of its data (adt <= 0, dt > 0: the bound refuses the rest), with and without min_len = 2.
//
// Case counts (base; ×100 in campaign mode): 3000.
#include <algorithm>

#include "properties/harness/property.h"
#include "properties/mamba3/prefill_check.h"

namespace ssmv::prop::mamba3 {

SSMV_PROPERTY(Mamba3PrefillPropertyGenerator, ProblemsValid, 3000, ()) {
  StepOptions o = prefill_step_options();
  o.min_len = *rc::gen::inRange<int64_t>(1, 3);
  const GeneratedPrefill g = *prefill_problem(o);
  label_prefill_case(g);
  const int64_t other = *chunk_size(g.chunk);
  RC_ASSERT(std::count(kChunkSizes.begin(), kChunkSizes.end(), g.chunk) == 1);
  RC_ASSERT(std::count(kChunkSizes.begin(), kChunkSizes.end(), other) == 1);
  RC_ASSERT(other != g.chunk);
  const ssmv::mamba3::Problem& p = g.problem;
  const ssmv::mamba3::Shape& s = p.shape;
  ssmv::mamba3::validate(p);  // throws: the property fails
  RC_ASSERT(s.num_sequences() >= 1 && s.num_sequences() <= o.max_sequences);
  if (s.num_sequences() == 1 && s.num_tokens() > o.max_len) {  // a long case
    RC_ASSERT(s.num_tokens() >= kLongMin && s.num_tokens() <= kLongMax);
  } else {
    for (int64_t q = 0; q < s.num_sequences(); ++q) RC_ASSERT(s.seq_len(q) >= o.min_len && s.seq_len(q) <= o.max_len);
  }
  for (size_t i = 0; i < p.dt.size(); ++i) RC_ASSERT(p.dt[i] > 0.0f && p.adt[i] <= 0.0f);
}

}  // namespace ssmv::prop::mamba3
