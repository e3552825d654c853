// Bad usage: the message names the option (or the dump's metadata key) and the value; ssmv
// exits with code 2. Header-only, so that the families' dump readers (verify/family/) throw
// it without linking the command line.
#pragma once

#include <stdexcept>

namespace ssmv::cli {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ssmv::cli
