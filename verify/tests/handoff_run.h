// A prefill/decode hand-off made by the bundled host twins the way a serving engine drives
// foreign kernels: chunk_scan (production contract) over each sequence's first prefill[s]
// tokens (varlen), its final state stored in the state format, then SSU launched once per
// token from there. The "external" dumps of the hand-off and compare tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "fast/chunk_scan/chunk_scan.h"
#include "fast/ssu/ssu.h"
#include "spec/problem.h"
#include "verify/judge/problem_slice.h"

namespace ssmv::verify::testing {

struct HandoffRun {
  std::vector<float> y;             // [T, H, P]
  std::vector<float> final_states;  // [S, H, P, N]
};

// chunk_scan (production contract, chunk L) on the prefixes, then SSU one token per launch.
inline HandoffRun run_handoff(const Problem& p, const std::vector<int64_t>& prefill, int64_t L) {
  const Shape& s = p.shape;
  const int64_t S = s.num_sequences(), HP = s.H * s.P, per = HP * s.N;
  HandoffRun out;
  out.y.assign(s.num_tokens() * HP, 0.0f);
  out.final_states.assign(S * per, 0.0f);
  std::vector<int64_t> kept;
  const Problem pre = slice_tokens(p, std::vector<int64_t>(S, 0), prefill, &kept);
  if (!kept.empty()) {
    chunk_scan::Config cfg;
    cfg.chunk_size = L;
    const chunk_scan::Result r = chunk_scan::run(pre, Device::twin, cfg);
    int64_t t_pre = 0;
    for (size_t k = 0; k < kept.size(); ++k) {
      const int64_t q = kept[k];
      for (int64_t j = 0; j < prefill[q]; ++j, ++t_pre) {
        std::copy_n(r.y.begin() + t_pre * HP, HP, out.y.begin() + (s.cu_seqlens[q] + j) * HP);
      }
      // The engine stores the handed-over state in the state format.
      for (int64_t i = 0; i < per; ++i) {
        out.final_states[q * per + i] =
            float(decode(p.formats.state, round_nearest_even(p.formats.state, r.final_state[k * per + i])));
      }
    }
  }
  for (int64_t q = 0; q < S; ++q) {
    DecodeProblem d;
    d.slots = 1;
    d.slot_in = {0};
    d.state_pool.assign(out.final_states.begin() + q * per, out.final_states.begin() + (q + 1) * per);
    if (prefill[q] == 0 && p.has_initial_state()) {
      d.state_pool.assign(p.initial_state.begin() + q * per, p.initial_state.begin() + (q + 1) * per);
    }
    for (int64_t t = prefill[q]; t < s.seq_len(q); ++t) {
      std::vector<int64_t> b(S, 0), e(S, 0);
      b[q] = t;
      e[q] = t + 1;
      d.problem = slice_tokens(p, b, e);
      d.problem.initial_state.clear();
      const ssu::Result r = ssu::run(d, Device::twin);
      for (int64_t i = 0; i < HP; ++i) out.y[(s.cu_seqlens[q] + t) * HP + i] = float(decode(p.formats.output, r.y[i]));
      for (int64_t i = 0; i < per; ++i) d.state_pool[i] = float(decode(p.formats.state, r.state_pool[i]));
    }
    std::copy(d.state_pool.begin(), d.state_pool.end(), out.final_states.begin() + q * per);
  }
  return out;
}

}  // namespace ssmv::verify::testing
