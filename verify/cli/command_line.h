// The command line of one ssmv command, read with CLI11 in ssmv's manner: option values
// are checked by ssmv (the message names the option and the value; UsageError, exit code
// 2), an option given twice takes its last value, a value may start with '-'
// (--dt-limit -inf,0), and -h / --help asks for the command's usage text, which each
// command keeps by hand (CLI11's generated help would lose its prose).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace CLI {
class App;  // CLI11 (Debian libcli11-dev), included by command_line.cpp only
}

namespace ssmv::cli {

// Bad usage: the message names the option and the value; ssmv exits with code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CommandLine {
 public:
  // `command` ("ssmv check") starts the messages about unknown options.
  explicit CommandLine(std::string command);
  ~CommandLine();

  // --flag VALUE, handed to `set` as text / as an integer in [lo, hi] / as a u64.
  void text(const std::string& flag, std::function<void(const std::string&)> set);
  void text(const std::string& flag, std::string& out);
  void integer(const std::string& flag, int64_t lo, int64_t hi, std::function<void(int64_t)> set);
  void u64(const std::string& flag, std::function<void(uint64_t)> set);
  // --json FILE and --markdown FILE: where a command also writes its report.
  void report_files(std::string& json, std::string& markdown);
  // A flag without a value.
  void flag(const std::string& flag, std::function<void()> set);
  // A flag and its negation (--dt-softplus, --no-dt-softplus): `set` gets the last given.
  void flag_pair(const std::string& yes, const std::string& no, std::function<void(bool)> set);

  // Reads `args`. When -h or --help was given, prints the command's `usage` and returns
  // false. An unknown option, or an argument that is no option beyond the first
  // `max_positionals`, is a UsageError "<command>: <unknown> '<argument>'"; the others are
  // positionals(), in order.
  bool parse(const std::vector<std::string>& args, void (*usage)(), size_t max_positionals = 0,
             const std::string& unknown = "unknown option");
  const std::vector<std::string>& positionals() const { return positionals_; }

 private:
  std::string command_;
  std::unique_ptr<CLI::App> app_;
  bool help_ = false;
  std::vector<std::string> positionals_;
};

}  // namespace ssmv::cli
