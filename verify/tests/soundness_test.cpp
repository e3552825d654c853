// Soundness of the bounds against the host twins (label unit; cases in soundness_cases.cpp).
#include <gtest/gtest.h>

#include "verify/tests/soundness_cases.h"

namespace ssmv::verify {
namespace {

TEST(Soundness, SsuTwinWithinSequentialBound) { soundness::ssu(Device::twin); }
TEST(Soundness, ChunkScanProductionTwinWithinChunkedBound) {
  soundness::chunk_scan(chunk_scan::ContractKind::production, Device::twin);
}
TEST(Soundness, ChunkScanFp32TwinWithinChunkedBound) {
  soundness::chunk_scan(chunk_scan::ContractKind::fp32, Device::twin);
}
TEST(Soundness, HandoffWithinCombinedBound) { soundness::handoff(Device::twin); }

}  // namespace
}  // namespace ssmv::verify
