// Contract presets of FlashInfer's CUDA selective_state_update (flashinfer.mamba; the decode
// kernel of TensorRT-LLM, vLLM's and sglang's --mamba-backend flashinfer), read from its headers
// (include/flashinfer/mamba/, commit fb28d724 fetched; docs/contracts.md names the lines):
//
//   flashinfer.ssu     every algorithm (simple, vertical, horizontal; single-token and
//                      multi-token MTP launches), -use_fast_math: flushed subnormals, the
//                      measured __expf / __logf / __fdividef budgets, the state stored in the
//                      cache format at each launch's end (ssmv check --tokens-per-launch K)
//   flashinfer.ssu.sr  the same with fp16 states stored by Philox stochastic rounding
//                      (rand_seed given): the stored_state point rounds stochastically
//
// The budgets were measured on the H200 over every fp32 argument of each range
// (scripts/flashinfer/measure_budgets.py, docs/measurements/flashinfer-budgets.md).
#pragma once

#include <string_view>
#include <vector>

#include "spec/contract.h"

namespace ssmv::verify {

// The preset names above, in that order.
const std::vector<std::string_view>& flashinfer_preset_names();
bool is_flashinfer_preset(std::string_view name);
// std::invalid_argument for another name.
Contract flashinfer_preset(std::string_view name);

}  // namespace ssmv::verify
