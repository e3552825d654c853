#include "properties/planted/planted_ssu.h"

#include "fast/ssu/contract.h"
#include "properties/gen/problem_gen.h"
#include "properties/harness/case_failure.h"
#include "reference/reference.h"
#include "verify/run/kernel_check.h"

namespace ssmv::prop {

std::string_view planted_bug_name(PlantedBug bug) {
  return bug == PlantedBug::drop_d ? "ssu.drop_d" : "ssu.wrong_group";
}

bool parse_planted_bug(std::string_view name, PlantedBug& out) {
  for (PlantedBug b : {PlantedBug::drop_d, PlantedBug::wrong_group}) {
    if (name == planted_bug_name(b)) {
      out = b;
      return true;
    }
  }
  return false;
}

ssu::Result run_planted(const DecodeProblem& d, PlantedBug bug) {
  DecodeProblem broken = d;
  Problem& p = broken.problem;
  if (bug == PlantedBug::drop_d) {
    // y without D·x; the state does not involve D, so the pool is the correct kernel's.
    p.D.clear();
    ssu::Result r = ssu::run(d, Device::twin);
    r.y = ssu::run(broken, Device::twin).y;
    return r;
  }
  // wrong_group: B'[t, g] = B[t, (g + 1) mod G], the same for C.
  const Shape& s = p.shape;
  for (int64_t t = 0; t < s.num_tokens(); ++t) {
    for (int64_t g = 0; g < s.G; ++g) {
      for (int64_t n = 0; n < s.N; ++n) {
        p.B[p.bc_index(t, g, n)] = d.problem.B[d.problem.bc_index(t, (g + 1) % s.G, n)];
        p.C[p.bc_index(t, g, n)] = d.problem.C[d.problem.bc_index(t, (g + 1) % s.G, n)];
      }
    }
  }
  return ssu::run(broken, Device::twin);
}

verify::KernelCheck check_planted_ssu(const DecodeProblem& d, PlantedBug bug) {
  // Judged exactly as verify::check_ssu judges the real kernel, with run_planted as the kernel.
  const ref::ExactDecodeResult exact = ref::compute_decode(d);
  return verify::judge_ssu(d, exact, run_planted(d, bug), std::string(planted_bug_name(bug)), "twin");
}

void planted_ssu_within_contract(PlantedBug bug) {
  const GeneratedDecode g = *decode_problem(DecodeOptions{});
  label_case(g);
  verify::Counterexample c = decode_case(g.decode, verify::Device::twin);
  c.kernel = "ssu";
  c.planted_bug = std::string(planted_bug_name(bug));
  expect_within_contract(c, [&] { return check_planted_ssu(g.decode, bug); });
}

}  // namespace ssmv::prop
