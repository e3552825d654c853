#include "verify/cli/command_line.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <sstream>

#include <CLI/CLI.hpp>

namespace ssmv::cli {
namespace {

namespace fs = std::filesystem;

constexpr size_t kHelpWidth = 100;       // columns of the help text
constexpr size_t kOptionColumn = 30;     // where an option's description starts

template <typename T>
bool parse_whole(const std::string& text, T& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

// `text` wrapped to `width` columns at spaces; a line break in `text` is kept, and a line
// that starts with a space is kept as it is (a table or an example).
std::string wrap(const std::string& text, size_t width) {
  std::string out;
  std::istringstream lines(text);
  std::string line;
  bool first = true;
  while (std::getline(lines, line)) {
    if (!first) out += '\n';
    first = false;
    if (line.starts_with(' ') || line.size() <= width) {
      out += line;
      continue;
    }
    std::istringstream words(line);
    std::string word;
    size_t column = 0;
    while (words >> word) {
      if (column > 0 && column + 1 + word.size() > width) {
        out += '\n';
        column = 0;
      } else if (column > 0) {
        out += ' ';
        ++column;
      }
      out += word;
      column += word.size();
    }
  }
  return out;
}

// The help in ssmv's order: the usage line, then what the command does, then the options.
class Formatter : public CLI::Formatter {
 public:
  explicit Formatter(std::string about) : about_(std::move(about)) {
    label("Usage", "usage");
    column_width(kOptionColumn);
  }
  std::string make_description(const CLI::App*) const override { return ""; }
  std::string make_usage(const CLI::App* app, std::string name) const override {
    std::string usage = CLI::Formatter::make_usage(app, std::move(name));
    return usage + (about_.empty() ? "" : wrap(about_, kHelpWidth) + "\n");
  }

 private:
  std::string about_;
};

// CLI11's complaint in ssmv's words: "--json: 1 required TEXT missing" (the option was the
// last argument), "dt-softplus was given a disallowed flag override" (--dt-softplus=false:
// a flag takes no value, so the whole argument is an unknown option), "--a excludes --b".
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
  if (e.get_name() == "ExcludesError") {
    const size_t at = what.find(" excludes ");
    return UsageError(command + ": options '" + what.substr(0, at) + "' and '" + what.substr(at + 10) +
                      "' contradict each other: give one of them");
  }
  return UsageError(command + ": " + what);
}

// Whether two paths name one file: the same inode when both exist (links, ./a and a), the
// same absolute normalised path otherwise (two outputs onto one new file).
bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0) {
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  }
  std::error_code ec;
  const fs::path ca = fs::weakly_canonical(fs::absolute(a, ec), ec);
  const fs::path cb = fs::weakly_canonical(fs::absolute(b, ec), ec);
  return ca.lexically_normal() == cb.lexically_normal();
}

// An output path must be a file in an existing, writable folder (and writable when it exists).
void check_writable(const std::string& option, const std::string& path) {
  const fs::path p(path);
  std::error_code ec;
  if (fs::is_directory(p, ec)) throw UsageError("option '" + option + "' = '" + path + "': is a folder");
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) {
    throw UsageError("option '" + option + "' = '" + path + "': folder '" + dir.string() + "' does not exist");
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    throw UsageError("option '" + option + "' = '" + path + "': folder '" + dir.string() + "' is not writable");
  }
  if (fs::exists(p, ec) && ::access(p.c_str(), W_OK) != 0) {
    throw UsageError("option '" + option + "' = '" + path + "': the file exists and is not writable");
  }
}

}  // namespace

enum class Role { none, input, output, maybe_input };

struct CommandLine::Option {
  std::string flag;       // "--threads", or the positional's name
  bool takes_value = true;
  std::vector<std::string> values;  // every occurrence (CLI11 keeps them all; ssmv allows one)
  CLI::Option* cli = nullptr;
  std::function<void(const std::string&)> set_value;
  std::function<void()> set_flag;
  Role role = Role::none;
  std::string only_one;  // a positional's message for a second one

  size_t given() const { return takes_value ? values.size() : cli->count(); }
};

