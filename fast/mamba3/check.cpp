#include "fast/mamba3/check.h"

#include <string>

#include "spec/problem.h"  // ProblemError

namespace ssmv::mamba3_step {
namespace {

[[noreturn]] void fail(const std::string& what) { throw ProblemError("mamba3_step: " + what); }

void check_format(const char* field, Format f) {
  if (f != Format::bf16 && f != Format::fp32) {
    fail(std::string(field) + " format " + std::string(format_name(f)) + ": the kernel reads bf16 or fp32");
  }
}

}  // namespace

void check_params(const Params& p) {
  if (p.batch < 0) fail("batch = " + std::to_string(p.batch) + " is negative");
  if (p.H <= 0 || p.P <= 0 || p.N <= 0 || p.G <= 0) {
    fail("H, P, N, G = " + std::to_string(p.H) + ", " + std::to_string(p.P) + ", " + std::to_string(p.N) + ", " +
         std::to_string(p.G) + ": all must be positive");
  }
  if (p.H % p.G != 0) fail("G = " + std::to_string(p.G) + " does not divide H = " + std::to_string(p.H));
  if (p.N % 2 != 0 || p.N > kMaxN) {
    fail("N = " + std::to_string(p.N) + ": must be even and at most " + std::to_string(kMaxN));
  }
  if (p.R < 1 || 2 * p.R > p.N) {
    fail("R = " + std::to_string(p.R) + " outside [1, N/2 = " + std::to_string(p.N / 2) + "]");
  }
  if (p.batch * p.H >= (int64_t(1) << 31)) fail("batch·H = " + std::to_string(p.batch * p.H) + " reaches 2^31");
  check_format("input", p.input);
  check_format("angles", p.angles_format);
  check_format("output", p.output);
  if (p.batch == 0) return;
  const std::pair<const char*, const void*> required[] = {
      {"token", p.token},   {"x", p.x},           {"B", p.B},           {"C", p.C},         {"dt", p.dt},
      {"adt", p.adt},       {"trap", p.trap},     {"angles", p.angles}, {"B_bias", p.B_bias},
      {"C_bias", p.C_bias}, {"y", p.y},           {"angle_state", p.angle_state},
      {"S", p.S},           {"B_prev", p.B_prev}, {"x_prev", p.x_prev},
  };
  for (const auto& [name, ptr] : required) {
    if (ptr == nullptr) fail(std::string(name) + " is null");
  }
}

}  // namespace ssmv::mamba3_step
