#include "properties/planted/planted_ssu.h"

#include <algorithm>

#include "fast/ssu/contract.h"
#include "reference/reference.h"
#include "verify/bound/sequential_bound.h"

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
    ssu::Result r = ssu::run_twin(d);
    r.y = ssu::run_twin(broken).y;
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
  return ssu::run_twin(broken);
}

verify::KernelCheck check_planted_ssu(const DecodeProblem& d, PlantedBug bug) {
  // The judging of verify::check_ssu (kernel_check.cpp), with run_planted as the kernel.
  const Contract contract = ssu::contract();
  const ref::ExactDecodeResult exact = ref::compute_decode(d);
  const ssu::Result got = run_planted(d, bug);
  const Shape& s = d.problem.shape;
  const int64_t R = s.num_sequences(), per = s.H * s.P * s.N;

  Problem view = d.problem;  // the bound's view: request r starts from the state it reads
  view.initial_state.assign(R * per, 0.0f);
  for (int64_t r = 0; r < R; ++r) {
    if (d.is_pad(r)) continue;
    std::copy_n(d.state_pool.begin() + d.slot_in[r] * per, per, view.initial_state.begin() + r * per);
  }
  bound::SequentialInput in;
  in.problem = &view;
  in.contract = &contract;
  in.delta = &exact.result.delta;
  in.decay = &exact.result.decay;
  const bound::SequentialBounds b = bound::sequential_bounds(in);
  std::vector<double> pool_bound(d.slots * per, 0.0);  // slots nobody writes: unchanged
  for (int64_t r = 0; r < R; ++r) {
    if (d.is_pad(r)) continue;
    std::copy_n(b.stored_state.begin() + r * per, per, pool_bound.begin() + d.out_slot(r) * per);
  }
  verify::KernelCheck kc{std::string(planted_bug_name(bug)), contract.name, "twin", {}};
  kc.tensors.push_back(verify::judge_tensor("y", d.problem.formats.output, got.y, exact.result.y, b.y, d.problem,
                                            verify::y_coords, {"sequence", "token", "head", "dim"}));
  kc.tensors.push_back(verify::judge_tensor("state_pool", d.problem.formats.state, got.state_pool, exact.state_pool,
                                            pool_bound, d.problem, verify::state_coords,
                                            {"slot", "head", "dim", "state"}));
  return kc;
}

}  // namespace ssmv::prop
