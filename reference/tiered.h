// Internal: the fast tier of the reference (docs/reference-tiers.md). One worker runs one
// (sequence, head) pair at a time in double-double with a rigorous running error bound
// for every value, and hands a value to the Sink only when it is settled: its enclosure
// decides the check run's nearest double and its correct rounding in fp32, bf16 and
// fp16, and the bound is at most 2^-certified_bits of the value's magnitude. δ, the
// decay and the gates are the check run's own MPFR values (TokenScalars), so delta,
// decay and every magnitude are bit for bit those of the MPFR tier.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "reference/driver.h"

namespace ssmv::ref::detail {

struct FastOutcome {
  bool settled = false;      // every value of the pair was handed over
  int64_t tokens_done = 0;   // tokens cu[s] .. cu[s] + tokens_done - 1 were handed over
  size_t positions_done = 0;  // so were the states of the first positions_done requested positions
  int64_t elements = 0;      // y and state elements handed over
};

class FastPairRunner {
 public:
  FastPairRunner(const Problem& pr, const InitialStates& init, const Options& o, int check_bits,
                 const std::vector<std::vector<int64_t>>& positions, Sink& sink);
  ~FastPairRunner();
  FastPairRunner(const FastPairRunner&) = delete;
  FastPairRunner& operator=(const FastPairRunner&) = delete;

  // Runs pair (s, h) until its end or its first value that cannot be settled.
  FastOutcome run(int64_t s, int64_t h);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ssmv::ref::detail
