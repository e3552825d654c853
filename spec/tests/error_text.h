// what() of the exception f throws, or a note that nothing was thrown: error-message tests
// compare the whole text.
#pragma once

#include <exception>
#include <string>

namespace ssmv::testing {

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "<nothing thrown>";
}

}  // namespace ssmv::testing
