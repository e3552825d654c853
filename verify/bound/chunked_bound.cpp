// Running error analysis of the chunked family, stage by stage; every step is derived in
// docs/bounds.md §3 (the bracketed numbers refer to it).
#include "verify/bound/chunked_bound.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "verify/bound/error_model.h"
#include "verify/bound/terms.h"

namespace ssmv::bound {
namespace {

// [3.0] An optional rounding to a format coarser than the accumulation: relative u_R and
// the absolute floor of its subnormal range (half its smallest subnormal).
struct Coarse {
  double u = 0, eta = 0;
};
Coarse coarse_rounding(const Contract& c, Point point, const Formats& f) {
  for (const Rounding& r : c.roundings) {
    if (r.point != point) continue;
    const Format fmt = resolve(r.format, f.input, f.state, f.output);
    const FormatInfo& fi = format_info(fmt);
    if (fi.precision >= format_info(c.accumulation).precision) return {};
    return {fi.unit_roundoff, 0.5 * fi.min_subnormal};
  }
  return {};
}

BoundSource sum_source(Sum s) {
  switch (s) {
    case Sum::cumsum: return BoundSource::sum_cumsum;
    case Sum::chunk_state: return BoundSource::sum_chunk_state;
    case Sum::state_passing: return BoundSource::sum_state_passing;
    case Sum::cb: return BoundSource::sum_cb;
    case Sum::y: return BoundSource::sum_y;
  }
  return BoundSource::sum_y;
}

// [3.1] Error of a chained sum, fed the magnitudes of its terms in the kernel's order,
// starting from an accumulator of magnitude acc0. Sequential FMA: each term one rounding
// at the running magnitude. Tensor-core steps of 16 (docs/design.md §4): per step, 17
// truncations each below 2^(E−26) ≤ 2^-25·max(|terms|, |acc|) plus a rounding toward zero
// below one ULP (2u relative) of the step's result: 10.5u times the running magnitude.
// Absolute floors: the rounding below 2^-149 = 2η in fp32's subnormal range, and the
// truncation grid, which never falls below 2^-158 (mma_model.h): 17·2^-158 more.
// For a reduction declared mma_m16n8k16 both models are evaluated and the larger kept
// (the kernel falls back to sequential FMA for fp32 operands). A tree or any_order sum:
// every term passes at most k roundings (its product, the additions, and one more to
// add the sum to a nonzero accumulator), γ_k·(acc0 + Σ|terms|), and each of the
// 2·len + 1 roundings at most η below the normal range. The relative parts belong to the
// sum's source, the floors to underflow.
template <class V>
class Chain {
 public:
  Chain(const Reduction& r, double u, double eta, double acc0, const Tagger<V>& tag)
      : mma_(r.order == ReductionOrder::mma_m16n8k16),
        assoc_(r.order == ReductionOrder::tree || r.order == ReductionOrder::any_order),
        red_(&r), src_(sum_source(r.sum)), tag_(&tag), u_(u), eta_(eta), acc0_(acc0), seq_acc_(acc0),
        mma_acc_(acc0) {}
  void add(double abs_term, int64_t k) {
    seq_acc_ += abs_term;
    ++len_;
    if (assoc_) return;
    seq_rel_ += u_ * seq_acc_;
    seq_abs_ += eta_;
    if (!mma_) return;
    if (k / 16 != step_ && in_step_) flush();
    step_ = k / 16;
    in_step_ = true;
    step_sum_ += abs_term;
  }
  V error() {
    if (assoc_) {
      if (len_ == 0) return V{};
      const int64_t k = product_sum_roundings(*red_, len_) + (acc0_ > 0 ? 1 : 0);
      return tag_->at(src_, gamma(k, u_) * seq_acc_) + tag_->at(BoundSource::underflow, double(2 * len_ + 1) * eta_);
    }
    if (in_step_) flush();
    const V seq = tag_->at(src_, seq_rel_) + tag_->at(BoundSource::underflow, seq_abs_);
    if (!mma_) return seq;
    const V mma = tag_->at(src_, mma_rel_) + tag_->at(BoundSource::underflow, mma_abs_);
    return larger(seq, mma);
  }

