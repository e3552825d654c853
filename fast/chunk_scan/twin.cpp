#include "fast/chunk_scan/twin.h"

#include "fast/chunk_scan/mma_model.h"
#include "fast/chunk_scan/arithmetic.h"
#include "fast/common/parallel.h"

namespace ssmv::chunk_scan {
namespace {

// Tokens [t0, t0 + len) of one head (or group) of a token-major tensor, `width` values each at
// `first` + k·`stride`: the tensor's own floats with that stride, or (values held as bits)
// decoded into `buffer` with stride `width`. The reductions read the same values either way.
struct Rows {
  const float* at;
  std::ptrdiff_t stride;
};
Rows rows(const FormatValues& v, int64_t first, int64_t stride, int64_t len, int64_t width,
          std::vector<float>& buffer) {
  if (!v.holds_bits()) return {v.floats() + first, stride};
  buffer.resize(size_t(len * width));
  for (int64_t k = 0; k < len; ++k) v.read(size_t(first + k * stride), size_t(width), &buffer[size_t(k * width)]);
  return {buffer.data(), width};
}

}  // namespace

Result run_twin(const Problem& pr, const Config& cfg) {
  validate(pr, cfg);
  const Shape& sh = pr.shape;
  const int64_t T = sh.num_tokens(), H = sh.H, P = sh.P, N = sh.N, G = sh.G;
  const int64_t S = sh.num_sequences(), L = cfg.chunk_size;
  const ChunkPlan plan = plan_chunks(sh.cu_seqlens, L);
  const int64_t NC = plan.num_chunks();
  const Format in = pr.formats.input;
  const bool production = cfg.contract == ContractKind::production;
  // R: the contract's rounding of dt-scaled B, incoming state and decayed C·Bᵀ.
  auto R = [&](float v) { return production ? float(round_value(in, v)) : v; };
  const MmaOperands ops{in == Format::fp16 ? Format::fp16 : Format::bf16};
  const auto reduce = uses_mma(cfg.contract, in) ? mma_chain : fma_chain;
  auto chain = [&](const float* a, std::ptrdiff_t as, const float* b, std::ptrdiff_t bs, int len,
                   float acc) { return reduce(a, as, b, bs, len, acc, ops); };
  const int64_t heads_per_group = H / G;
  // Stages (b)–(e) over independent items — (chunk, head), (sequence, head), (chunk, group) —
  // each writing only its own outputs: the same bits for any thread count (fast/common/parallel.h).
  const int workers = fast::worker_count(cfg.threads, NC * H, T * H * P * N);

  Intermediates st;
  // (a) δ and the within-chunk cumulative sum of δ·A, [H, T].
  st.delta.assign(H * T, 0.0f);
  st.cumsum.assign(H * T, 0.0f);
  for (int64_t c = 0; c < NC; ++c) {
    for (int64_t h = 0; h < H; ++h) {
      const float bias = pr.has_dt_bias() ? pr.dt_bias[h] : 0.0f;
      float cs = 0.0f;
      for (int64_t j = 0; j < plan.len[c]; ++j) {
        const int64_t t = plan.start[c] + j;
        const float d = fm::delta(pr.dt[t * H + h], pr.has_dt_bias(), bias, pr.dt_softplus,
                                  pr.dt_limit_lo, pr.dt_limit_hi);
        const float dA = d * pr.A[h];
        cs = j == 0 ? dA : cs + dA;
        st.delta[h * T + t] = d;
        st.cumsum[h * T + t] = cs;
      }
    }
  }
  auto cs_at = [&](int64_t h, int64_t t) { return st.cumsum[h * T + t]; };
  auto cs_last = [&](int64_t c, int64_t h) { return cs_at(h, plan.start[c] + plan.len[c] - 1); };

  // (b) chunk states [NC, H, P, N]: Σ_k x_k[p]·R(B_k[n]·scale_k).
  st.chunk_state.assign(NC * H * P * N, 0.0f);
  // Per worker: [len, N] the rounded, dt-scaled, decayed B of one chunk and head.
  std::vector<std::vector<float>> b_scaled(workers, std::vector<float>(L * N));
  // Per worker: a chunk's x of one head [len, P], B and C of one group [len, N], when held as bits.
  std::vector<std::vector<float>> x_rows(workers), b_rows(workers), c_rows(workers);
  ssmv::for_each_task(NC * H, workers, [&](int64_t item, int worker) {
    const int64_t c = item / H, h = item % H;
    const int64_t t0 = plan.start[c], len = plan.len[c];
    const int64_t g = h / heads_per_group;
    float* bs = b_scaled[worker].data();
    const Rows b = rows(pr.B, pr.bc_index(t0, g, 0), G * N, len, N, b_rows[worker]);
    for (int64_t k = 0; k < len; ++k) {
      const float scale = state_scale(cs_last(c, h), cs_at(h, t0 + k), st.delta[h * T + t0 + k]);
      for (int64_t n = 0; n < N; ++n) bs[k * N + n] = R(b.at[k * b.stride + n] * scale);
    }
    const Rows x = rows(pr.x, pr.x_index(t0, h, 0), H * P, len, P, x_rows[worker]);
    for (int64_t p = 0; p < P; ++p) {
      for (int64_t n = 0; n < N; ++n) {
        st.chunk_state[((c * H + h) * P + p) * N + n] = chain(x.at + p, x.stride, &bs[n], N, int(len), 0.0f);
      }
    }
  });

  // (c) state passing, fp32 between chunks; h_in rounded by R, returned states to the
  // state format.
  Result out;
  const Format sf = pr.formats.state;
  st.state_in.assign(NC * H * P * N, 0.0f);
  out.final_state.assign(S * H * P * N, 0.0f);
  if (cfg.boundary_states) out.boundary_states.assign(NC * H * P * N, 0.0f);
  ssmv::for_each_task(S * H, workers, [&](int64_t item, int) {
    const int64_t s = item / H, h = item % H;
    for (int64_t e = 0; e < P * N; ++e) {
      float state = pr.has_initial_state() ? pr.initial_state[(s * H + h) * P * N + e] : 0.0f;
      for (int64_t c = plan.first_chunk[s]; c < plan.first_chunk[s + 1]; ++c) {
        const int64_t i = (c * H + h) * P * N + e;
        st.state_in[i] = R(state);
        state = fm::fma_rn(fm::exp(cs_last(c, h)), state, st.chunk_state[i]);
        if (cfg.boundary_states) out.boundary_states[i] = float(round_value(sf, state));
      }
      out.final_state[(s * H + h) * P * N + e] = float(round_value(sf, state));
    }
  });
  for (int64_t c = 0; c < NC && cfg.boundary_states; ++c) {
    out.boundary_positions.push_back(plan.start[c] + plan.len[c]);
  }

  // (d) C·Bᵀ per chunk and group, [NC, G, L, L], entries k ≤ m < len.
  st.cb.assign(NC * G * L * L, 0.0f);
  ssmv::for_each_task(NC * G, workers, [&](int64_t item, int worker) {
    const int64_t c = item / G, g = item % G;
    const int64_t t0 = plan.start[c], len = plan.len[c];
    const Rows b = rows(pr.B, pr.bc_index(t0, g, 0), G * N, len, N, b_rows[worker]);
    const Rows cr = rows(pr.C, pr.bc_index(t0, g, 0), G * N, len, N, c_rows[worker]);
    for (int64_t m = 0; m < len; ++m) {
      for (int64_t k = 0; k <= m; ++k) {
        st.cb[((c * G + g) * L + m) * L + k] = chain(cr.at + m * cr.stride, 1, b.at + k * b.stride, 1, int(N), 0.0f);
      }
    }
  });

  // (e) y = inter-chunk term, then the intra-chunk term on the same accumulator, D, z.
  const Format of = pr.formats.output;
  out.y.assign(T * H * P, 0.0f);
  // Per worker: [len, len] the rounded weights of one chunk and head.
  std::vector<std::vector<float>> weights(workers, std::vector<float>(L * L));
  ssmv::for_each_task(NC * H, workers, [&](int64_t item, int worker) {
    const int64_t c = item / H, h = item % H;
    const int64_t t0 = plan.start[c], len = plan.len[c];
    const int64_t g = h / heads_per_group;
    float* w = weights[worker].data();
    const Rows x = rows(pr.x, pr.x_index(t0, h, 0), H * P, len, P, x_rows[worker]);
    const Rows cr = rows(pr.C, pr.bc_index(t0, g, 0), G * N, len, N, c_rows[worker]);
    for (int64_t m = 0; m < len; ++m) {
      for (int64_t k = 0; k <= m; ++k) {
        w[m * L + k] = R(cb_weight(st.cb[((c * G + g) * L + m) * L + k], cs_at(h, t0 + m),
                                   cs_at(h, t0 + k), st.delta[h * T + t0 + k]));
      }
    }
    for (int64_t m = 0; m < len; ++m) {
      const int64_t t = t0 + m;
      const float decay_m = fm::exp(cs_at(h, t));
      for (int64_t p = 0; p < P; ++p) {
        float acc = chain(cr.at + m * cr.stride, 1, &st.state_in[((c * H + h) * P + p) * N], 1, int(N), 0.0f);
        acc = acc * decay_m;
        acc = chain(&w[m * L], 1, x.at + p, x.stride, int(m + 1), acc);
        acc = fm::output_epilogue(acc, pr.has_D(), pr.d_value(h, p), x.at[m * x.stride + p], pr.has_z(),
                                  pr.has_z() ? pr.z[pr.x_index(t, h, p)] : 0.0f);
        out.y[pr.x_index(t, h, p)] = float(round_value(of, acc));
      }
    }
  });
  if (cfg.keep_intermediates) out.stages = std::move(st);
  return out;
}

}  // namespace ssmv::chunk_scan
