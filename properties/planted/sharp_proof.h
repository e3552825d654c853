// The sharp verdict's proof on the catalogue (`ssmv-planted-<name> sharp KERNEL FILE`; all
// bugs: scripts/planted_sharp.sh): this binary's twin of `kernel` on production-like problems,
// its outputs judged as an external kernel's dump would be — the rigorous verdict, the sharp
// verdict (verify/sharp/sharp_verdict.h, default options) and allclose against the fp32
// sequential reference at mamba_ssm's tolerances. The problems, the same in every binary:
//   ssu:        64 requests × 64 tokens (one launch: the state stored once, at the end),
//               H = 4, G = 2, P = 64, N = 128, bf16 inputs, fp32 state (D per head) and bf16
//               state (D per head and dim);
//   chunk_scan: two sequences of 2048 and 304 tokens, chunk 256, H = 4, G = 2, N = 128, D per
//               head and dim, bf16 inputs, fp32 state: P = 64 under the production and the
//               fp32 contracts, P = 128 under the production contract.
// Every problem has z, dt_bias, softplus, initial states and a dt_limit that clamps.
// summary.py --sharp reads the files of all binaries and writes docs/planted-bugs.md's table.
#pragma once

#include <string>

namespace ssmv::prop {

// Writes the JSON to `path` atomically. Returns 0, or 2 with a message on stderr for bad
// arguments.
int sharp_proof(const std::string& kernel, const std::string& path);

}  // namespace ssmv::prop
