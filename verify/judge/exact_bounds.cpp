#include "verify/judge/exact_bounds.h"

namespace ssmv::verify {

bound::ChunkedInput chunked_input_for(const Problem& p, const Contract& contract, const ref::ExactResult& exact) {
  bound::ChunkedInput in;
  in.problem = &p;
  in.contract = &contract;
  in.delta = &exact.delta;
  in.y_exact = &exact.y.nearest;
  in.y_ungated = &exact.y_ungated;
  in.y_certified_error = &exact.y.certified_error;
  in.threads = ref::default_threads();
  return in;
}

bound::SequentialInput sequential_input_for(const Problem& p, const Contract& contract, const ref::ExactResult& exact,
                                            int64_t tokens_per_launch) {
  bound::SequentialInput in;
  in.problem = &p;
  in.contract = &contract;
  in.delta = &exact.delta;
  in.decay = &exact.decay;
  in.y_exact = &exact.y.nearest;
  in.y_certified_error = &exact.y.certified_error;
  in.y_ungated = &exact.y_ungated;
  in.tokens_per_launch = tokens_per_launch;
  in.threads = ref::default_threads();
  return in;
}

bound::ChunkedBounds chunked_bounds_for(const Problem& p, const Contract& contract,
                                        const ref::ExactResult& exact) {
  return bound::chunked_bounds(chunked_input_for(p, contract, exact));
}

}  // namespace ssmv::verify
