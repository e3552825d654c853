#include "verify/cli/reference_command.h"

#include <mpfr.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "reference/reference.h"
#include "verify/cli/command_line.h"
#include "verify/cli/default_problem.h"

namespace ssmv::cli {
namespace {

// Largest certified_error / magnitude over a tensor (0 where both are 0).
double worst_relative_error(const ref::ExactValues& v) {
  double worst = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v.magnitude[i] > 0) worst = std::max(worst, v.certified_error[i] / v.magnitude[i]);
  }
  return worst;
}

void print_value(const char* label, const ref::ExactValues& v, size_t i, Format f) {
  char exact[96];
  mpfr_snprintf(exact, sizeof exact, "%.30Rg", v.value[i].backend().data());
  const Bits b = v.rounded(f, i);
  std::printf("  %-22s exact %-36s nearest double %-24a %s %s (%.9g)\n", label, exact,
              v.nearest[i], std::string(format_name(f)).c_str(), hex_bits(f, b).c_str(),
              decode(f, b));
}

}  // namespace

int reference_command(const std::vector<std::string>& args) {
  uint64_t seed = 2026;
  ref::Options options;
  CommandLine line("ssmv reference",
                   "Computes the certified MPFR reference of the built-in default problem (two sequences of 37 and 64 "
                   "tokens, H=4, P=16, N=32, G=2, bf16 inputs, fp32 state, softplus, dt_bias, D, z gate, initial "
                   "states) and prints a few outputs, the final-state summary and the certification result.",
                   "exit codes: 0 certified, 1 certification failed, 2 bad usage.");
  line.u64("--seed", "N", "seed of the default problem's data (default 2026)", [&seed](uint64_t v) { seed = v; });
  line.integer("--precision", "BITS", "working precision of the MPFR run (default " +
               std::to_string(ref::kDefaultPrecisionBits) + "; a value its error bound cannot decide is recomputed "
               "with 64 more bits); too low a precision fails certification", 16, 100000,
               [&options](int64_t v) { options.precision_bits = int(v); });
  line.integer("--threads", "N", "worker threads over (sequence, head) pairs (default 0: every core)", 0, 1024,
               [&options](int64_t v) { options.threads = int(v); });
  if (!line.parse(args)) return 0;

  const Problem problem = default_problem(seed);
  const Shape& s = problem.shape;
  std::printf("ssmv reference: default problem (seed %llu): %lld sequences, %lld tokens, H=%lld P=%lld "
              "N=%lld G=%lld, input %s, state %s, output %s, softplus, dt_bias, D, z, initial states\n",
              (unsigned long long)seed, (long long)s.num_sequences(), (long long)s.num_tokens(),
              (long long)s.H, (long long)s.P, (long long)s.N, (long long)s.G,
              std::string(format_name(problem.formats.input)).c_str(),
              std::string(format_name(problem.formats.state)).c_str(),
              std::string(format_name(problem.formats.output)).c_str());

  const auto t0 = std::chrono::steady_clock::now();
  ref::ExactResult r;
  try {
    r = ref::compute(problem, options);
  } catch (const ref::CertificationError& e) {
    std::printf("certification: FAILED\n  %s\n", e.what());
    return 1;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::printf("outputs y[t, h, p] (of %zu):\n", r.y.size());
  const int64_t H = s.H, P = s.P;
  for (int64_t t : {int64_t{0}, int64_t{36}, int64_t{37}, s.num_tokens() - 1}) {
    for (int64_t h : {int64_t{0}, H - 1}) {
      char label[64];
      std::snprintf(label, sizeof label, "y[%lld,%lld,0]", (long long)t, (long long)h);
      print_value(label, r.y, size_t(problem.x_index(t, h, 0)), problem.formats.output);
    }
  }
  double max_abs = 0, sum_sq = 0;
  for (double v : r.final_state.nearest) {
    max_abs = std::max(max_abs, std::fabs(v));
    sum_sq += v * v;
  }
  std::printf("final states [S, H, P, N] = [%lld, %lld, %lld, %lld]: %zu values, max |S| %.6g, rms %.6g\n",
              (long long)s.num_sequences(), (long long)H, (long long)P, (long long)s.N,
              r.final_state.size(), max_abs, std::sqrt(sum_sq / double(r.final_state.size())));
  print_value("S[0,0,0,0]", r.final_state, 0, problem.formats.state);
  print_value("S[last]", r.final_state, r.final_state.size() - 1, problem.formats.state);
  // certified_error is a rigorous a-priori bound, not an agreement between runs
  // (docs/reference-tiers.md, "[6] The MPFR tier's certificate").
  std::printf("certification: OK — every value's certified error bound (working precision %d bits, "
              "retries at %d) is within 2^%.1f of its magnitude (required 2^-%d)\n",
              r.precision_bits, r.check_precision_bits,
              std::log2(std::max(worst_relative_error(r.y), worst_relative_error(r.final_state)) + 1e-300),
              options.certified_bits);
  const int threads = options.threads > 0 ? options.threads : ref::default_threads();
  std::printf("time: %.3f s (%d thread%s)\n", seconds, threads, threads == 1 ? "" : "s");
  return 0;
}

}  // namespace ssmv::cli
