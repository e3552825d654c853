// Property 5: varlen packing. Sequences packed into one launch give exactly the bits each
// gives alone: chunk_scan (host twin; both contracts, chunk sizes 64/128/256) packed vs
// each sequence sliced out (verify/judge/problem_slice.h), y rows and final state; SSU (host
// twin) with all requests in one launch vs each request alone on the same state pool, y
// rows and the slot it writes. No reference is needed, so cases are cheap.
//
// Case counts (base; ×100 in campaign mode): 3750 chunk_scan, 12500 SSU.
#include "fast/chunk_scan/chunk_scan.h"
#include "fast/ssu/ssu.h"
#include "properties/gen/problem_gen.h"
#include "properties/harness/case_failure.h"
#include "properties/harness/property.h"
#include "properties/relations/agreement.h"
#include "verify/judge/problem_slice.h"

namespace ssmv::prop {

SSMV_PROPERTY(VarlenPacking, ChunkScan, 3750, ()) {
  PrefillOptions o;
  o.max_sequences = 4;
  const ChunkCase c = draw_chunk_case(o);
  const GeneratedProblem& g = c.g;
  const auto kind = c.kind;
  const int64_t L = c.L;
  RC_CLASSIFY(g.problem.shape.num_sequences() > 1, "packed");
  run_case(prefill_case(g.problem, kind, L, verify::Device::twin), [&]() -> std::optional<CaseFailure> {
    const Problem& p = g.problem;
    const Shape& s = p.shape;
    chunk_scan::Config cfg;
    cfg.contract = kind;
    cfg.chunk_size = L;
    const chunk_scan::Result packed = chunk_scan::run(p, Device::twin, cfg);
    const int64_t S = s.num_sequences(), HP = s.H * s.P, per = s.H * s.P * s.N;
    for (int64_t q = 0; q < S; ++q) {
      std::vector<int64_t> begin(S, 0), end(S, 0);
      end[q] = s.seq_len(q);
      const Problem alone_p = verify::slice_tokens(p, begin, end);
      const chunk_scan::Result alone = chunk_scan::run(alone_p, Device::twin, cfg);
      const std::vector<float> y_packed(packed.y.begin() + s.cu_seqlens[q] * HP, packed.y.begin() + s.cu_seqlens[q + 1] * HP);
      const std::vector<float> st_packed(packed.final_state.begin() + q * per, packed.final_state.begin() + (q + 1) * per);
      const std::string which = " of sequence " + std::to_string(q);
      if (auto f = same_bits("y" + which, y_packed, alone.y)) return f;
      if (auto f = same_bits("final_state" + which, st_packed, alone.final_state)) return f;
    }
    return std::nullopt;
  });
}

SSMV_PROPERTY(VarlenPacking, Ssu, 12500, ()) {
  DecodeOptions o;
  o.max_requests = 5;
  const GeneratedDecode g = *decode_problem(o);
  label_case(g);
  run_case(decode_case(g.decode, verify::Device::twin), [&]() -> std::optional<CaseFailure> {
    const DecodeProblem& d = g.decode;
    const Shape& s = d.problem.shape;
    const ssu::Result packed = ssu::run(d, Device::twin);
    const int64_t R = s.num_sequences(), HP = s.H * s.P, per = s.H * s.P * s.N;
    for (int64_t r = 0; r < R; ++r) {
      std::vector<int64_t> begin(R, 0), end(R, 0);
      end[r] = s.seq_len(r);
      DecodeProblem one;
      one.problem = verify::slice_tokens(d.problem, begin, end);
      one.slots = d.slots;
      one.state_pool = d.state_pool;
      one.pad_slot_id = d.pad_slot_id;
      one.slot_in = {d.slot_in[r]};
      if (!d.slot_out.empty()) one.slot_out = {d.slot_out[r]};
      const ssu::Result alone = ssu::run(one, Device::twin);
      const std::vector<Bits> y_packed(packed.y.begin() + s.cu_seqlens[r] * HP, packed.y.begin() + s.cu_seqlens[r + 1] * HP);
      const std::string which = " of request " + std::to_string(r);
      if (auto f = same_bits("y" + which, y_packed, alone.y)) return f;
      if (!d.is_pad(r)) {
        const int64_t slot = d.out_slot(r);
        const std::vector<Bits> a(packed.state_pool.begin() + slot * per, packed.state_pool.begin() + (slot + 1) * per);
        const std::vector<Bits> b(alone.state_pool.begin() + slot * per, alone.state_pool.begin() + (slot + 1) * per);
        if (auto f = same_bits("written slot" + which, a, b)) return f;
      }
    }
    return std::nullopt;
  });
}

}  // namespace ssmv::prop