 private:
  static constexpr double kMmaStepUlps = 10.5;  // 17·2^-25/u + 2 with u = 2^-24
  static constexpr double kMmaGridFloor = 17 * 0x1p-158;
  void flush() {
    mma_acc_ += step_sum_;
    mma_rel_ += kMmaStepUlps * u_ * mma_acc_;
    mma_abs_ += 2 * eta_ + kMmaGridFloor;
    step_sum_ = 0;
    in_step_ = false;
  }
  bool mma_, assoc_;
  const Reduction* red_;
  BoundSource src_;
  const Tagger<V>* tag_;
  double u_, eta_, acc0_;
  double seq_acc_, seq_rel_ = 0, seq_abs_ = 0;
  double mma_acc_, mma_rel_ = 0, mma_abs_ = 0, step_sum_ = 0;
  int64_t step_ = -1, len_ = 0;
  bool in_step_ = false;
};

// One sequence's share of a chunk: packed tokens [start, start + len) of the chunk that
// begins at chunk_start (= start unless the layout is global and the sequence starts
// mid-chunk: then chunk_start = start rounded down to a multiple of the chunk size).
struct Piece {
  int64_t start, len, chunk_start;
};
std::vector<Piece> pieces(int64_t begin, int64_t end, int64_t L, ChunkLayout layout) {
  std::vector<Piece> out;
  for (int64_t t = begin; t < end;) {
    const int64_t c0 = layout == ChunkLayout::global ? t / L * L : t;
    const int64_t stop = std::min(end, c0 + L);
    out.push_back({t, stop - t, c0});
    t = stop;
  }
  return out;
}

// The bound in value type V (tagged.h): writes every element into `out` (V = double), or
// keeps the focused element's parts (`focus`: only its sequence, head and dim evaluated,
// and y only at focus_token).
template <class V>
void run(const ChunkedInput& in, const Tagger<V>& tag, Focus<V>* focus, int64_t focus_token, ChunkedBounds* out) {
  if (!in.problem || !in.contract || !in.delta || !in.y_exact || !in.y_ungated) {
    throw std::invalid_argument("chunked_bounds: problem, contract, delta, y_exact and y_ungated are required");
  }
  const Problem& pr = *in.problem;
  const Contract& c = *in.contract;
  if (c.family != Family::chunked || c.chunk_size <= 0) {
    throw std::invalid_argument("contract '" + c.name + "' is not of the chunked family with a chunk size");
  }
  const Shape& s = pr.shape;
  const int64_t S = s.num_sequences(), H = s.H, P = s.P, N = s.N, L = c.chunk_size;
  for (int64_t h = 0; h < H; ++h) {
    if (pr.A[h] > 0) {
      throw std::invalid_argument("A[" + std::to_string(h) + "] = " + std::to_string(pr.A[h]) +
                                  " > 0: the chunked algorithm's exp(min(·, 0)) decays compute a "
                                  "different function than the recurrence; no bound");
    }
  }
  using BS = BoundSource;
  const double u = format_info(c.accumulation).unit_roundoff;
  const double eta = underflow_floor(c.accumulation, c.flush_to_zero);
  const Coarse r_B = coarse_rounding(c, Point::dt_scaled_B, pr.formats);
  const Coarse r_CB = coarse_rounding(c, Point::decayed_CB, pr.formats);
  const Coarse r_h = coarse_rounding(c, Point::incoming_state, pr.formats);
  const Coarse r_fin = coarse_rounding(c, Point::final_incoming_state, pr.formats);
  const TranscendentalBudget& b_exp = budget(c, "exp");
  const TranscendentalBudget* b_sp = pr.dt_softplus ? &budget(c, "softplus") : nullptr;
  const TranscendentalBudget* b_sig = pr.has_z() ? &budget(c, "sigmoid") : nullptr;
  // The sums, selected by Sum; an undeclared one is one sequential chain (reduction_of).
  const Reduction red_cs = reduction_of(c, Sum::cumsum), red_st = reduction_of(c, Sum::chunk_state),
                  red_sp = reduction_of(c, Sum::state_passing), red_cb = reduction_of(c, Sum::cb),
                  red_y = reduction_of(c, Sum::y);
  const bool cs_running = red_cs.order == ReductionOrder::sequential_fma && red_cs.partials <= 1;
  const double g2 = gamma(2, u);
  const bool y_wanted = focus == nullptr || focus->which == BoundOf::y;

  std::vector<std::vector<Piece>> seq_pieces(S);
  int64_t chunks_total = 0;
  for (int64_t seq = 0; seq < S; ++seq) {
    seq_pieces[seq] = pieces(s.cu_seqlens[seq], s.cu_seqlens[seq + 1], L, c.chunk_layout);
    chunks_total += int64_t(seq_pieces[seq].size());
  }
  if (out != nullptr) {
    out->y.assign(s.num_tokens() * H * P, 0.0);
    out->final_state.assign(S * H * P * N, 0.0);
    out->final_state_fp32.assign(S * H * P * N, 0.0);
    out->boundary_state.assign(chunks_total * H * P * N, 0.0);
  }
  const auto emit = [&](BoundOf which, std::vector<double> ChunkedBounds::*field, int64_t i, const V& v) {
    if (out != nullptr) (out->*field)[i] = total(v) * kSafetyFactor;
    if (focus != nullptr) focus->keep(which, i, kSafetyFactor * v);
  };

  // Per (sequence, head): the running state in double (h), its magnitude recurrence (habs)
  // and the kernel's error bound (E), all [P, N].
  std::vector<double> hd(P * N), habs(P * N);
  std::vector<V> E(P * N);
  std::vector<V> E_fin(P * N);  // [3.11] the final state's error (final_incoming_state)
  std::vector<double> dl, cs;                           // per piece token: δ, cs
  std::vector<V> ddl, dcs;                              // and their errors Δδ, Δcs
  std::vector<double> CBmag;                            // [Lc, Lc]
  std::vector<V> dCB;
  std::vector<double> Bt;                               // [Lc, N] scaled B and its error
  std::vector<V> dBt;
  std::vector<double> st;                               // [P, N] chunk state and its error
  std::vector<V> dst;
  int64_t chunk_index = 0;
  for (int64_t seq = 0; seq < S; ++seq) {
    const std::vector<Piece>& seq_chunks = seq_pieces[seq];
    const int64_t n_pieces = int64_t(seq_chunks.size());
    for (int64_t h = 0; h < H; ++h) {
      if (focus != nullptr && !focus->covers(seq, h)) continue;
      const int64_t g = s.group_of(h);
      const double A = pr.A[h];
      for (int64_t i = 0; i < P * N; ++i) {
        hd[i] = pr.has_initial_state() ? pr.initial_state[pr.state_index(seq, h, 0, 0) + i] : 0.0;
        habs[i] = std::fabs(hd[i]);
        E[i] = V{};
        E_fin[i] = V{};
      }
      for (int64_t cj = 0; cj < n_pieces; ++cj) {
        const int64_t t0 = seq_chunks[cj].start, Lc = seq_chunks[cj].len;
        const int64_t c0 = seq_chunks[cj].chunk_start;  // < t0: global layout, mid-chunk start
        // [3.2] δ and its error, as in the sequential family [2.1–2.2]; [3.3] the cumulative
        // sum from the chunk's first token c0, through the earlier sequences' tokens [c0, t0)
        // of the same chunk and head (global layout) before this piece's.
        dl.assign(Lc, 0); ddl.assign(Lc, V{}); cs.assign(Lc, 0); dcs.assign(Lc, V{});
        double cs_run = 0, abs_dA = 0;
        V dcs_run{}, sum_ddA{};
        double cs_b = 0;  // cs and Δcs after the chunk's tokens before t0
        V dcs_b{};
        for (int64_t t = c0; t < t0 + Lc; ++t) {
          const int64_t k = t - t0, j = t - c0;  // k < 0: a token of an earlier sequence
          if (k == 0) {
            cs_b = cs_run;
            dcs_b = dcs_run;
          }
          const V dd = delta_error(pr, b_sp, t, h, u, eta, tag);
          const double delta = (*in.delta)[pr.dt_index(t, h)];
          // [3.3] cumulative sum: dA_k = fl(δ̂_k·A), then the sum in the contract's order.
          const double dA = delta * A;
          const V ddA = std::fabs(A) * dd + tag.at(BS::arithmetic, u * std::fabs(A) * (std::fabs(delta) + total(dd))) +
                        tag.at(BS::underflow, eta);
          cs_run += dA;
          abs_dA += std::fabs(dA);
          sum_ddA += ddA;
          if (cs_running) {
            dcs_run = dcs_run + ddA +
                      tag.at(BS::sum_cumsum, u * (std::fabs(cs_run) + total(dcs_run) + total(ddA))) +
                      tag.at(BS::underflow, eta);
          } else {
            dcs_run = sum_ddA + tag.at(BS::sum_cumsum, gamma(reduction_depth(red_cs, j + 1), u) * abs_dA) +
                      tag.at(BS::underflow, double(j + 1) * eta);
          }
          if (k < 0) continue;
          dl[k] = delta;
          ddl[k] = dd;
          cs[k] = cs_run;
          dcs[k] = dcs_run;
        }
        // The piece's decays from its start: exp(cs_m) when it starts its chunk, else
        // exp(cs_m − cs_b) with b = t0 − 1, the chunk's last token before the piece: the
        // difference errs by Δcs_m + Δcs_b plus its own rounding [3.3g].
        const auto piece_decay = [&](int64_t m, V& err) {
          if (c0 == t0) {
            err = exp_error(b_exp, cs[m], dcs[m], tag);
            return std::exp(cs[m]);
          }
          const double d = std::min(cs[m] - cs_b, 0.0);
          err = exp_error(b_exp, d, dcs[m] + dcs_b + tag.at(BS::arithmetic, u * std::fabs(d)) + tag.at(BS::underflow, eta),
                          tag);
          return std::exp(d);
        };
        // [3.4] segment decays exp(min(cs_m − cs_k, 0)): the difference adds one rounding.
        const auto seg_decay = [&](int64_t m, int64_t k, V& err) {
          const double d = std::min(cs[m] - cs[k], 0.0);
          err = exp_error(b_exp, d, dcs[m] + dcs[k] + tag.at(BS::arithmetic, u * std::fabs(d)) + tag.at(BS::underflow, eta),
                          tag);
          return std::exp(d);
        };
        // [3.5] stage (b): scaled B_k = R(fl(B·fl(decay_last,k·δ_k))), then the chunk state.
        Bt.assign(Lc * N, 0); dBt.assign(Lc * N, V{});
        for (int64_t k = 0; k < Lc; ++k) {
          V dD;
          const double D = seg_decay(Lc - 1, k, dD);
          const double sc = D * dl[k], dDt = total(dD), ddt = total(ddl[k]);
          const V dsc = (dl[k] + ddt) * dD + D * ddl[k] + tag.at(BS::arithmetic, u * (D + dDt) * (dl[k] + ddt)) +
                        tag.at(BS::underflow, eta);
          const double dsct = total(dsc);
          for (int64_t n = 0; n < N; ++n) {
            const double B = std::fabs(double(pr.B[pr.bc_index(t0 + k, g, n)]));
            Bt[k * N + n] = double(pr.B[pr.bc_index(t0 + k, g, n)]) * sc;
            dBt[k * N + n] = B * dsc + tag.at(BS::arithmetic, u * B * (sc + dsct)) +
                             tag.at(BS::dt_scaled_B, r_B.u * B * (sc + dsct)) + tag.at(BS::underflow, eta + r_B.eta);
          }
        }
        st.assign(P * N, 0); dst.assign(P * N, V{});
        for (int64_t p = 0; p < P; ++p) {
          if (focus != nullptr && !focus->covers_dim(p)) continue;
          for (int64_t n = 0; n < N; ++n) {
            Chain<V> chain(red_st, u, eta, 0.0, tag);
            double v = 0;
            V carried{};
            for (int64_t k = 0; k < Lc; ++k) {
              const double x = pr.x[pr.x_index(t0 + k, h, p)];
              v += x * Bt[k * N + n];
              carried += std::fabs(x) * dBt[k * N + n];
              chain.add(std::fabs(x) * (std::fabs(Bt[k * N + n]) + total(dBt[k * N + n])), k);
            }
            st[p * N + n] = v;
            dst[p * N + n] = carried + chain.error();
          }
        }
        // The rows of y this run needs: all, or the focused token's.
        const auto row_wanted = [&](int64_t m) { return y_wanted && (focus_token < 0 || t0 + m == focus_token); };
        // [3.6] stage (d): C·Bᵀ over n, |CB| with the double dot product's own margin.
        dCB.assign(Lc * Lc, V{}); CBmag.assign(Lc * Lc, 0);
        for (int64_t m = 0; m < Lc; ++m) {
          if (!row_wanted(m)) continue;
          for (int64_t k = 0; k <= m; ++k) {
            Chain<V> chain(red_cb, u, eta, 0.0, tag);
            double v = 0, mag = 0;
            for (int64_t n = 0; n < N; ++n) {
              const double term = double(pr.C[pr.bc_index(t0 + m, g, n)]) * pr.B[pr.bc_index(t0 + k, g, n)];
              v += term;
              mag += std::fabs(term);
              chain.add(std::fabs(term), n);
            }
            CBmag[m * Lc + k] = std::fabs(v) + double(N) * 0x1p-52 * mag;
            dCB[m * Lc + k] = chain.error();
          }
        }
        // [3.7] stage (e) per row m: inter-chunk term from R(h_in), then the intra-chunk
        // terms on the same accumulator, then D·x and the gate.
        for (int64_t m = 0; m < Lc; ++m) {
          if (!row_wanted(m)) continue;
          const int64_t t = t0 + m;
          V dem;
          const double em = piece_decay(m, dem);
          const double demt = total(dem);
          // weights w_mk = R(fl(fl(CB·decay)·δ_k)) and their errors
          std::vector<double> w(m + 1);
          std::vector<V> dw(m + 1);
          for (int64_t k = 0; k <= m; ++k) {
            V dD;
            const double D = seg_decay(m, k, dD);
            const double cb = CBmag[m * Lc + k], dDt = total(dD), ddt = total(ddl[k]);
            const double mag = (cb + total(dCB[m * Lc + k])) * (D + dDt) * (dl[k] + ddt);
            w[k] = cb * D * dl[k];
            // The underflow of fl(CB·decay) (up to η absolute when the product is subnormal) is
            // multiplied by δ_k before the next rounding: η·(δ + Δδ), then η for fl(·δ).
            dw[k] = (D * dl[k]) * dCB[m * Lc + k] + (cb * dl[k]) * dD + (cb * D) * ddl[k] +
                    tag.at(BS::arithmetic, 2 * u * mag) + tag.at(BS::decayed_CB, r_CB.u * mag) +
                    tag.at(BS::underflow, eta * (dl[k] + ddt) + eta + r_CB.eta);
          }
          for (int64_t p = 0; p < P; ++p) {
            if (focus != nullptr && !focus->covers_dim(p)) continue;
            // inter: q = Σ_n C_m[n]·R(h)[p,n], then fl(q·exp(cs_m))
            Chain<V> qchain(red_y, u, eta, 0.0, tag);
            double q_mag = 0;
            V dq{};
            for (int64_t n = 0; n < N; ++n) {
              const double Cn = std::fabs(double(pr.C[pr.bc_index(t, g, n)]));
              const int64_t i = p * N + n;
              const double h_ub = std::fabs(hd[i]) + 0x1p-30 * habs[i];
              const V dR = E[i] + tag.at(BS::incoming_state, r_h.u * (h_ub + total(E[i]))) + tag.at(BS::underflow, r_h.eta);
              dq += Cn * dR;
              q_mag += Cn * h_ub;
              qchain.add(Cn * (h_ub + total(dR)), n);
            }
            dq += qchain.error();
            const double inter_mag = q_mag * em;
            V err = q_mag * dem + em * dq + tag.at(BS::arithmetic, u * (q_mag + total(dq)) * (em + demt)) +
                    tag.at(BS::underflow, eta);
            // intra, chained on the accumulator holding the inter term
            Chain<V> ychain(red_y, u, eta, inter_mag + total(err), tag);
            for (int64_t k = 0; k <= m; ++k) {
              const double x = std::fabs(double(pr.x[pr.x_index(t0 + k, h, p)]));
              err += x * dw[k];
              ychain.add(x * (w[k] + total(dw[k])), k);
            }
            err += ychain.error();
            // D·x by one fma: one rounding at |y_pre| ≤ |y_ungated| + err.
            const int64_t yi = pr.x_index(t, h, p);
            const double y_pre = std::fabs((*in.y_ungated)[yi]);
            err += tag.at(BS::arithmetic, u * (y_pre + total(err))) + tag.at(BS::underflow, eta);
            double y_abs = y_pre;
            if (b_sig) {
              err = gate_error(err, y_pre, double(pr.z[yi]), *b_sig, g2, eta, tag);  // [3.8] as [2.7]
              y_abs = std::fabs((*in.y_exact)[yi]);
            }
            // [3.9] rounding to the output format
            emit(BoundOf::y, &ChunkedBounds::y, yi,
                 err + tag.at(BS::output, half_ulp_at_most(pr.formats.output, y_abs * (1 + 0x1p-50) + total(err))));
          }
        }
        // [3.10] stage (c): h_out = fma(exp(cs_last), h_in, chunk_state), kept in fp32.
        V da;
        const double a = piece_decay(Lc - 1, da);
        const double dat = total(da);
        const bool last_piece = cj == n_pieces - 1;
        // The state-passing sum: one product term on an accumulator holding the chunk state
        // (sequential fma: u·((a + Δa)(|h| + E) + |st|) + η, one rounding).
        const auto pass = [&](const V& e_in, double h_ub, int64_t i) {
          Chain<V> sp(red_sp, u, eta, std::fabs(st[i]) + total(dst[i]), tag);
          sp.add((a + dat) * (h_ub + total(e_in)), 0);
          return (a + dat) * e_in + h_ub * da + dst[i] + sp.error();
        };
        for (int64_t i = 0; i < P * N; ++i) {
          if (focus != nullptr && !focus->covers_dim(i / N)) continue;
          const double h_ub = std::fabs(hd[i]) + 0x1p-30 * habs[i];
          const double st_mag = std::fabs(st[i]) + total(dst[i]);
          if (last_piece) {
            // [3.11] the final state from R(h_in): E_in + u_R(|h_in| + E_in) + η_R in place of E_in.
            E_fin[i] = pass(E[i] + tag.at(BS::final_incoming_state, r_fin.u * (h_ub + total(E[i]))) +
                                tag.at(BS::underflow, r_fin.eta),
                            h_ub, i);
          }
          E[i] = pass(E[i], h_ub, i);
          hd[i] = a * hd[i] + st[i];
          habs[i] = a * habs[i] + st_mag;
          const double out_ub = std::fabs(hd[i]) + 0x1p-30 * habs[i];
          emit(BoundOf::boundary_state, &ChunkedBounds::boundary_state, ((chunk_index + cj) * H + h) * P * N + i,
               E[i] + tag.at(BS::stored_state, half_ulp_at_most(pr.formats.state, out_ub + total(E[i]))));
        }
      }
      for (int64_t i = 0; i < P * N; ++i) {
        if (focus != nullptr && !focus->covers_dim(i / N)) continue;
        const int64_t si = pr.state_index(seq, h, 0, 0) + i;
        const double ub = std::fabs(hd[i]) + 0x1p-30 * habs[i];
        const V& e = n_pieces > 0 ? E_fin[i] : E[i];
        emit(BoundOf::final_state_fp32, &ChunkedBounds::final_state_fp32, si, e);
        emit(BoundOf::final_state, &ChunkedBounds::final_state, si,
             e + tag.at(BS::stored_state, half_ulp_at_most(pr.formats.state, ub + total(e))));
      }
    }
    if (out != nullptr) {
      for (const Piece& pc : seq_chunks) out->boundary_positions.push_back(pc.start + pc.len);
    }
    chunk_index += n_pieces;
  }
}

}  // namespace

ChunkedBounds chunked_bounds(const ChunkedInput& in) {
  ChunkedBounds out;
  run<double>(in, Tagger<double>(in.weights), nullptr, -1, &out);
  return out;
}

Tagged chunked_bound_parts(const ChunkedInput& in, BoundOf which, int64_t index) {
  if (in.problem == nullptr || in.contract == nullptr) {
    throw std::invalid_argument("chunked_bound_parts: problem and contract are required");
  }
  const Shape& s = in.problem->shape;
  Focus<Tagged> f;
  f.which = which;
  f.index = index;
  int64_t token = -1;
  if (which == BoundOf::y) {
    token = index / (s.H * s.P);
    f.sequence = int64_t(std::upper_bound(s.cu_seqlens.begin(), s.cu_seqlens.end(), token) - s.cu_seqlens.begin()) - 1;
  } else if (which == BoundOf::final_state || which == BoundOf::final_state_fp32) {
    f.sequence = index / (s.H * s.P * s.N);
  } else if (which == BoundOf::boundary_state) {
    // The piece's sequence: count the pieces of the sequences before it.
    const int64_t piece = index / (s.H * s.P * s.N);
    int64_t before = 0;
    for (int64_t q = 0; q < s.num_sequences() && f.sequence < 0; ++q) {
      const int64_t n = int64_t(pieces(s.cu_seqlens[q], s.cu_seqlens[q + 1], in.contract->chunk_size,
                                       in.contract->chunk_layout).size());
      if (piece < before + n) f.sequence = q;
      before += n;
    }
  } else {
    throw std::invalid_argument("chunked_bound_parts: the chunked family bounds y, final_state, final_state_fp32 and "
                                "boundary_state only");
  }
  if (which == BoundOf::y) {
    f.head = (index / s.P) % s.H;
    f.dim = index % s.P;
  } else {
    f.head = (index / (s.P * s.N)) % s.H;
    f.dim = (index / s.N) % s.P;
  }
  run<Tagged>(in, Tagger<Tagged>(in.weights), &f, token, nullptr);
  if (!f.found) throw std::invalid_argument("chunked_bound_parts: index " + std::to_string(index) + " is outside the tensor");
  return f.kept;
}

}  // namespace ssmv::bound
