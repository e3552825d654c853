#include "verify/run/kernel_check.h"

#include <algorithm>
#include <stdexcept>

#include "fast/chunk_scan/chunk_scan.h"
#include "fast/ssu/contract.h"
#include "fast/ssu/ssu.h"
#include "reference/reference.h"
#include "verify/bound/attribution.h"
#include "verify/bound/chunked_bound.h"
#include "verify/bound/sequential_bound.h"
#include "verify/judge/handoff.h"
#include "verify/judge/worst_sources.h"
#include "verify/judge/problem_slice.h"

namespace ssmv::verify {
namespace {

// The state each request of `d` starts from, [R, H, P, N] (zero for pad requests), for the
// bound's view of a decode problem.
std::vector<float> request_states(const DecodeProblem& d) {
  const Shape& s = d.problem.shape;
  const int64_t R = s.num_sequences(), per = s.H * s.P * s.N;
  std::vector<float> out(R * per, 0.0f);
  for (int64_t r = 0; r < R; ++r) {
    if (d.is_pad(r)) continue;
    std::copy(d.state_pool.begin() + d.slot_in[r] * per, d.state_pool.begin() + (d.slot_in[r] + 1) * per,
              out.begin() + r * per);
  }
  return out;
}

chunk_scan::Config chunk_config(chunk_scan::ContractKind kind, int64_t L, bool boundary) {
  chunk_scan::Config cfg;
  cfg.contract = kind;
  cfg.chunk_size = L;
  cfg.boundary_states = boundary;
  cfg.threads = ref::default_threads();  // the twin on the reference's threads (--threads)
  return cfg;
}

// SSU on `device`; the twin on the reference's threads (--threads).
ssu::Config ssu_config() {
  ssu::Config cfg;
  cfg.threads = ref::default_threads();
  return cfg;
}

// The request of decode problem `d` whose state is in pool slot `slot` after the launch
// (the last one writing it, as judge_ssu's pool bound; -1: none).
int64_t writer_of(const DecodeProblem& d, int64_t slot) {
  int64_t writer = -1;
  for (int64_t q = 0; q < d.problem.shape.num_sequences(); ++q) {
    if (!d.is_pad(q) && d.out_slot(q) == slot) writer = q;
  }
  return writer;
}

}  // namespace

KernelCheck judge_ssu(const DecodeProblem& d, const ref::ExactDecodeResult& exact, const ssu::Result& got,
                      const std::string& kernel, const std::string& device) {
  const Contract contract = ssu::contract();
  Problem view = d.problem;
  view.initial_state = request_states(d);
  const bound::SequentialInput in = sequential_input_for(view, contract, exact.result, /*tokens_per_launch=*/0);
  const bound::SequentialBounds b = bound::sequential_bounds(in);

  const Shape& s = d.problem.shape;
  const int64_t per = s.H * s.P * s.N;
  std::vector<double> pool_bound(d.slots * per, 0.0);  // unwritten slots: unchanged
  for (int64_t r = 0; r < s.num_sequences(); ++r) {
    if (d.is_pad(r)) continue;
    std::copy(b.stored_state.begin() + r * per, b.stored_state.begin() + (r + 1) * per,
              pool_bound.begin() + d.out_slot(r) * per);
  }
  KernelCheck kc{kernel, contract.name, device, {}};
  kc.tensors.push_back(judge_tensor("y", d.problem.formats.output, got.y, exact.result.y, b.y, y_layout(d.problem)));
  kc.tensors.push_back(judge_tensor("state_pool", d.problem.formats.state, got.state_pool, exact.state_pool, pool_bound,
                                    state_layout(d.problem, int64_t(got.state_pool.size()), "slot")));
  attribute_worst(kc.tensors[0], in, bound::BoundOf::y, kc.tensors[0].worst.index);
  const int64_t w = kc.tensors[1].worst.index, writer = w < 0 ? -1 : writer_of(d, w / per);
  if (writer >= 0) attribute_worst(kc.tensors[1], in, bound::BoundOf::stored_state, writer * per + w % per);
  return kc;
}

KernelCheck check_ssu(const DecodeProblem& d, Device device) {
  const ref::ExactDecodeResult exact = ref::compute_decode(d);
  return judge_ssu(d, exact, ssu::run(d, device, ssu_config()), "ssu", std::string(device_name(device)));
}

KernelCheck judge_chunk_scan(const Problem& p, chunk_scan::ContractKind kind, int64_t L,
                             const ref::ExactResult& exact, const chunk_scan::Result& got,
                             const std::string& device) {
  const Contract contract = chunk_scan::contract(kind, L);
  const bound::ChunkedBounds b = chunked_bounds_for(p, contract, exact);

  KernelCheck kc{"chunk_scan", contract.name, device, {}};
  const Format st = p.formats.state;
  kc.tensors.push_back(
      judge_tensor("y", p.formats.output, format_bits(p.formats.output, got.y), exact.y, b.y, y_layout(p)));
  kc.tensors.push_back(judge_tensor("final_state", st, format_bits(st, got.final_state), exact.final_state,
                                    b.final_state, state_layout(p, int64_t(got.final_state.size()))));
  attribute_worst(kc.tensors[0], p, contract, exact, bound::BoundOf::y);
  attribute_worst(kc.tensors[1], p, contract, exact, bound::BoundOf::final_state);
  if (!got.boundary_states.empty()) {
    // One report over all chunk boundaries: [chunks, H, P, N], the chunk as first coordinate.
    ref::ExactValues all;
    for (const ref::StateAt& sa : exact.states_at) {
      all.value.insert(all.value.end(), sa.state.value.begin(), sa.state.value.end());
      all.nearest.insert(all.nearest.end(), sa.state.nearest.begin(), sa.state.nearest.end());
      all.magnitude.insert(all.magnitude.end(), sa.state.magnitude.begin(), sa.state.magnitude.end());
      all.certified_error.insert(all.certified_error.end(), sa.state.certified_error.begin(),
                                 sa.state.certified_error.end());
    }
    kc.tensors.push_back(judge_tensor("boundary_states", st, format_bits(st, got.boundary_states), all,
                                      b.boundary_state, state_layout(p, int64_t(got.boundary_states.size()), "chunk")));
    attribute_worst(kc.tensors[2], p, contract, exact, bound::BoundOf::boundary_state);
  }
  return kc;
}

KernelCheck check_chunk_scan(const Problem& p, chunk_scan::ContractKind kind, int64_t L,
                             Device device, bool boundary_states) {
  const chunk_scan::Config cfg = chunk_config(kind, L, boundary_states);
  chunk_scan::validate(p, cfg);
  ref::Options ro;
  const chunk_scan::ChunkPlan plan = chunk_scan::plan_chunks(p.shape.cu_seqlens, L);
  if (boundary_states) {
    for (int64_t c = 0; c < plan.num_chunks(); ++c) ro.state_positions.push_back(plan.start[c] + plan.len[c]);
  }
  const ref::ExactResult exact = ref::compute(p, ro);
  return judge_chunk_scan(p, kind, L, exact, chunk_scan::run(p, device, cfg), std::string(device_name(device)));
}

HandoffOutputs run_handoff(const Problem& p, int64_t split, chunk_scan::ContractKind kind, int64_t L,
                           Device device) {
  const Shape& s = p.shape;
  const int64_t S = s.num_sequences(), H = s.H, P = s.P, per = H * P * s.N;
  validate(p);
  for (int64_t q = 0; q < S; ++q) {
    if (split < 0 || split > s.seq_len(q)) {
      throw ProblemError("hand-off split = " + std::to_string(split) + " is outside [0, " +
                         std::to_string(s.seq_len(q)) + "] for sequence " + std::to_string(q));
    }
  }
  const std::vector<int64_t> prefill(S, split);
  HandoffOutputs out;
  out.y.assign(s.num_tokens() * H * P, 0);
  out.final_state.assign(S * per, 0);
  // Prefill [0, split): chunk_scan.
  std::vector<float> handed(S * per, 0.0f);  // the state each sequence hands over
  if (split > 0) {
    const Problem pre = slice_tokens(p, std::vector<int64_t>(S, 0), prefill);
    const chunk_scan::Result got = chunk_scan::run(pre, device, chunk_config(kind, L, false));
    for (int64_t q = 0; q < S; ++q) {
      for (int64_t j = 0; j < split; ++j) {
        for (int64_t i = 0; i < H * P; ++i) {
          out.y[(s.cu_seqlens[q] + j) * H * P + i] =
              round_nearest_even(p.formats.output, got.y[(q * split + j) * H * P + i]);
        }
      }
    }
    handed = got.final_state;
    for (int64_t i = 0; i < S * per; ++i) out.final_state[i] = round_nearest_even(p.formats.state, handed[i]);
  } else if (p.has_initial_state()) {
    handed = p.initial_state;
  }

  // Decode [split, len): SSU, one launch, request q reading and writing slot q.
  std::vector<int64_t> kept;
  std::vector<int64_t> end(S);
  for (int64_t q = 0; q < S; ++q) end[q] = s.seq_len(q);
  DecodeProblem d;
  d.problem = slice_tokens(p, prefill, end, &kept);
  if (!kept.empty()) {
    d.problem.initial_state.clear();
    d.slots = S;
    d.state_pool = handed;
    d.slot_in = kept;
    const ssu::Result got = ssu::run(d, device, ssu_config());
    int64_t t_dec = 0;
    for (const int64_t q : kept) {
      for (int64_t t = s.cu_seqlens[q] + split; t < s.cu_seqlens[q + 1]; ++t, ++t_dec) {
        for (int64_t i = 0; i < H * P; ++i) out.y[t * H * P + i] = got.y[t_dec * H * P + i];
      }
      for (int64_t i = 0; i < per; ++i) out.final_state[q * per + i] = got.state_pool[q * per + i];
    }
  }
  return out;
}

KernelCheck check_handoff(const Problem& p, int64_t split, chunk_scan::ContractKind kind, int64_t L,
                          Device device) {
  // The kernels first: run_handoff validates the problem and the split before anything runs.
  const HandoffOutputs got = run_handoff(p, split, kind, L, device);
  const Shape& s = p.shape;
  const int64_t S = s.num_sequences();
  const Contract chunked = chunk_scan::contract(kind, L);
  const Contract sequential = ssu::contract();
  const std::vector<int64_t> prefill(S, split);
  const ref::ExactResult exact = ref::compute(p, handoff_reference_options(p, prefill));
  // SSU decodes each request's tokens in one launch: the state stays fp32 between them.
  const HandoffBounds bounds = handoff_bounds(p, prefill, chunked, sequential, /*decode_stores_every_token=*/false,
                                              exact);
  bool decoded = false;  // some sequence has tokens after the split
  for (int64_t q = 0; q < S; ++q) decoded = decoded || s.seq_len(q) > split;

  // Named by what ran: split 0 is SSU alone (decoding the whole prompt), a split at the end
  // of every sequence chunk_scan alone.
  KernelCheck kc{"chunk_scan+ssu", chunked.name + "+" + sequential.name, std::string(device_name(device)), {}};
  if (split == 0) kc = KernelCheck{"ssu", sequential.name, std::string(device_name(device)), {}};
  if (!decoded) kc = KernelCheck{"chunk_scan", chunked.name, std::string(device_name(device)), {}};
  kc.tensors.push_back(judge_tensor("y", p.formats.output, got.y, exact.y, bounds.y, y_layout(p)));
  kc.tensors.push_back(judge_tensor("final_state", p.formats.state, got.final_state, exact.final_state,
                                    bounds.final_state, state_layout(p, int64_t(got.final_state.size()))));
  attribute_handoff(kc, p, prefill, chunked, sequential, false, exact);
  return kc;
}

namespace {

chunk_scan::ContractKind counterexample_contract(const std::string& contract) {
  chunk_scan::ContractKind kind;
  const std::string prefix = "chunk_scan.";
  const std::string rest = contract.rfind(prefix, 0) == 0 ? contract.substr(prefix.size()) : contract;
  if (!chunk_scan::parse_contract_kind(rest.substr(0, rest.find('+')), kind)) {
    throw std::invalid_argument("field 'contract' = '" + contract +
                                "': expected chunk_scan.production or chunk_scan.fp32 (optionally +ssu)");
  }
  return kind;
}

}  // namespace

KernelCheck check_counterexample(const Counterexample& c, Device device) {
  if (c.kernel == "ssu") return check_ssu(c.decode, device);
  if (c.kernel == "chunk_scan") {
    return check_chunk_scan(c.problem, counterexample_contract(c.contract), c.chunk_size, device,
                            /*boundary_states=*/true);
  }
  if (c.kernel == "chunk_scan+ssu") {
    return check_handoff(c.problem, c.split, counterexample_contract(c.contract), c.chunk_size, device);
  }
  throw std::invalid_argument("field 'kernel' = '" + c.kernel + "': expected ssu, chunk_scan or chunk_scan+ssu");
}

}  // namespace ssmv::verify
