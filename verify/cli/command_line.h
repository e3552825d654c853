// The command line of one ssmv command, defined once and read with CLI11 (Debian
// libcli11-dev): the same definitions give the parsing, the option groups, the exclusions
// and the help text (`ssmv COMMAND --help`). ssmv's rules on top of CLI11's tokenizer:
//  * every option is given at most once: a repeated option or flag is a UsageError naming
//    both values ("last wins" hides a typo in a long command line);
//  * options that contradict each other (--dt-softplus, --no-dt-softplus) are an error;
//  * option values are checked by ssmv: the message names the option and the value
//    (UsageError, exit code 2); a value may start with '-' (--dt-limit -inf,0), but a value
//    that is another option's name means the value was forgotten;
//  * the files a command reads and writes are declared as such: before any work, every
//    written file must be writable and must be none of the files read nor another written
//    one (compared by resolved path and by inode: links, ./a and a), so that no command
//    ever overwrites its own input.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "verify/cli/usage_error.h"

namespace CLI {
class App;  // included by command_line.cpp only
}

namespace ssmv::cli {

class CommandLine {
 public:
  // `command` ("ssmv check") starts the messages and the help's usage line; `about` is the
  // prose the help opens with, `footer` the prose it ends with (both wrapped to 100 columns).
  CommandLine(std::string command, const std::string& about, const std::string& footer = "");
  ~CommandLine();

  // The options added next are listed under `title` in the help.
  void group(const std::string& title);

  // --flag VALUE: `value` names the value in the help (FILE, N, F), `help` says what it is.
  // The setter runs after the whole line is read, in the order the options were defined.
  void text(const std::string& flag, const std::string& value, const std::string& help,
            std::function<void(const std::string&)> set);
  void text(const std::string& flag, const std::string& value, const std::string& help, std::string& out);
  // An integer in [lo, hi] / a non-negative 64-bit integer.
  void integer(const std::string& flag, const std::string& value, const std::string& help, int64_t lo, int64_t hi,
               std::function<void(int64_t)> set);
  void u64(const std::string& flag, const std::string& value, const std::string& help,
           std::function<void(uint64_t)> set);
  // A flag without a value.
  void flag(const std::string& flag, const std::string& help, std::function<void()> set);
  // A flag and its negation (--dt-softplus, --no-dt-softplus): both given is an error.
  void flag_pair(const std::string& yes, const std::string& yes_help, const std::string& no,
                 const std::string& no_help, std::function<void(bool)> set);

  // A file the command reads (an input) or writes (an output) given with --flag FILE.
  void input_file(const std::string& flag, const std::string& help, std::string& out);
  void output_file(const std::string& flag, const std::string& help, std::string& out);
  // --json FILE, --markdown FILE and --junit FILE: where a command also writes its report
  // (outputs).
  void report_files(std::string& json, std::string& markdown, std::string& junit);
  // An option (defined before) whose value may name a file the command reads, such as
  // --contract NAME|FILE.json: an output onto it is refused like one onto an input.
  void may_read_file(const std::string& flag);

  // Two options (defined before) that contradict each other: both given is an error.
  void excludes(const std::string& a, const std::string& b);

  // The one positional argument `name` (FILE) the command takes, as an input file (`file`)
  // or a plain value. A second one is an error whose message ends with `only_one`
  // ("one dump per check; for two use `ssmv compare --a A --b B`").
  void positional(const std::string& name, const std::string& help, std::string& out, bool file,
                  const std::string& only_one);

  // Reads `args` and runs the setters; checks the files (above). When -h or --help was given,
  // prints the generated help and returns false. An unknown option or a stray argument is
  // a UsageError "<command>: unknown option '<argument>'".
  bool parse(const std::vector<std::string>& args);

  // The help text, as --help prints it.
  std::string help() const;

 private:
  struct Option;
  Option& add(const std::string& flag, const std::string& value, const std::string& help, bool takes_value);
  Option& find(const std::string& flag);
  void check_files() const;

  std::string command_;
  std::unique_ptr<CLI::App> app_;
  std::string group_ = "Options";
  std::vector<std::unique_ptr<Option>> options_;
  std::unique_ptr<Option> positional_;
  bool help_ = false;
};

}  // namespace ssmv::cli
