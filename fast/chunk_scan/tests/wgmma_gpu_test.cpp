// wgmma.mma_async m64nNk16 f32.{bf16,f16} against the tensor-core model of mma_model.h, bit
// for bit (label gpu; skipped without a CUDA device): every regime of wgmma_regimes.h on its
// fixed seed, a quarter of the tiles wgmma_dump runs. The full measurement (wgmma_dump,
// 2026-12-02) is in bench/NOTES.md and docs/design.md §4.1.
#include <gtest/gtest.h>

#include <cstdio>

#include "fast/chunk_scan/tests/wgmma_probe.h"
#include "fast/chunk_scan/tests/wgmma_regimes.h"
#include "fast/common/cuda_check.h"

namespace ssmv::chunk_scan::testing {
namespace {

class WgmmaModel : public ::testing::TestWithParam<WgmmaRegime> {};

TEST_P(WgmmaModel, MatchesTensorCoreModel) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  const WgmmaRegime& r = GetParam();
  const int tiles = (r.tiles + 3) / 4;
  const Operands o = r.make(tiles);
  const auto d = run_wgmma_tiles(r.format == Format::bf16, r.shape, o.a, o.b, o.c, tiles);
  const RegimeCount n = compare_with_model(r, o, d, tiles);
  std::printf("  %s: %lld outputs (%lld subnormal, %lld zero), differ from the model %lld, from k8 halves %lld\n",
              r.name.c_str(), (long long)n.outputs, (long long)n.subnormal, (long long)n.zeros,
              (long long)n.differ, (long long)n.differ_k8);
  for (const auto& line : n.first) ADD_FAILURE() << r.name << ": " << line;
  EXPECT_EQ(n.differ, 0);
}

INSTANTIATE_TEST_SUITE_P(Regimes, WgmmaModel, ::testing::ValuesIn(wgmma_regimes()),
                         [](const ::testing::TestParamInfo<WgmmaRegime>& info) { return info.param.name; });

}  // namespace
}  // namespace ssmv::chunk_scan::testing
