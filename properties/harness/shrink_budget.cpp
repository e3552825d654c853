#include "properties/harness/shrink_budget.h"

namespace ssmv::prop {
namespace {

using Case = rc::Shrinkable<rc::detail::CaseDescription>;

Case budgeted(Case c, const std::shared_ptr<ShrinkBudget>& budget) {
  return rc::shrinkable::mapShrinks(std::move(c), [budget](rc::Seq<Case>&& shrinks) {
    return rc::seq::map(
        rc::seq::takeWhile(std::move(shrinks), [budget](const Case&) { return budget->take_step(); }),
        [budget](Case&& shrink) { return budgeted(std::move(shrink), budget); });
  });
}

}  // namespace

bool ShrinkBudget::take_step() {
  if (ended_) return false;
  const auto now = std::chrono::steady_clock::now();  // a time budget only, never a seed
  if (!started_) {
    started_ = true;
    start_ = now;
  }
  const bool steps_spent = max_steps_ > 0 && steps_ >= max_steps_;
  const bool time_spent = max_seconds_ > 0 && std::chrono::duration<double>(now - start_).count() >= max_seconds_;
  if (steps_spent || time_spent) {
    ended_ = true;
    return false;
  }
  ++steps_;
  return true;
}

rc::detail::Property with_shrink_budget(const rc::detail::Property& property, std::shared_ptr<ShrinkBudget> budget) {
  return rc::detail::Property([property, budget](const rc::Random& random, int size) {
    return budgeted(property(random, size), budget);
  });
}

}  // namespace ssmv::prop
