// The tier-equivalence campaign (issue 13 item 5; run locally, not in CI):
//   build/cpu/reference/tests/tier_campaign [problems per adversity, default 20000] [first seed]
// runs tier_problems.h's problems of every adversity through both tiers, checks what
// reference_tier_equivalence_test checks for y, final states and requested states, and
// prints per adversity the problems, pairs settled by each tier and mismatches. Exit
// code 1 when any problem mismatches.
#include <cstdio>
#include <cstdlib>

#include "reference/tests/tier_problems.h"

int main(int argc, char** argv) {
  using namespace ssmv::ref;
  using namespace ssmv::ref::testing;
  const long per = argc > 1 ? std::atol(argv[1]) : 20000;
  const unsigned long long first = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1000000;
  long total_bad = 0;
  for (int adv = 0; adv < int(Adversity::count); ++adv) {
    long problems = 0, bad = 0;
    TierCounts sum;
    for (long k = 0; k < per; ++k) {
      const TierCase c = tier_case(first + uint64_t(k), Adversity(adv));
      Options fast = c.options, slow = c.options;
      slow.tier = Tier::mpfr_only;
      const ExactResult a = compute(c.problem, fast), b = compute(c.problem, slow);
      bool ok = same_verdict_outputs("y", a.y, b.y, fast.certified_bits) &&
                same_verdict_outputs("final_state", a.final_state, b.final_state, fast.certified_bits) &&
                a.delta == b.delta && a.decay == b.decay && a.y_ungated == b.y_ungated;
      for (size_t s = 0; ok && s < a.states_at.size(); ++s) {
        ok = same_verdict_outputs("state_at", a.states_at[s].state, b.states_at[s].state, fast.certified_bits);
      }
      if (!ok) {
        ++bad;
        if (bad <= 5) std::printf("MISMATCH %s\n", c.what.c_str());
      }
      ++problems;
      sum.fast_pairs += a.tiers.fast_pairs;
      sum.mpfr_pairs += a.tiers.mpfr_pairs;
      sum.fast_elements += a.tiers.fast_elements;
      sum.mpfr_elements += a.tiers.mpfr_elements;
    }
    std::printf("%-13s problems %ld mismatches %ld | pairs fast %lld MPFR %lld (%.2f %%) | elements fast %lld MPFR %lld\n",
                adversity_name(Adversity(adv)), problems, bad, (long long)sum.fast_pairs,
                (long long)sum.mpfr_pairs, 100.0 * double(sum.mpfr_pairs) / double(sum.fast_pairs + sum.mpfr_pairs),
                (long long)sum.fast_elements, (long long)sum.mpfr_elements);
    std::fflush(stdout);
    total_bad += bad;
  }
  return total_bad ? 1 : 0;
}
