// The property suites on the GPU (CTest label gpu; every test skips without a CUDA device):
//   * SSU, chunk_scan and the hand-off stay within their contracts when run on the GPU
//     (properties 1–3 with Device::gpu);
//   * property 7: the GPU gives the same bits twice, and GPU = host twin within the
//     contract's gpu_twin_max_ulps (0 for both bundled kernels: bit-identical).
//
// Case counts (base; ×100 in campaign mode): contracts 2000 SSU, 600 chunk_scan, 200 hand-off;
// GPU = twin 3000 SSU, 1000 chunk_scan; determinism 1000 each.
#include <cstdlib>

#include "fast/chunk_scan/chunk_scan.h"
#include "fast/ssu/contract.h"
#include "fast/ssu/ssu.h"
#include "properties/gen/problem_gen.h"
#include "properties/harness/case_failure.h"
#include "properties/harness/property.h"
#include "properties/relations/agreement.h"

namespace ssmv::prop {
namespace {

// Every element within `max_ulps` of the twin's (0: the same encoding).
std::optional<CaseFailure> within_ulps(const std::string& what, Format f, const std::vector<Bits>& gpu,
                                       const std::vector<Bits>& twin, double max_ulps) {
  if (max_ulps == 0) return same_bits(what, gpu, twin);
  for (size_t i = 0; i < gpu.size(); ++i) {
    const int64_t d = ulp_distance(f, gpu[i], twin[i]);
    if (double(d) > max_ulps) {
      return CaseFailure{"VIOLATION", what + "[" + std::to_string(i) + "]: gpu " + hex_bits(f, gpu[i]) + " twin " +
                                          hex_bits(f, twin[i]) + ", " + std::to_string(d) + " ULPs",
                         what + ": GPU and twin differ by more than the contract's gpu_twin_max_ulps"};
    }
  }
  return std::nullopt;
}

std::vector<Bits> bits_of(Format f, const std::vector<float>& v) {
  std::vector<Bits> b(v.size());
  for (size_t i = 0; i < v.size(); ++i) b[i] = round_nearest_even(f, v[i]);
  return b;
}

void gpu_ssu_contract() {
  const GeneratedDecode g = *decode_problem(DecodeOptions{});
  label_case(g);
  expect_within_contract(decode_case(g.decode, verify::Device::gpu),
                         [&] { return verify::check_ssu(g.decode, verify::Device::gpu); });
}

void gpu_chunk_scan_contract() {
  const ChunkCase c = draw_chunk_case(PrefillOptions{});
  expect_within_contract(prefill_case(c.g.problem, c.kind, c.L, verify::Device::gpu), [&] {
    return verify::check_chunk_scan(c.g.problem, c.kind, c.L, verify::Device::gpu, true);
  });
}

void gpu_handoff_contract() {
  const ChunkCase c = draw_chunk_case(PrefillOptions{});
  const int64_t k = *rc::gen::inRange<int64_t>(0, shortest_sequence(c.g.problem.shape) + 1);
  expect_within_contract(handoff_case(c.g.problem, k, c.kind, c.L, verify::Device::gpu), [&] {
    return verify::check_handoff(c.g.problem, k, c.kind, c.L, verify::Device::gpu);
  });
}

void gpu_equals_twin_ssu() {
  const GeneratedDecode g = *decode_problem(DecodeOptions{});
  label_case(g);
  run_case(decode_case(g.decode, verify::Device::gpu), [&]() -> std::optional<CaseFailure> {
    const double ulps = ssu::contract().gpu_twin_max_ulps;
    const ssu::Result gpu = ssu::run(g.decode, Device::gpu), twin = ssu::run(g.decode, Device::twin);
    const Formats& f = g.decode.problem.formats;
    if (auto e = within_ulps("y (gpu vs twin)", f.output, gpu.y, twin.y, ulps)) return e;
    return within_ulps("state_pool (gpu vs twin)", f.state, gpu.state_pool, twin.state_pool, ulps);
  });
}

void gpu_equals_twin_chunk_scan() {
  const ChunkCase c = draw_chunk_case(PrefillOptions{});
  run_case(prefill_case(c.g.problem, c.kind, c.L, verify::Device::gpu), [&]() -> std::optional<CaseFailure> {
    const double ulps = chunk_scan::contract(c.kind, c.L).gpu_twin_max_ulps;
    chunk_scan::Config cfg;
    cfg.contract = c.kind;
    cfg.chunk_size = c.L;
    cfg.boundary_states = true;
    const chunk_scan::Result gpu = chunk_scan::run(c.g.problem, Device::gpu, cfg),
                            twin = chunk_scan::run(c.g.problem, Device::twin, cfg);
    const Formats& f = c.g.problem.formats;
    if (auto e = within_ulps("y (gpu vs twin)", f.output, bits_of(f.output, gpu.y), bits_of(f.output, twin.y), ulps)) return e;
    if (auto e = within_ulps("final_state (gpu vs twin)", f.state, bits_of(f.state, gpu.final_state),
                             bits_of(f.state, twin.final_state), ulps)) {
      return e;
    }
    return within_ulps("boundary_states (gpu vs twin)", f.state, bits_of(f.state, gpu.boundary_states),
                       bits_of(f.state, twin.boundary_states), ulps);
  });
}

void gpu_deterministic_ssu() {
  const GeneratedDecode g = *decode_problem(DecodeOptions{});
  label_case(g);
  run_case(decode_case(g.decode, verify::Device::gpu), [&]() -> std::optional<CaseFailure> {
    const ssu::Result a = ssu::run(g.decode, Device::gpu), b = ssu::run(g.decode, Device::gpu);
    if (auto e = same_bits("y (gpu run 1 vs 2)", a.y, b.y)) return e;
    return same_bits("state_pool (gpu run 1 vs 2)", a.state_pool, b.state_pool);
  });
}

void gpu_deterministic_chunk_scan() {
  const ChunkCase c = draw_chunk_case(PrefillOptions{});
  run_case(prefill_case(c.g.problem, c.kind, c.L, verify::Device::gpu), [&]() -> std::optional<CaseFailure> {
    chunk_scan::Config cfg;
    cfg.contract = c.kind;
    cfg.chunk_size = c.L;
    cfg.boundary_states = true;
    const chunk_scan::Result a = chunk_scan::run(c.g.problem, Device::gpu, cfg),
                            b = chunk_scan::run(c.g.problem, Device::gpu, cfg);
    if (auto e = same_bits("y (gpu run 1 vs 2)", a.y, b.y)) return e;
    if (auto e = same_bits("final_state (gpu run 1 vs 2)", a.final_state, b.final_state)) return e;
    return same_bits("boundary_states (gpu run 1 vs 2)", a.boundary_states, b.boundary_states);
  });
}

}  // namespace

#define SSMV_GPU_PROPERTY(Name, BaseCases, Fn)                                       \
  SSMV_REGISTER_PROPERTY(GpuProperty, Name, BaseCases, true, Fn);                   \
  TEST(GpuProperty, Name) {                                                          \
    if (!gpu_available()) GTEST_SKIP() << "no CUDA device (or a build without CUDA)"; \
    run_property("GpuProperty", #Name, BaseCases, rc::detail::toProperty(&Fn));       \
  }

SSMV_GPU_PROPERTY(SsuContract, 2000, gpu_ssu_contract)
SSMV_GPU_PROPERTY(ChunkScanContract, 600, gpu_chunk_scan_contract)
SSMV_GPU_PROPERTY(HandoffContract, 200, gpu_handoff_contract)
SSMV_GPU_PROPERTY(SsuEqualsTwin, 3000, gpu_equals_twin_ssu)
SSMV_GPU_PROPERTY(ChunkScanEqualsTwin, 1000, gpu_equals_twin_chunk_scan)
SSMV_GPU_PROPERTY(SsuDeterministic, 1000, gpu_deterministic_ssu)
SSMV_GPU_PROPERTY(ChunkScanDeterministic, 1000, gpu_deterministic_chunk_scan)

}  // namespace ssmv::prop