CommandLine::CommandLine(std::string command, const std::string& about, const std::string& footer)
    : command_(std::move(command)), app_(std::make_unique<CLI::App>("", command_)) {
  app_->formatter(std::make_shared<Formatter>(about));
  app_->set_help_flag();  // ssmv's own -h / --help: help wins over every other complaint
  app_->add_flag("-h,--help", help_, "this text");
  app_->allow_extras();   // unknown options: parse() names them in ssmv's words
  if (!footer.empty()) app_->footer(wrap(footer, kHelpWidth));
}

CommandLine::~CommandLine() = default;

void CommandLine::group(const std::string& title) { group_ = title; }

CommandLine::Option& CommandLine::add(const std::string& flag, const std::string& value, const std::string& help,
                                      bool takes_value) {
  auto o = std::make_unique<Option>();
  o->flag = flag;
  o->takes_value = takes_value;
  const std::string text = wrap(help, kHelpWidth - kOptionColumn);
  if (takes_value) {
    o->cli = app_->add_option(flag, o->values, text)
                 ->type_name(value)
                 ->expected(1)
                 ->allow_extra_args(false)
                 ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  } else {
    o->cli = app_->add_flag(flag)->description(text)->disable_flag_override();
  }
  o->cli->group(group_);
  options_.push_back(std::move(o));
  return *options_.back();
}

CommandLine::Option& CommandLine::find(const std::string& flag) {
  for (const auto& o : options_) {
    if (o->flag == flag) return *o;
  }
  if (positional_ && positional_->flag == flag) return *positional_;
  throw std::logic_error("CommandLine: no option " + flag);
}

void CommandLine::text(const std::string& flag, const std::string& value, const std::string& help,
                       std::function<void(const std::string&)> set) {
  add(flag, value, help, true).set_value = std::move(set);
}

void CommandLine::text(const std::string& flag, const std::string& value, const std::string& help, std::string& out) {
  text(flag, value, help, [&out](const std::string& v) { out = v; });
}

void CommandLine::integer(const std::string& flag, const std::string& value, const std::string& help, int64_t lo,
                          int64_t hi, std::function<void(int64_t)> set) {
  text(flag, value, help, [flag, lo, hi, set = std::move(set)](const std::string& text) {
    int64_t v = 0;
    if (!parse_whole(text, v)) throw UsageError("option '" + flag + "': '" + text + "' is not an integer");
    if (v < lo || v > hi) {
      throw UsageError("option '" + flag + "' = " + text + " is outside [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "]");
    }
    set(v);
  });
}

void CommandLine::u64(const std::string& flag, const std::string& value, const std::string& help,
                      std::function<void(uint64_t)> set) {
  text(flag, value, help, [flag, set = std::move(set)](const std::string& text) {
    uint64_t v = 0;
    if (!parse_whole(text, v)) throw UsageError("option '" + flag + "': '" + text + "' is not a non-negative integer");
    set(v);
  });
}

void CommandLine::flag(const std::string& flag, const std::string& help, std::function<void()> set) {
  add(flag, "", help, false).set_flag = std::move(set);
}

void CommandLine::flag_pair(const std::string& yes, const std::string& yes_help, const std::string& no,
                            const std::string& no_help, std::function<void(bool)> set) {
  flag(yes, yes_help, [set] { set(true); });
  flag(no, no_help, [set] { set(false); });
  excludes(yes, no);
}

void CommandLine::input_file(const std::string& flag, const std::string& help, std::string& out) {
  text(flag, "FILE", help, out);
  options_.back()->role = Role::input;
}

void CommandLine::output_file(const std::string& flag, const std::string& help, std::string& out) {
  text(flag, "FILE", help, out);
  options_.back()->role = Role::output;
}

void CommandLine::report_files(std::string& json, std::string& markdown, std::string& junit) {
  output_file("--json", "also write the report as JSON (atomically; docs/report-schema.md, docs/report.schema.json)",
              json);
  output_file("--markdown", "also write the report as Markdown: the worst bad elements of each tensor and the "
              "worst one's inputs (atomically)", markdown);
  output_file("--junit", "also write the report as JUnit XML for CI: one test case per judged tensor, a VIOLATION, "
              "INVALID or SUSPICIOUS tensor a failure (atomically)", junit);
}

