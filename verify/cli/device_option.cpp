#include "verify/cli/device_option.h"

#include "verify/cli/command_line.h"

namespace ssmv::cli {

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
