// A choice among values that shrinks toward the first: rapidcheck's gen::element and
// gen::elementOf (in Debian's snapshot) never shrink, so a case found with chunk size 256 or
// N = 64 would keep them. List the simplest value first.
#pragma once

#include <rapidcheck.h>

#include <cstddef>
#include <vector>

namespace ssmv::prop {

template <typename T>
rc::Gen<T> choice_of(std::vector<T> values) {
  const size_t n = values.size();
  return rc::gen::map(rc::gen::inRange<size_t>(0, n), [values](size_t i) { return values[i]; });
}

template <typename T, typename... Ts>
rc::Gen<T> choice(T first, Ts... rest) {
  return choice_of<T>(std::vector<T>{first, T(rest)...});
}

}  // namespace ssmv::prop
