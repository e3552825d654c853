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

verify::Device parse_device(const std::string& text, bool allow_auto) {
  verify::Device device;
  if (text == "twin") device = verify::Device::twin;
  else if (text == "gpu") device = verify::Device::gpu;
  else if (allow_auto && text == "auto") return verify::gpu_available() ? verify::Device::gpu : verify::Device::twin;
  else throw UsageError("option '--device' = '" + text + "': expected " + (allow_auto ? "auto, " : "") + "twin or gpu");
  if (device == verify::Device::gpu && !verify::gpu_available()) {
    throw UsageError("option '--device' = 'gpu': no CUDA device (or this build has no CUDA kernels)");
  }
  return device;
}

}  // namespace ssmv::cli
