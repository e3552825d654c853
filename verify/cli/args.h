// Command-line argument reading shared by the ssmv subcommands.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>


namespace ssmv::cli {

// Bad usage: the message names the option and the value; ssmv exits with code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ArgReader {
 public:
  explicit ArgReader(const std::vector<std::string>& args) : args_(args) {}
  bool more() const { return i_ < args_.size(); }
  std::string next() { return args_[i_++]; }
  // The value after `flag`, as text or as an integer in [lo, hi].
  std::string value(const std::string& flag);
  int64_t value_int(const std::string& flag, int64_t lo, int64_t hi);
  uint64_t value_u64(const std::string& flag);

 private:
  const std::vector<std::string>& args_;
  size_t i_ = 0;
};

}  // namespace ssmv::cli
