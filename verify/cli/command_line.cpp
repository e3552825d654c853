#include "verify/cli/command_line.h"

#include <algorithm>
#include <charconv>

#include <CLI/CLI.hpp>

namespace ssmv::cli {
namespace {

template <typename T>
bool parse_whole(const std::string& text, T& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

CommandLine::CommandLine(std::string command) : command_(std::move(command)), app_(std::make_unique<CLI::App>()) {
  app_->set_help_flag();  // ssmv's own -h / --help, below
  app_->allow_extras();   // unknown options: parse() names them in ssmv's words
  app_->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app_->add_flag("-h,--help", help_);
  app_->add_option("args", positionals_);
}

CommandLine::~CommandLine() = default;

void CommandLine::text(const std::string& flag, std::function<void(const std::string&)> set) {
  app_->add_option_function<std::string>(flag, std::move(set));
}

void CommandLine::text(const std::string& flag, std::string& out) {
  text(flag, [&out](const std::string& v) { out = v; });
}

void CommandLine::report_files(std::string& json, std::string& markdown) {
  text("--json", json);
  text("--markdown", markdown);
}

void CommandLine::integer(const std::string& flag, int64_t lo, int64_t hi, std::function<void(int64_t)> set) {
  text(flag, [flag, lo, hi, set = std::move(set)](const std::string& text) {
    int64_t v = 0;
    if (!parse_whole(text, v)) throw UsageError("option '" + flag + "': '" + text + "' is not an integer");
    if (v < lo || v > hi) {
      throw UsageError("option '" + flag + "' = " + text + " is outside [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "]");
    }
    set(v);
  });
}

void CommandLine::u64(const std::string& flag, std::function<void(uint64_t)> set) {
  text(flag, [flag, set = std::move(set)](const std::string& text) {
    uint64_t v = 0;
    if (!parse_whole(text, v)) throw UsageError("option '" + flag + "': '" + text + "' is not a non-negative integer");
    set(v);
  });
}

void CommandLine::flag(const std::string& flag, std::function<void()> set) {
  app_->add_flag_function(flag, [set = std::move(set)](int64_t) { set(); })->disable_flag_override();
}

void CommandLine::flag_pair(const std::string& yes, const std::string& no, std::function<void(bool)> set) {
  // CLI11 counts the negation as -1; with TakeLast the callback sees the last one given.
  app_->add_flag_function(yes + ",!" + no, [set = std::move(set)](int64_t n) { set(n > 0); })
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
      ->disable_flag_override();
}

namespace {

// CLI11's complaint in ssmv's words: "--json: 1 required TEXT missing" (the option was the
// last argument), "dt-softplus was given a disallowed flag override" (--dt-softplus=false:
// a flag takes no value, so the whole argument is an unknown option).
UsageError usage_error(const CLI::ParseError& e, const std::vector<std::string>& args, const std::string& command) {
  const std::string what = e.what();
  if (e.get_name() == "ArgumentMismatch" && what.ends_with(" missing")) {
    return UsageError("option '" + what.substr(0, what.find(':')) + "' needs a value");
  }
  if (what.find("flag override") != std::string::npos) {
    const std::string prefix = "--" + what.substr(0, what.find(' ')) + "=";
    const auto given = std::find_if(args.begin(), args.end(), [&](const std::string& a) { return a.starts_with(prefix); });
    if (given != args.end()) return UsageError(command + ": unknown option '" + *given + "'");
  }
  return UsageError(command + ": " + what);
}

}  // namespace

bool CommandLine::parse(const std::vector<std::string>& args, void (*usage)(), size_t max_positionals,
                        const std::string& unknown) {
  // -h / --help anywhere (but as another option's value) wins over every other complaint.
  const auto asked_help = [&] { return help_ || app_->get_option("--help")->count() > 0; };
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 reads from the back
  try {
    app_->parse(reversed);
  } catch (const CLI::ParseError& e) {
    if (!asked_help()) throw usage_error(e, args, command_);
  } catch (const UsageError&) {  // a value the option's check refused
    if (!asked_help()) throw;
  }
  if (asked_help()) {
    usage();
    return false;
  }
  const std::vector<std::string> extra = app_->remaining();
  if (!extra.empty()) throw UsageError(command_ + ": " + unknown + " '" + extra.front() + "'");
  if (positionals_.size() > max_positionals) {
    throw UsageError(command_ + ": " + unknown + " '" + positionals_[max_positionals] + "'");
  }
  return true;
}

}  // namespace ssmv::cli
