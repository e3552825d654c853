// The sharp verdict's proof on the catalogue (`ssmv-planted-<name> sharp KERNEL FILE`; all
// bugs: scripts/planted_sharp.sh): this binary's twin of `kernel` on production-like problems,
// its outputs judged as an external kernel's dump would be — the rigorous verdict, the sharp
// verdict (verify/sharp/sharp_verdict.h, default options) and allclose against the fp32
// sequential reference at mamba_ssm's tolerances. The problems, the same in every binary:
//   ssu:        64 requests × 64 tokens (one launch: the state stored once, at the end),
//               H = 4, G = 2, P = 64, N = 128, bf16 inputs, fp32 and bf16 states;
//   chunk_scan: 1 × 2048 tokens, chunk 256, H = 4, G = 1, P = 64, N = 128, bf16 inputs,
//               fp32 state, the production and the fp32 contracts.
// summary.py --sharp reads the files of all binaries and writes docs/planted-bugs.md's table.
#pragma once

#include <string>

namespace ssmv::prop {

// Writes the JSON to `path` atomically. Returns 0, or 2 with a message on stderr for bad
// arguments.
int sharp_proof(const std::string& kernel, const std::string& path);

}  // namespace ssmv::prop
