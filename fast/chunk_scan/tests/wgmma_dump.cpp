// Research tool for the wgmma accumulation (docs/design.md §4.1), as mma_dump is for
// mma.sync: generates the operand regimes of wgmma_regimes.h (fixed seeds), runs them on
// the device through wgmma.mma_async m64nNk16 and writes the results, so that the
// comparison with the tensor-core model, and any further analysis, runs offline.
//
//   wgmma_dump list       prints the regimes' names, one a line
//   wgmma_dump gen DIR    writes DIR/<regime>.{a,b,c} (float32, little endian) for analysis
//   wgmma_dump run DIR    generates the same operands, runs them on the GPU, writes DIR/<regime>.d
//   wgmma_dump check DIR  compares DIR/<regime>.d (from `run`) with mma_chain, the host model,
//                         bit for bit, and with the k8-halves hypothesis; exit 1 if any output
//                         differs from the model (counts per regime in bench/NOTES.md)
// gen, run and check take the regimes named after DIR, or every regime.
//
// Layouts as in wgmma_probe.h: a [tiles, 64, K] (m×k), b [tiles, N, K] (n×k), c and d
// [tiles, 64, N]; N, K and the tile count per regime in wgmma_regimes.cpp.
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "fast/chunk_scan/tests/tensor_core_operands.h"
#include "fast/chunk_scan/tests/wgmma_probe.h"
#include "fast/chunk_scan/tests/wgmma_regimes.h"
#include "spec/format.h"

int main(int argc, char** argv) {
  namespace t = ssmv::chunk_scan::testing;
  const std::string mode = argc >= 2 ? argv[1] : "";
  if (mode == "list" && argc == 2) {
    for (const auto& r : t::wgmma_regimes()) std::printf("%s\n", r.name.c_str());
    return 0;
  }
  if ((mode != "gen" && mode != "run" && mode != "check") || argc < 3) {
    std::fprintf(stderr, "usage: wgmma_dump list | wgmma_dump gen|run|check DIR [REGIME ...]\n");
    return 2;
  }
  const std::string dir = argv[2];
  const std::set<std::string> only(argv + 3, argv + argc);
  int64_t total = 0, total_differ = 0;
  for (const auto& r : t::wgmma_regimes()) {
    if (!only.empty() && !only.count(r.name)) continue;
    const t::Operands o = r.make(r.tiles);
    const std::string base = dir + "/" + r.name;
    const bool bf16 = r.format == ssmv::Format::bf16;
    if (mode == "check") {
      std::vector<float> d(o.c.size());
      if (!t::read_floats(base + ".d", d)) {
        std::fprintf(stderr, "wgmma_dump: %s.d is missing or not %zu floats\n", base.c_str(), d.size());
        return 2;
      }
      const t::RegimeCount n = t::compare_with_model(r, o, d, r.tiles);
      total += n.outputs;
      total_differ += n.differ;
      std::printf("%-20s %s m64n%dk16 x%d, A from %s, scale-d %d: %lld outputs (%lld subnormal, %lld zero); "
                  "differ from the model %lld, from k8 halves %lld\n",
                  r.name.c_str(), bf16 ? "bf16" : "fp16", r.shape.n, r.shape.k / 16,
                  r.shape.a_in_registers ? "registers" : "shared memory", int(r.shape.scale_d),
                  (long long)n.outputs, (long long)n.subnormal, (long long)n.zeros, (long long)n.differ,
                  (long long)n.differ_k8);
      for (const auto& line : n.first) std::printf("    %s\n", line.c_str());
      continue;
    }
    const bool ok = mode == "run" ? t::write_floats(base + ".d", t::run_wgmma_tiles(bf16, r.shape, o.a, o.b, o.c, r.tiles))
                                  : t::write_floats(base + ".a", o.a) && t::write_floats(base + ".b", o.b) &&
                                        t::write_floats(base + ".c", o.c);
    if (!ok) {
      std::fprintf(stderr, "wgmma_dump: cannot write %s.*\n", base.c_str());
      return 1;
    }
    std::printf("%s: %d tiles\n", r.name.c_str(), r.tiles);
  }
  if (mode == "check") std::printf("all regimes: %lld outputs, %lld differ from the model\n", (long long)total,
                                   (long long)total_differ);
  return total_differ == 0 ? 0 : 1;
}
