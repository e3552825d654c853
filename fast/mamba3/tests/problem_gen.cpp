#include "fast/mamba3/tests/problem_gen.h"

#include <random>
#include <vector>

#include "spec/mamba3/random_problem.h"

namespace ssmv::mamba3_step::testing {
namespace {

int64_t pick(std::mt19937_64& rng, const std::vector<int64_t>& v) { return v[size_t(rng() % v.size())]; }

// Each value moved off the bf16 grid by a random fp32 mantissa tail (|change| < 2^-8 relative).
void widen(std::mt19937_64& rng, std::vector<float>& v) {
  std::uniform_real_distribution<float> tail(-0x1p-9f, 0x1p-9f);
  for (float& e : v) e = e * (1.0f + tail(rng));
}

}  // namespace

GeneratedProblem random_step_problem(uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + 1);
  const int64_t H = pick(rng, {1, 2, 3, 4});
  std::vector<int64_t> divisors;
  for (int64_t g = 1; g <= H; ++g) {
    if (H % g == 0) divisors.push_back(g);
  }
  const int64_t G = pick(rng, divisors);
  const int64_t P = pick(rng, {1, 3, 7, 16, 17, 31, 33, 48, 64, 65, 80});
  const int64_t N = pick(rng, {2, 4, 6, 16, 18, 30, 34, 64, 66, 96, 130});
  const int64_t R = 1 + int64_t(rng() % uint64_t(N / 2));
  const int64_t S = 1 + int64_t(rng() % 4);
  std::vector<int64_t> cu{0};
  for (int64_t s = 0; s < S; ++s) cu.push_back(cu.back() + 1 + int64_t(rng() % 12));
  const bool initial = rng() % 3 != 0;
  GeneratedProblem g;
  ssmv::mamba3::Problem& pr = g.problem;
  pr = ssmv::mamba3::random_problem(cu, H, P, N, G, R, seed, initial);
  if (rng() % 2) {
    pr.formats.input = Format::fp32;
    for (std::vector<float>* v : {&pr.x, &pr.B, &pr.C, &pr.z, &pr.trap}) widen(rng, *v);
  }
  if (rng() % 2) {
    pr.formats.angles = Format::fp32;
    widen(rng, pr.angles);
  }
  pr.formats.output = rng() % 2 ? Format::fp32 : Format::bf16;
  const bool D = rng() % 3 != 0, z = rng() % 2 != 0;
  if (!D) pr.D.clear();
  if (!z) pr.z.clear();
  if (rng() % 4 == 0) {  // some heads with adt > 0 (α > 1) and large angle rates
    for (float& a : pr.adt) a = -a;
    for (float& a : pr.angles) a *= 8;
  }
  g.description = "seed " + std::to_string(seed) + ": S=" + std::to_string(S) + " T=" + std::to_string(cu.back()) +
                  " H=" + std::to_string(H) + " G=" + std::to_string(G) + " P=" + std::to_string(P) +
                  " N=" + std::to_string(N) + " R=" + std::to_string(R) + " input " +
                  std::string(format_name(pr.formats.input)) + " angles " +
                  std::string(format_name(pr.formats.angles)) + " output " +
                  std::string(format_name(pr.formats.output)) + (D ? " D" : "") + (z ? " z" : "") +
                  (initial ? " initial" : "");
  return g;
}

}  // namespace ssmv::mamba3_step::testing
