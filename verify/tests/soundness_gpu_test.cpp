// Soundness of the bounds against the CUDA kernels (label gpu; skipped without a device):
// the cases of soundness_cases.cpp, run on the GPU.
#include <gtest/gtest.h>

#include "verify/tests/soundness_cases.h"

namespace ssmv::verify {
namespace {

class SoundnessGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu_available()) GTEST_SKIP() << "no CUDA device (or no CUDA kernels in this build)";
  }
};

TEST_F(SoundnessGpu, SsuWithinSequentialBound) { soundness::ssu(Device::gpu); }
TEST_F(SoundnessGpu, ChunkScanProductionWithinChunkedBound) {
  soundness::chunk_scan(chunk_scan::ContractKind::production, Device::gpu);
}
TEST_F(SoundnessGpu, ChunkScanFp32WithinChunkedBound) {
  soundness::chunk_scan(chunk_scan::ContractKind::fp32, Device::gpu);
}
TEST_F(SoundnessGpu, HandoffWithinCombinedBound) { soundness::handoff(Device::gpu); }

}  // namespace
}  // namespace ssmv::verify