void CommandLine::may_read_file(const std::string& flag) { find(flag).role = Role::maybe_input; }

void CommandLine::excludes(const std::string& a, const std::string& b) {
  find(a).cli->excludes(find(b).cli);
}

void CommandLine::positional(const std::string& name, const std::string& help, std::string& out, bool file,
                             const std::string& only_one) {
  positional_ = std::make_unique<Option>();
  Option& p = *positional_;
  p.flag = name;
  p.role = file ? Role::input : Role::none;
  p.only_one = only_one;
  p.set_value = [&out](const std::string& v) { out = v; };
  p.cli = app_->add_option(name, p.values, wrap(help, kHelpWidth - kOptionColumn))->type_name("")->expected(0, 1);
}

std::string CommandLine::help() const { return app_->help(); }

bool CommandLine::parse(const std::vector<std::string>& args) {
  const auto asked_help = [&] { return help_ || app_->get_option("--help")->count() > 0; };
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 reads from the back
  try {
    app_->parse(reversed);
  } catch (const CLI::ParseError& e) {
    if (asked_help()) {
    } else if (positional_ && positional_->cli->results().size() > 1) {
      const std::vector<std::string>& given = positional_->cli->results();
      throw UsageError(command_ + ": a second " + positional_->flag + " '" + given[1] + "' after '" + given[0] +
                       "': " + positional_->only_one);
    } else {
      throw usage_error(e, args, command_);
    }
  }
  if (asked_help()) {
    std::fputs(help().c_str(), stdout);
    return false;
  }
  for (const auto& o : options_) {  // "--json --markdown r.md": the value of --json was forgotten
    if (!o->takes_value || o->values.empty()) continue;
    const std::string& v = o->values[0];
    const bool is_option = v == "-h" || v == "--help" || std::any_of(options_.begin(), options_.end(), [&](const auto& p) {
                             return p->flag == v;
                           });
    if (is_option) throw UsageError("option '" + o->flag + "' needs a value ('" + v + "' is an option)");
  }
  const std::vector<std::string> extra = app_->remaining();
  if (!extra.empty()) throw UsageError(command_ + ": unknown option '" + extra.front() + "'");
  for (const auto& o : options_) {
    if (o->given() <= 1) continue;
    if (!o->takes_value) throw UsageError(command_ + ": '" + o->flag + "' is given twice: give it once");
    throw UsageError(command_ + ": option '" + o->flag + "' is given twice ('" + o->values[0] + "', then '" +
                     o->values[1] + "'): give it once");
  }
  for (const auto& o : options_) {
    if (o->given() == 0) continue;
    if (o->takes_value) o->set_value(o->values[0]);
    else o->set_flag();
  }
  if (positional_ && !positional_->values.empty()) positional_->set_value(positional_->values[0]);
  check_files();
  return true;
}

void CommandLine::check_files() const {
  std::vector<const Option*> reads, writes;
  for (const auto& o : options_) {
    if (o->values.empty() || o->values[0].empty()) continue;
    if (o->role == Role::output) writes.push_back(o.get());
    if (o->role == Role::input || o->role == Role::maybe_input) reads.push_back(o.get());
  }
  if (positional_ && positional_->role == Role::input && !positional_->values.empty()) reads.push_back(positional_.get());
  for (const Option* w : writes) check_writable(w->flag, w->values[0]);
  for (size_t i = 0; i < writes.size(); ++i) {
    for (size_t j = i + 1; j < writes.size(); ++j) {
      if (same_file(writes[i]->values[0], writes[j]->values[0])) {
        throw UsageError(command_ + ": '" + writes[i]->flag + " " + writes[i]->values[0] + "' and '" +
                         writes[j]->flag + " " + writes[j]->values[0] +
                         "' name the same file: each output needs its own");
      }
    }
  }
  for (const Option* w : writes) {
    for (const Option* r : reads) {
      if (!same_file(w->values[0], r->values[0])) continue;
      throw UsageError(command_ + ": '" + w->flag + " " + w->values[0] + "' would overwrite the file that '" +
                       r->flag + " " + r->values[0] + "' reads: write it elsewhere");
    }
  }
}

}  // namespace ssmv::cli
