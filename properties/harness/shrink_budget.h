// A budget on rapidcheck's shrinking. Debian's rapidcheck snapshot shrinks until no smaller
// failing case exists (it has no max_shrinks): a failing relational property took 4 to 11
// minutes to shrink, past CTest's 600 s limit (issue 16). with_shrink_budget wraps a property
// so that every shrink candidate rapidcheck tries takes one step of the budget; once the
// steps or the seconds are spent the candidate sequences end, rapidcheck's shrink loop stops
// at the smallest failing case found so far and reports it (its reproduce string still
// walks to that case: the wrapper only truncates, never reorders, the candidates).
#pragma once

#include <rapidcheck.h>

#include <chrono>
#include <cstdint>
#include <memory>

namespace ssmv::prop {

class ShrinkBudget {
 public:
  // max_steps, max_seconds: 0 for no limit.
  ShrinkBudget(int64_t max_steps, double max_seconds) : max_steps_(max_steps), max_seconds_(max_seconds) {}

  // Called once per shrink candidate before rapidcheck tries it: false when the budget is
  // spent (the candidate is not tried). The clock starts at the first candidate.
  bool take_step();

  int64_t steps() const { return steps_; }  // candidates tried
  bool ended_shrinking() const { return ended_; }  // true when the budget, not a minimum, stopped it
  int64_t max_steps() const { return max_steps_; }
  double max_seconds() const { return max_seconds_; }

 private:
  int64_t max_steps_;
  double max_seconds_;
  int64_t steps_ = 0;
  bool ended_ = false;
  bool started_ = false;
  std::chrono::steady_clock::time_point start_;
};

// `property` with every shrink candidate, at every depth, paid from `budget`.
rc::detail::Property with_shrink_budget(const rc::detail::Property& property, std::shared_ptr<ShrinkBudget> budget);

}  // namespace ssmv::prop
