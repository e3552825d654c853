// The bundled host twin that implements a contract, run on a prefill-style problem: what
// `ssmv bounds` measures beside the bound. A twin implements a contract when the contract is
// exactly its preset (the whole contract compared, not the name): `ssu` → the SSU twin,
// one launch per sequence (the state kept in fp32 across the sequence's tokens, stored once
// at its end); `chunk_scan.production` / `chunk_scan.fp32` → the chunk_scan twin of that kind
// at the contract's chunk size. The Triton presets and contract files have no twin.
#pragma once

#include <string>
#include <vector>

#include "spec/contract.h"
#include "spec/format.h"
#include "spec/problem.h"

namespace ssmv::verify {

struct TwinOutputs {
  bool ran = false;
  std::string kernel;               // "ssu", "chunk_scan" (when ran)
  std::string why_not;              // when not ran: why (no twin implements it, a size it does not support)
  std::vector<Bits> y;              // [T, H, P] output format bits
  std::vector<Bits> final_state;    // [S, H, P, N] state format bits, as stored
};

// `threads`: the twin's worker threads (0: every core); the bits are the same for any count.
TwinOutputs run_twin_for(const Problem& p, const Contract& c, int threads);

}  // namespace ssmv::verify
