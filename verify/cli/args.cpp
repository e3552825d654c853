#include "verify/cli/args.h"

#include <charconv>

namespace ssmv::cli {

std::string ArgReader::value(const std::string& flag) {
  if (!more()) throw UsageError("option '" + flag + "' needs a value");
  return next();
}

int64_t ArgReader::value_int(const std::string& flag, int64_t lo, int64_t hi) {
  const std::string text = value(flag);
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw UsageError("option '" + flag + "': '" + text + "' is not an integer");
  }
  if (v < lo || v > hi) {
    throw UsageError("option '" + flag + "' = " + text + " is outside [" + std::to_string(lo) +
                     ", " + std::to_string(hi) + "]");
  }
  return v;
}

uint64_t ArgReader::value_u64(const std::string& flag) {
  const std::string text = value(flag);
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw UsageError("option '" + flag + "': '" + text + "' is not a non-negative integer");
  }
  return v;
}

}  // namespace ssmv::cli
