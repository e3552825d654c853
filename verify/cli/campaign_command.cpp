#include "verify/cli/campaign_command.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "verify/cli/command_line.h"

namespace ssmv::cli {

int campaign_command(const std::vector<std::string>& args) {
  std::vector<std::string> argv_text{"ssmv-campaign"};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string beside = ec ? std::string() : (self.parent_path() / "ssmv-campaign").string();
  if (!beside.empty() && ::access(beside.c_str(), X_OK) == 0) ::execv(beside.c_str(), argv.data());
  ::execvp("ssmv-campaign", argv.data());
  throw UsageError("ssmv campaign: cannot run ssmv-campaign (" + std::string(std::strerror(errno)) +
                   "): looked beside this ssmv (" + (beside.empty() ? std::string("unknown folder") : beside) +
                   ") and on PATH; build it with `cmake --build --preset release --target ssmv-campaign`");
}

}  // namespace ssmv::cli
