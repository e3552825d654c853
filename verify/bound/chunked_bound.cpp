// Running error analysis of the chunked family, stage by stage; every step is derived in
// docs/bounds.md §3 (the bracketed numbers refer to it).
#include "verify/bound/chunked_bound.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "verify/bound/error_model.h"
#include "spec/parallel.h"
#include "spec/progress.h"
#include "spec/rows_product.h"
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

// [3.1] Error of a chained sum, fed the magnitudes t_i of its terms in the kernel's order
// (i = 0..len−1), starting from an accumulator of magnitude acc0. Sequential FMA: each
// term one rounding at the running magnitude. Tensor-core steps of 16 (docs/design.md §4):
// per step, 17 truncations each below 2^(E−26) ≤ 2^-25·max(|terms|, |acc|) plus a rounding
// toward zero below one ULP (2u relative) of the step's result: 10.5u times the running
// magnitude. Absolute floors: the rounding below 2^-149 = 2η in fp32's subnormal range, and
// the truncation grid, which never falls below 2^-158 (mma_model.h): 17·2^-158 more. For
// a reduction declared mma_m16n8k16 both models are evaluated and the larger kept (the
// kernel falls back to sequential FMA for fp32 operands). A tree or any_order sum: every
// term passes at most k roundings (its product, the additions, and one more to add the sum
// to a nonzero accumulator), γ_k·(acc0 + Σ|terms|), and each of the 2·len + 1 roundings at
// most η below the normal range. The relative parts belong to the sum's source, the floors
// to underflow.
//
// Summed over the running magnitudes, each model's relative part is linear in the terms:
//   sequential FMA  u·Σ_j (acc0 + Σ_{i≤j} t_i)   = u·(len·acc0 + Σ_i (len − i)·t_i),
//   mma, s = ⌈len/16⌉ steps                      10.5u·(s·acc0 + Σ_i (s − ⌊i/16⌋)·t_i),
//   tree / any_order                             γ_k·(acc0 + Σ_i t_i),
// so the stages accumulate the weighted sums of their terms (primary: the first or the
// associative model, weight primary_weight; mma: weight mma_weight) in vectorised loops
// over whole rows, and error() turns them into the bound.
class ChainModel {
 public:
  ChainModel(const Reduction& r, double u, double eta)
      : mma_(r.order == ReductionOrder::mma_m16n8k16),
        assoc_(r.order == ReductionOrder::tree || r.order == ReductionOrder::any_order),
        red_(r), src_(sum_source(r.sum)), u_(u), eta_(eta) {}
  bool has_mma_model() const { return mma_; }
  double primary_weight(int64_t i, int64_t len) const { return assoc_ ? 1.0 : double(len - i); }
  double mma_weight(int64_t i, int64_t len) const { return double(steps(len) - i / 16); }
  template <class V>
  V error(double acc0, int64_t len, double primary_sum, double mma_sum, const Tagger<V>& tag) const {
    if (len == 0) return V{};
    if (assoc_) {
      const int64_t k = product_sum_roundings(red_, len) + (acc0 > 0 ? 1 : 0);
      return tag.at(src_, gamma(k, u_) * (acc0 + primary_sum)) +
             tag.at(BoundSource::underflow, double(2 * len + 1) * eta_);
    }
    const V seq = tag.at(src_, u_ * (double(len) * acc0 + primary_sum)) +
                  tag.at(BoundSource::underflow, double(len) * eta_);
    if (!mma_) return seq;
    const int64_t s = steps(len);
    const V mma = tag.at(src_, kMmaStepUlps * u_ * (double(s) * acc0 + mma_sum)) +
                  tag.at(BoundSource::underflow, double(s) * (2 * eta_ + kMmaGridFloor));
    return larger(seq, mma);
  }

 private:
  static constexpr double kMmaStepUlps = 10.5;  // 17·2^-25/u + 2 with u = 2^-24
  static constexpr double kMmaGridFloor = 17 * 0x1p-158;
  static int64_t steps(int64_t len) { return (len + 15) / 16; }
  bool mma_, assoc_;
  Reduction red_;
  BoundSource src_;
  double u_, eta_;
};

// What the bound of one head carries from piece to piece, [P, N] each: the running state
// in double (hd), its magnitude recurrence (habs) and the kernel's error bounds (E; E_fin
// [3.11], the final state's from the rounded incoming state).
template <class V>
struct HeadState {
  std::vector<double> hd, habs;
  std::vector<V> E, E_fin;
};

// |CB| of one group over one piece, [Lc, Lc] (rows k ≤ m): an upper bound of |C_m·B_k| and
// the kernel's error in it [3.6]. The same for every head of the group.
template <class V>
struct GroupCB {
  std::vector<double> ub;
  std::vector<V> err;
};

// One worker's buffers (sized on first use, reused from piece to piece).
template <class V>
struct Work {
  std::vector<double> dl, cs;              // [Lc] δ, cs
  std::vector<V> ddl, dcs;                 // their errors
  std::vector<double> Bt, Bt_p, Bt_m;      // [Lc, N] scaled B; chain terms × weights
  std::vector<V> dBt;
  std::vector<double> st, st_p, st_m;      // [P, N] chunk state; its chain's weighted sums
  std::vector<V> dst;
  std::vector<double> ax;                  // [Lc, P] |x|
  std::vector<double> xT, axT;             // [P, Lc] x and |x|, transposed
  std::vector<double> hub_t, hR_t;         // [N, P] |h| bound, |R(h)| + error (transposed)
  std::vector<V> dR_t;                     // [N, P] error of R(h)
  // A tile of kRowTile rows of y: |C| and |C| × the chain's weights [rows, N]; the intra
  // terms' errors and chain terms × weights [rows, K]; the products over n and k [rows, P].
  std::vector<double> Ca, Cp, Cm, Wp, Wm;
  std::vector<V> Wd;
  std::vector<double> q_mag, q_p, q_m, y_p, y_m;
  std::vector<V> dq, dy;
  std::vector<double> cb_ca, cb_cp, cb_cm;         // [R, N] a tile's rows of |C|, × the chain's weights
  std::vector<double> cb_v, cb_mag, cb_p, cb_m;    // [R, K] a tile's rows of C·Bᵀ and their sums
  std::vector<int64_t> rows;                       // the rows of y evaluated
  std::vector<float> row_in;                       // a token's B, x or C held as bits, decoded
};

// One piece of a sequence as a run of the bound sees it (chunk_pieces): its index in the
// sequence, first token, length, its chunk's first token, whether it is the sequence's last,
// and whether any of its rows of y is evaluated.
struct PieceView {
  int64_t cj = 0, t0 = 0, Lc = 0, c0 = 0;
  bool last_piece = false, any_row = false;
};

// Rows of y evaluated together (spec/rows_product.h's tile height).
constexpr int64_t kRowTile = 4;

ChunkedYBound::Terms y_terms_of(const ChunkedInput& in) {
  const Contract& c = *in.contract;
  ChunkedYBound::Terms t;
  t.contract = &c;
  t.u = format_info(c.accumulation).unit_roundoff;
  t.eta = underflow_floor(c.accumulation, c.flush_to_zero);
  t.g2 = gamma(2, t.u);
  t.b_sig = in.problem->has_z() ? &budget(c, "sigmoid") : nullptr;
  return t;
}

// The terms of y's bound that read the reference's y, on the error `err` before D·x:
// D·x by one fma (one rounding at |y_pre| ≤ |y_ungated| + err), the gate [3.8] (as [2.7]),
// and [3.9] the rounding to the output format at an upper bound of |y| from the reference.
template <class V>
V y_tail(const ChunkedYBound::Terms& c, const Problem& pr, int64_t yi, V err, const YElement& y, const Tagger<V>& tag) {
  using BS = BoundSource;
  const double y_pre = std::fabs(y.ungated);
  err += tag.at(BS::arithmetic, c.u * (y_pre + total(err))) + tag.at(BS::underflow, c.eta);
  if (c.b_sig) err = gate_error(err, y_pre, double(pr.z[yi]), *c.b_sig, c.g2, c.eta, tag);
  const double y_abs = exact_abs_upper(y.exact, y.certified_error);
  const double mag = y_abs + total(err);
  return err + tag.at(BS::output, store_rounding_error(*c.contract, Point::output, pr.formats, pr.formats.output, mag));
}

// y's error before D·x raised to the float ChunkedBounds::y_before_dx keeps (before_dx_kept),
// the increment attributed to fp32 arithmetic: what the kept and the streamed y bound finish.
template <class V>
V as_kept(const V& err) {
  const double t = total(err);
  const double kept = before_dx_kept(t);
  if constexpr (std::is_same_v<V, double>) {
    return kept;
  } else {
    V r = err;
    r.v[size_t(BoundSource::arithmetic)] += kept - t;
    return r;
  }
}

// The bound in value type V (tagged.h): writes every element into `out` (V = double), or
// keeps the focused element's parts (`focus`: only its sequence, head and dim evaluated,
// and y only at focus_token).
template <class V>
void run(const ChunkedInput& in, const Tagger<V>& tag, Focus<V>* focus, int64_t focus_token, const YElement* focus_y,
         ChunkedBounds* out) {
  if (!in.problem || !in.contract || !in.delta.present()) {
    throw std::invalid_argument("chunked_bounds: problem, contract and delta are required");
  }
  const bool y_vectors = in.y_exact != nullptr;
  if (y_vectors != (in.y_ungated != nullptr) || y_vectors != (in.y_certified_error != nullptr)) {
    throw std::invalid_argument("chunked_bounds: y_exact, y_ungated and y_certified_error go together");
  }
  if (focus != nullptr && focus->which == BoundOf::y && !y_vectors && focus_y == nullptr) {
    throw std::invalid_argument("chunked_bound_parts: a y element needs its y (the input holds no y vectors)");
  }
  if (in.delta.size() != size_t(in.problem->shape.num_tokens() * in.problem->shape.H)) {
    throw std::invalid_argument("chunked_bounds: delta has " + std::to_string(in.delta.size()) + " values, not T·H = " +
                                std::to_string(in.problem->shape.num_tokens() * in.problem->shape.H));
  }
  const Problem& pr = *in.problem;
  const Contract& c = *in.contract;
  if (c.family != Family::chunked || c.chunk_size <= 0) {
    throw std::invalid_argument("contract '" + c.name + "' is not of the chunked family with a chunk size");
  }
  if (block_scaled(pr.formats.state)) {
    throw std::invalid_argument("state format " + std::string(format_name(pr.formats.state)) +
                                ": the chunked family stores no block-scaled states (a decode cache format)");
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
  // The sums, selected by Sum; an undeclared one is one sequential chain (reduction_of).
  const Reduction red_cs = reduction_of(c, Sum::cumsum);
  const ChainModel ch_st(reduction_of(c, Sum::chunk_state), u, eta), ch_sp(reduction_of(c, Sum::state_passing), u, eta),
      ch_cb(reduction_of(c, Sum::cb), u, eta), ch_y(reduction_of(c, Sum::y), u, eta);
  const bool cs_running = red_cs.order == ReductionOrder::sequential_fma && red_cs.partials <= 1;
  const ChunkedYBound::Terms tail = y_terms_of(in);  // also the gate's sigmoid budget and γ2
  // A state stored in the state format (as [2.6]), after the contract's own stored_state
  // rounding if it declares another, coarser one.
  const auto stored = [&](double mag) {
    return store_rounding_error(c, Point::stored_state, pr.formats, pr.formats.state, mag);
  };
  const bool y_wanted = focus == nullptr || focus->which == BoundOf::y;
  RowHandover* const handover = focus == nullptr ? in.handover : nullptr;  // a focused run hands nothing over
  const int threads = focus != nullptr ? 1 : std::max(1, in.threads);
  // Workers for a step of `work` multiply-adds: one per work_per_thread.
  const auto threads_for = [&](double work) {
    return int(std::clamp(work / double(std::max<int64_t>(1, in.work_per_thread)), 1.0, double(threads)));
  };

  std::vector<std::vector<ChunkPiece>> seq_pieces(S);
  int64_t chunks_total = 0;
  for (int64_t seq = 0; seq < S; ++seq) {
    seq_pieces[seq] = chunk_pieces(s.cu_seqlens[seq], s.cu_seqlens[seq + 1], L, c.chunk_layout);
    chunks_total += int64_t(seq_pieces[seq].size());
  }
  if (out != nullptr) {
    if (y_vectors) {
      out->y.assign(s.num_tokens() * H * P, 0.0);
    } else {
      out->y_before_dx.assign(s.num_tokens(), H, P);
    }
    out->final_state.assign(S * H * P * N, 0.0);
    out->final_state_fp32.assign(S * H * P * N, 0.0);
    if (in.boundary_states) out->boundary_state.assign(chunks_total * H * P * N, 0.0);
  }
  const auto emit = [&](BoundOf which, std::vector<double> ChunkedBounds::*field, int64_t i, const V& v) {
    if (out != nullptr) (out->*field)[i] = total(v) * kSafetyFactor;
    if (focus != nullptr) focus->keep(which, i, kSafetyFactor * v);
  };
  // The boundary states' bounds: kept when the input asks for them, or attributed (focus).
  const bool keep_boundary = in.boundary_states || (focus != nullptr && focus->which == BoundOf::boundary_state);
  // |h| ≤ |hd| + 2^-30·habs: hd, the state's double recurrence, errs by far less than
  // 2^-30 of the magnitude recurrence habs for any chunk count ssmv accepts.
  const auto h_upper = [](double hd, double habs) { return std::fabs(hd) + 0x1p-30 * habs; };

  std::vector<HeadState<V>> heads(H);  // the heads this run evaluates: state-sized
  std::vector<Work<V>> works(static_cast<size_t>(threads));
  std::vector<double> C_rows, B_t, absB_t;  // one group's piece: C [Lc, N], B and |B| [N, Lc]
  std::vector<float> row_b, row_c;          // a token's B and C held as bits, decoded
  int64_t chunk_index = 0;
  for (int64_t seq = 0; seq < S; ++seq) {
    const std::vector<ChunkPiece>& seq_chunks = seq_pieces[seq];
    const int64_t n_pieces = int64_t(seq_chunks.size());
    std::vector<int64_t> hs;  // the heads evaluated, ascending
    for (int64_t h = 0; h < H; ++h) {
      if (focus == nullptr || focus->covers(seq, h)) hs.push_back(h);
    }
    const int64_t nh = int64_t(hs.size());
    for (int64_t h : hs) {
      HeadState<V>& hst = heads[h];
      hst.hd.resize(P * N);
      hst.habs.resize(P * N);
      hst.E.assign(P * N, V{});
      hst.E_fin.assign(P * N, V{});
      for (int64_t i = 0; i < P * N; ++i) {
        hst.hd[i] = pr.has_initial_state() ? pr.initial_state[pr.state_index(seq, h, 0, 0) + i] : 0.0;
        hst.habs[i] = std::fabs(hst.hd[i]);
      }
    }
    // Whether row m of the piece that starts at token t0 is evaluated: every row, or the
    // focused token's.
    const auto wanted = [&](int64_t t0, int64_t m) { return y_wanted && (focus_token < 0 || t0 + m == focus_token); };
    // A piece of the sequence: where it lies, whether it is the last, and whether any of its
    // rows of y is wanted.
    const auto piece_at = [&](int64_t cj) {
      PieceView v;
      v.cj = cj;
      v.t0 = seq_chunks[cj].start;
      v.Lc = seq_chunks[cj].len;
      v.c0 = seq_chunks[cj].chunk_start;  // < t0: global layout, mid-chunk start
      v.last_piece = cj == n_pieces - 1;
      for (int64_t m = 0; m < v.Lc && !v.any_row; ++m) v.any_row = wanted(v.t0, m);
      return v;
    };
    const auto cb_stage = [&](const PieceView& pv, std::vector<GroupCB<V>>& cbs) {
      const int64_t t0 = pv.t0, Lc = pv.Lc;
      const bool any_row = pv.any_row;
      const auto row_wanted = [&](int64_t m) { return wanted(t0, m); };
      // [3.6] stage (d): C·Bᵀ over n per group, once for all its heads. The products are
      // exact in double (24 × 24 significant bits); their double sum errs by at most
      // γ_N(2^-53)·Σ|C·B| (Higham (3.4)), added to |Σ| to make ub an upper bound.
      if (any_row) {
        for (int64_t g = 0; g < s.G; ++g) {
          bool used = false;
          for (int64_t h : hs) used |= s.group_of(h) == g;
          if (!used) continue;
          C_rows.resize(Lc * N);
          B_t.resize(N * Lc);
          absB_t.resize(N * Lc);
          for (int64_t k = 0; k < Lc; ++k) {
            const float* Ck = pr.C.read(size_t(pr.bc_index(t0 + k, g, 0)), size_t(N), row_c);
            const float* Bk = pr.B.read(size_t(pr.bc_index(t0 + k, g, 0)), size_t(N), row_b);
            for (int64_t n = 0; n < N; ++n) {
              C_rows[k * N + n] = Ck[n];
              B_t[n * Lc + k] = Bk[n];
              absB_t[n * Lc + k] = std::fabs(B_t[n * Lc + k]);
            }
          }
          GroupCB<V>& cb = cbs[g];
          // (resize, not assign: entry (m, k) is written for k ≤ m of every wanted row m, and
          // only those are read; zeroing the rest had been a megabyte per chunk.)
          cb.ub.resize(Lc * Lc);
          cb.err.resize(Lc * Lc);
          const double dot_err = gamma(N, 0x1p-53);
          // Rows in tiles of kCbRows: each tile's sums over n are products of its rows of C, |C| and
          // |C| × the chain's weights with the columns k < the tile's last row + 1 of Bᵀ or |Bᵀ|
          // (a row's sums for k beyond it are formed and not read). Work: four products of about
          // Lc²/2 sums of N terms, and one error per element (a few dozen operations).
          constexpr int64_t kCbRows = 4;
          const int64_t tiles = (Lc + kCbRows - 1) / kCbRows;
          const double cb_work = double(Lc) * double(Lc) * (2.0 * double(N) + 32.0);
          for_each_task(tiles, threads_for(cb_work), [&](int64_t ti, int64_t worker) {
            const int64_t m0 = ti * kCbRows, R = std::min(kCbRows, Lc - m0), K = m0 + R;
            bool any = false;
            for (int64_t r = 0; r < R; ++r) any |= row_wanted(m0 + r);
            if (!any) return;
            Work<V>& wk = works[worker];
            // Rows m0 .. m0 + R − 1 of C, |C| and |C| × the chain's weights [R, N].
            wk.cb_ca.resize(R * N);
            wk.cb_cp.resize(R * N);
            wk.cb_cm.assign(R * N, 0.0);
            for (int64_t r = 0; r < R; ++r) {
              for (int64_t n = 0; n < N; ++n) {
                const double ca = std::fabs(C_rows[(m0 + r) * N + n]);
                wk.cb_ca[r * N + n] = ca;
                wk.cb_cp[r * N + n] = ca * ch_cb.primary_weight(n, N);
                if (ch_cb.has_mma_model()) wk.cb_cm[r * N + n] = ca * ch_cb.mma_weight(n, N);
              }
            }
            wk.cb_v.resize(R * K);
            wk.cb_mag.resize(R * K);
            wk.cb_p.resize(R * K);
            wk.cb_m.assign(R * K, 0.0);
            const auto rows_times = [&](const double* a, const std::vector<double>& bt, std::vector<double>& out) {
              rows_product(Product<double, double, double>{R, N, K, a, N, bt.data(), Lc, out.data(), K});
            };
            rows_times(&C_rows[m0 * N], B_t, wk.cb_v);
            rows_times(wk.cb_ca.data(), absB_t, wk.cb_mag);
            rows_times(wk.cb_cp.data(), absB_t, wk.cb_p);
            if (ch_cb.has_mma_model()) rows_times(wk.cb_cm.data(), absB_t, wk.cb_m);
            for (int64_t r = 0; r < R; ++r) {
              const int64_t m = m0 + r;
              if (!row_wanted(m)) continue;
              const double *v = &wk.cb_v[r * K], *mag = &wk.cb_mag[r * K], *sp = &wk.cb_p[r * K],
                           *sm = &wk.cb_m[r * K];
              for (int64_t k = 0; k <= m; ++k) {
                cb.ub[m * Lc + k] = std::fabs(v[k]) + dot_err * mag[k];
                cb.err[m * Lc + k] = ch_cb.error(0.0, N, sp[k], sm[k], tag);
              }
            }
          });
        }
      }
    };
    // One head's step over one piece, on its state from the piece before (heads[h]).
    const auto head_step = [&](const PieceView& pv, const std::vector<GroupCB<V>>& cbs, int64_t h, int64_t worker) {
      const int64_t t0 = pv.t0, Lc = pv.Lc, c0 = pv.c0, cj = pv.cj;
      const bool last_piece = pv.last_piece, any_row = pv.any_row;
      const auto row_wanted = [&](int64_t m) { return wanted(t0, m); };
      const int64_t g = s.group_of(h);
      const double A = pr.A[h];
      HeadState<V>& hst = heads[h];
      Work<V>& wk = works[worker];
      std::vector<double>&dl = wk.dl, &cs = wk.cs;
      std::vector<V>&ddl = wk.ddl, &dcs = wk.dcs;
      // [3.2] δ and its error, as in the sequential family [2.1–2.2]; [3.3] the cumulative
      // sum from the chunk's first token c0, through the earlier sequences' tokens [c0, t0)
      // of the same chunk and head (global layout) before this piece's.
      dl.assign(Lc, 0);
      ddl.assign(Lc, V{});
      cs.assign(Lc, 0);
      dcs.assign(Lc, V{});
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
        const V dd = delta_error(pr, b_sp, c.softplus_shortcut, t, h, u, eta, tag);
        const double delta = in.delta[size_t(pr.dt_index(t, h))];
        // [3.3] cumulative sum: dA_k = fl(δ̂_k·A), then the sum in the contract's order.
        const double dA = delta * A;
        const V ddA = scaled_dt_error(A, delta, dd, u, eta, tag);
        cs_run += dA;
        abs_dA += std::fabs(dA);
        sum_ddA += ddA;
        if (cs_running) {
          dcs_run = dcs_run + ddA + tag.at(BS::sum_cumsum, u * (std::fabs(cs_run) + total(dcs_run) + total(ddA))) +
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
      // (The budget is read at min(argument, arg_hi): a cs_m > 0, from a δ < 0 that the
      // problem's dt_limit allows, is read at the top of the budget's range.)
      const auto piece_decay = [&](int64_t m, V& err) {
        if (c0 == t0) {
          const double e = std::exp(cs[m]);
          err = exp_error(b_exp, std::min(cs[m], b_exp.arg_hi), e, dcs[m], tag);
          return e;
        }
        const double d = std::min(cs[m] - cs_b, 0.0), e = std::exp(d);
        err = exp_error(b_exp, std::min(d, b_exp.arg_hi), e,
                        dcs[m] + dcs_b + tag.at(BS::arithmetic, u * std::fabs(d)) + tag.at(BS::underflow, eta), tag);
        return e;
      };
      // [3.4] segment decays exp(min(cs_m − cs_k, 0)): the difference adds one rounding.
      const auto seg_decay = [&](int64_t m, int64_t k, V& err) {
        const double d = std::min(cs[m] - cs[k], 0.0), e = std::exp(d);
        err = exp_error(b_exp, std::min(d, b_exp.arg_hi), e,
                        dcs[m] + dcs[k] + tag.at(BS::arithmetic, u * std::fabs(d)) + tag.at(BS::underflow, eta), tag);
        return e;
      };
      // [3.5] stage (b): scaled B_k = R(fl(B·fl(decay_last,k·δ_k))), then the chunk state.
      // Every (k, n) is written below (resize: zeroing them first had been a megabyte per head
      // and chunk).
      wk.Bt.resize(Lc * N);
      wk.Bt_p.resize(Lc * N);
      wk.Bt_m.resize(Lc * N);
      wk.dBt.resize(Lc * N);
      for (int64_t k = 0; k < Lc; ++k) {
        V dD;
        const double D = seg_decay(Lc - 1, k, dD);
        const double sc = D * dl[k], dDt = total(dD), ddt = total(ddl[k]);
        const V dsc = (dl[k] + ddt) * dD + D * ddl[k] + tag.at(BS::arithmetic, u * (D + dDt) * (dl[k] + ddt));
        const double dsct = total(dsc);
        // The underflow of the first of the three products B·decay·δ (η when it is
        // subnormal), in any association, times the third factor: max(|B|, δ̂, decay)·η.
        const double first_underflow = std::max(dl[k] + ddt, D + dDt);
        const double wp = ch_st.primary_weight(k, Lc), wm = ch_st.mma_weight(k, Lc);
        const float* Bk = pr.B.read(size_t(pr.bc_index(t0 + k, g, 0)), size_t(N), wk.row_in);
        for (int64_t n = 0; n < N; ++n) {
          const double Bv = Bk[n], B = std::fabs(Bv);
          const int64_t i = k * N + n;
          wk.Bt[i] = Bv * sc;
          wk.dBt[i] = B * dsc + tag.at(BS::arithmetic, u * B * (sc + dsct)) +
                      tag.at(BS::dt_scaled_B, r_B.u * B * (sc + dsct)) +
                      tag.at(BS::underflow, std::max(B, first_underflow) * eta + eta + r_B.eta);
          // the chain term |x|·(|B̃| + ΔB̃) without |x|, times its weights
          const double term = std::fabs(wk.Bt[i]) + total(wk.dBt[i]);
          wk.Bt_p[i] = wp * term;
          wk.Bt_m[i] = wm * term;
        }
      }
      // x of the piece: |x| [Lc, P]; x and |x| transposed, [P, Lc]
      wk.ax.resize(Lc * P);
      wk.xT.resize(P * Lc);
      wk.axT.resize(P * Lc);
      for (int64_t k = 0; k < Lc; ++k) {
        const float* xk = pr.x.read(size_t(pr.x_index(t0 + k, h, 0)), size_t(P), wk.row_in);
        for (int64_t p = 0; p < P; ++p) {
          const double xv = xk[p];
          wk.ax[k * P + p] = wk.axT[p * Lc + k] = std::fabs(xv);
          wk.xT[p * Lc + k] = xv;
        }
      }
      // chunk state st[p,n] = Σ_k x_k[p]·B̃_k[n] (in k order), its carried error and chain:
      // products of x or |x| [P, Lc] with B̃'s rows [Lc, N], for the dims evaluated
      wk.st.assign(P * N, 0);
      wk.st_p.assign(P * N, 0);
      wk.st_m.assign(P * N, 0);
      wk.dst.assign(P * N, V{});
      const int64_t p_first = focus != nullptr && focus->dim >= 0 ? focus->dim : 0;
      const int64_t p_count = focus != nullptr && focus->dim >= 0 ? 1 : P;
      const auto over_dims = [&](const double* a, const auto* b, auto* out) {
        rows_product(Product<double, std::remove_cvref_t<decltype(*b)>, std::remove_cvref_t<decltype(*out)>>{
            p_count, Lc, N, a + p_first * Lc, Lc, b, N, out + p_first * N, N});
      };
      over_dims(wk.xT.data(), wk.Bt.data(), wk.st.data());
      over_dims(wk.axT.data(), wk.Bt_p.data(), wk.st_p.data());
      over_dims(wk.axT.data(), wk.dBt.data(), wk.dst.data());
      if (ch_st.has_mma_model()) over_dims(wk.axT.data(), wk.Bt_m.data(), wk.st_m.data());
      for (int64_t i = 0; i < P * N; ++i) wk.dst[i] += ch_st.error(0.0, Lc, wk.st_p[i], wk.st_m[i], tag);

      // [3.7] stage (e) per row m: inter-chunk term from R(h_in), then the intra-chunk
      // terms on the same accumulator, then D·x and the gate.
      if (any_row) {
        // R(h_in) [3.7]: |h| bound, error and chain term per (n, p), transposed for rows of p.
        wk.hub_t.resize(N * P);
        wk.hR_t.resize(N * P);
        wk.dR_t.resize(N * P);
        for (int64_t p = 0; p < P; ++p) {
          for (int64_t n = 0; n < N; ++n) {
            const int64_t i = p * N + n;
            const double h_ub = h_upper(hst.hd[i], hst.habs[i]);
            const V dR = hst.E[i] + tag.at(BS::incoming_state, r_h.u * (h_ub + total(hst.E[i]))) +
                         tag.at(BS::underflow, r_h.eta);
            wk.hub_t[n * P + p] = h_ub;
            wk.hR_t[n * P + p] = h_ub + total(dR);
            wk.dR_t[n * P + p] = dR;
          }
        }
      }
      // Rows of y in tiles of kRowTile: per row its decay, weights w_mk and |C_m|; then the
      // tile's sums over n (inter) and over k ≤ m (intra) as products; then each element.
      const GroupCB<V>& cb = cbs[g];
      std::vector<int64_t>& rows = wk.rows;
      rows.clear();
      for (int64_t m = 0; m < Lc; ++m) {
        if (row_wanted(m)) rows.push_back(m);
      }
      const bool y_mma = ch_y.has_mma_model();
      for (size_t i0 = 0; i0 < rows.size(); i0 += size_t(kRowTile)) {
        const int64_t R = std::min<int64_t>(kRowTile, int64_t(rows.size() - i0));
        const int64_t K = rows[i0 + size_t(R) - 1] + 1;  // the intra terms k ≤ the tile's last row
        wk.Ca.resize(R * N);
        wk.Cp.resize(R * N);
        wk.Cm.assign(R * N, 0);
        // k beyond a row's m: zero weights, whose products (0·|x|, finite) add nothing
        wk.Wd.assign(R * K, V{});
        wk.Wp.assign(R * K, 0);
        wk.Wm.assign(R * K, 0);
        V dem[kRowTile];
        double em[kRowTile];
        for (int64_t r = 0; r < R; ++r) {
          const int64_t m = rows[i0 + size_t(r)], t = t0 + m;
          em[r] = piece_decay(m, dem[r]);
          // weights w_mk = R(fl(fl(CB·decay)·δ_k)), their errors, and the chain terms
          for (int64_t k = 0; k <= m; ++k) {
            V dD;
            const double D = seg_decay(m, k, dD);
            const double cbm = cb.ub[m * Lc + k], dDt = total(dD), ddt = total(ddl[k]);
            const V& dcb = cb.err[m * Lc + k];
            const double mag = (cbm + total(dcb)) * (D + dDt) * (dl[k] + ddt);
            const double w = cbm * D * dl[k];
            // The underflow of the first of the products CB·decay·δ_k (up to η absolute when it
            // is subnormal) is multiplied by the third factor before the next rounding — in
            // any association: max(δ̂, |CB|, decay)·η — then η for the second product.
            const double third = std::max({dl[k] + ddt, cbm + total(dcb), D + dDt});
            const V dw = (D * dl[k]) * dcb + (cbm * dl[k]) * dD + (cbm * D) * ddl[k] +
                         tag.at(BS::arithmetic, 2 * u * mag) + tag.at(BS::decayed_CB, r_CB.u * mag) +
                         tag.at(BS::underflow, eta * third + eta + r_CB.eta);
            const double term = w + total(dw);
            wk.Wd[r * K + k] = dw;
            wk.Wp[r * K + k] = term * ch_y.primary_weight(k, m + 1);
            if (y_mma) wk.Wm[r * K + k] = term * ch_y.mma_weight(k, m + 1);
          }
          const float* Ct = pr.C.read(size_t(pr.bc_index(t, g, 0)), size_t(N), wk.row_in);
          for (int64_t n = 0; n < N; ++n) {
            const double Cn = std::fabs(double(Ct[n]));
            wk.Ca[r * N + n] = Cn;
            wk.Cp[r * N + n] = Cn * ch_y.primary_weight(n, N);
            if (y_mma) wk.Cm[r * N + n] = Cn * ch_y.mma_weight(n, N);
          }
        }
        // inter: q = Σ_n C_m[n]·R(h)[p,n] for every p (its error, |h| and the chain's sums)
        wk.dq.resize(R * P);
        wk.q_mag.resize(R * P);
        wk.q_p.resize(R * P);
        wk.q_m.assign(R * P, 0);
        rows_product(Product<double, V, V>{R, N, P, wk.Ca.data(), N, wk.dR_t.data(), P, wk.dq.data(), P});
        rows_product(Product<double, double, double>{R, N, P, wk.Ca.data(), N, wk.hub_t.data(), P, wk.q_mag.data(), P});
        rows_product(Product<double, double, double>{R, N, P, wk.Cp.data(), N, wk.hR_t.data(), P, wk.q_p.data(), P});
        if (y_mma) {
          rows_product(Product<double, double, double>{R, N, P, wk.Cm.data(), N, wk.hR_t.data(), P, wk.q_m.data(), P});
        }
        // intra: Σ_k |x_k[p]|·Δw_k and the chain over k ≤ m, for every p
        wk.dy.resize(R * P);
        wk.y_p.resize(R * P);
        wk.y_m.assign(R * P, 0);
        rows_product(Product<V, double, V>{R, K, P, wk.Wd.data(), K, wk.ax.data(), P, wk.dy.data(), P});
        rows_product(Product<double, double, double>{R, K, P, wk.Wp.data(), K, wk.ax.data(), P, wk.y_p.data(), P});
        if (y_mma) {
          rows_product(Product<double, double, double>{R, K, P, wk.Wm.data(), K, wk.ax.data(), P, wk.y_m.data(), P});
        }
        for (int64_t r = 0; r < R; ++r) {
          const int64_t m = rows[i0 + size_t(r)], t = t0 + m;
          const double demt = total(dem[r]);
          // Streamed: the row's floats, finished by ChunkedYBound (its address once per row).
          float* const before_dx = !y_vectors && focus_y == nullptr ? out->y_before_dx.row(t, h) : nullptr;
          for (int64_t p = 0; p < P; ++p) {
            if (focus != nullptr && !focus->covers_dim(p)) continue;
            const int64_t j = r * P + p;
            const V dq = wk.dq[j] + ch_y.error(0.0, N, wk.q_p[j], wk.q_m[j], tag);
            const double q_mag = wk.q_mag[j];
            const double inter_mag = q_mag * em[r];
            V err = q_mag * dem[r] + em[r] * dq + tag.at(BS::arithmetic, u * (q_mag + total(dq)) * (em[r] + demt)) +
                    tag.at(BS::underflow, eta);
            // intra, chained on the accumulator holding the inter term
            const double acc0 = inter_mag + total(err);
            err += wk.dy[j] + ch_y.error(acc0, m + 1, wk.y_p[j], wk.y_m[j], tag);
            err = as_kept(err);  // the float y_before_dx keeps
            if (before_dx != nullptr) {
              before_dx[p] = static_cast<float>(total(err));
              continue;
            }
            const int64_t yi = pr.x_index(t, h, p);
            const YElement y = focus_y != nullptr ? *focus_y
                                                  : YElement{(*in.y_exact)[yi], (*in.y_certified_error)[yi],
                                                             (*in.y_ungated)[yi]};
            emit(BoundOf::y, &ChunkedBounds::y, yi, y_tail(tail, pr, yi, err, y, tag));
          }
        }
      }
      // [3.10] stage (c): h_out = fma(exp(cs_last), h_in, chunk_state), kept in fp32.
      V da;
      const double a = piece_decay(Lc - 1, da);
      const double dat = total(da);
      // The state-passing sum: one product term on an accumulator holding the chunk state
      // (sequential fma: u·((a + Δa)(|h| + E) + |st|) + η, one rounding).
      const auto pass = [&](const V& e_in, double h_ub, int64_t i) {
        const double acc0 = std::fabs(wk.st[i]) + total(wk.dst[i]);
        const double term = (a + dat) * (h_ub + total(e_in));
        return (a + dat) * e_in + h_ub * da + wk.dst[i] +
               ch_sp.error(acc0, 1, ch_sp.primary_weight(0, 1) * term, ch_sp.mma_weight(0, 1) * term, tag);
      };
      for (int64_t i = 0; i < P * N; ++i) {
        if (focus != nullptr && !focus->covers_dim(i / N)) continue;
        const double h_ub = h_upper(hst.hd[i], hst.habs[i]);
        const double st_mag = std::fabs(wk.st[i]) + total(wk.dst[i]);
        if (last_piece) {
          // [3.11] the final state from R(h_in): E_in + u_R(|h_in| + E_in) + η_R in place of E_in.
          hst.E_fin[i] = pass(hst.E[i] + tag.at(BS::final_incoming_state, r_fin.u * (h_ub + total(hst.E[i]))) +
                                  tag.at(BS::underflow, r_fin.eta),
                              h_ub, i);
        }
        hst.E[i] = pass(hst.E[i], h_ub, i);
        hst.hd[i] = a * hst.hd[i] + wk.st[i];
        hst.habs[i] = a * hst.habs[i] + st_mag;
        const double out_ub = h_upper(hst.hd[i], hst.habs[i]);
        if (keep_boundary) {
          emit(BoundOf::boundary_state, &ChunkedBounds::boundary_state, ((chunk_index + cj) * H + h) * P * N + i,
               hst.E[i] + tag.at(BS::stored_state, stored(out_ub + total(hst.E[i]))));
        }
      }
      // A focused run (an attribution) counts nowhere: it may run beside another phase, whose
      // count it must not swell (verify::DeferredAttribution).
      if (focus == nullptr && handover == nullptr) progress::advance(Lc * P * N);
    };
    // The pieces in batches: each piece's C·Bᵀ stage (once per group, for all its heads), then
    // the batch's (piece, head) steps as one set of tasks, piece-major. Head h's step on a piece
    // waits for its step on the piece before (its state), which was handed out earlier, so only
    // a batch's first pieces' last steps are waited for, and the tasks meet at one barrier per
    // batch instead of at two per piece: at 32 heads on 16 workers, each piece's second round
    // of heads had left workers idle at its end. Each step computes what it computed alone, so
    // the bounds are the same bits for any batch and thread count. The batch's C·Bᵀ stages are
    // kept side by side (2·Lc² values per group and piece): at most 4 pieces, fewer with more
    // groups.
    const int64_t batch = focus != nullptr ? 1 : std::clamp<int64_t>(8 / s.G, 1, 4);
    std::vector<std::vector<GroupCB<V>>> batch_cbs(static_cast<size_t>(batch),
                                                   std::vector<GroupCB<V>>(static_cast<size_t>(s.G)));
    std::vector<PieceView> views(static_cast<size_t>(batch));
    for (int64_t cj0 = 0; cj0 < n_pieces && nh > 0; cj0 += batch) {
      // An element's parts, once kept, are final: a y element's attribution ends with its
      // token's piece (the pieces after it cannot change it).
      if (focus != nullptr && focus->found) break;
      const int64_t nb = std::min(batch, n_pieces - cj0);
      double work = 0;
      for (int64_t b = 0; b < nb; ++b) {
        const PieceView& v = views[size_t(b)] = piece_at(cj0 + b);
        cb_stage(v, batch_cbs[size_t(b)]);
        work += double(nh) * double(v.Lc * (P * N + (v.any_row ? v.Lc * P + P * N : 0)));
      }
      std::vector<std::atomic<int64_t>> steps_done(static_cast<size_t>(nh));  // per head: the batch's pieces done
      for (std::atomic<int64_t>& d : steps_done) d.store(0);
      for_each_task(nb * nh, threads_for(work), [&](int64_t task, int64_t worker) {
        const int64_t b = task / nh, hi = task % nh;
        std::atomic<int64_t>& done = steps_done[size_t(hi)];
        for (int64_t d = done.load(std::memory_order_acquire); d < b; d = done.load(std::memory_order_acquire)) {
          done.wait(d, std::memory_order_acquire);
        }
        // Marked done however the step ends: a step that throws stops no other (for_each_task
        // rethrows the lowest-numbered task's exception, the one an unbatched run would).
        struct MarkDone {
          std::atomic<int64_t>& done;
          int64_t pieces;
          ~MarkDone() {
            done.store(pieces, std::memory_order_release);
            done.notify_all();
          }
        } mark{done, b + 1};
        const PieceView& v = views[size_t(b)];
        if (handover != nullptr) handover->wait_room(seq, hs[hi], v.t0);
        head_step(v, batch_cbs[size_t(b)], hs[hi], worker);
        if (handover != nullptr) handover->produced(hs[hi], v.t0 + v.Lc);
      });
    }
    for (int64_t h : hs) {
      const HeadState<V>& hst = heads[h];
      for (int64_t i = 0; i < P * N; ++i) {
        if (focus != nullptr && !focus->covers_dim(i / N)) continue;
        const int64_t si = pr.state_index(seq, h, 0, 0) + i;
        const double ub = h_upper(hst.hd[i], hst.habs[i]);
        const V& e = n_pieces > 0 ? hst.E_fin[i] : hst.E[i];
        emit(BoundOf::final_state_fp32, &ChunkedBounds::final_state_fp32, si, e);
        emit(BoundOf::final_state, &ChunkedBounds::final_state, si,
             e + tag.at(BS::stored_state, stored(ub + total(e))));
      }
    }
    if (handover != nullptr) handover->sequence_done(seq);
    if (out != nullptr) {
      for (const ChunkPiece& pc : seq_chunks) out->boundary_positions.push_back(pc.start + pc.len);
    }
    chunk_index += n_pieces;
  }
}

}  // namespace

ChunkedBounds chunked_bounds(const ChunkedInput& in) {
  const Shape& s = in.problem->shape;
  if (in.handover != nullptr) throw std::invalid_argument("chunked_bounds: a handover needs fill_chunked_bounds");
  const progress::Phase phase("bounds", s.num_tokens() * s.H * s.P * s.N, "state updates");
  ChunkedBounds out;
  run<double>(in, Tagger<double>(in.weights), nullptr, -1, nullptr, &out);
  return out;
}

void fill_chunked_bounds(const ChunkedInput& in, ChunkedBounds& out) {
  try {
    run<double>(in, Tagger<double>(in.weights), nullptr, -1, nullptr, &out);
  } catch (...) {
    if (in.handover != nullptr) in.handover->fail();
    throw;
  }
}

ChunkedYBound::ChunkedYBound(const ChunkedInput& in) : in_(in), terms_(y_terms_of(in)) {}

double ChunkedYBound::operator()(int64_t yi, double error_before_dx, const YElement& y) const {
  return y_tail(terms_, *in_.problem, yi, error_before_dx, y, Tagger<double>(in_.weights)) * kSafetyFactor;
}

Tagged chunked_bound_parts(const ChunkedInput& in, BoundOf which, int64_t index, const YElement* y_element) {
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
      const int64_t n = int64_t(chunk_pieces(s.cu_seqlens[q], s.cu_seqlens[q + 1], in.contract->chunk_size,
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
  run<Tagged>(in, Tagger<Tagged>(in.weights), &f, token, y_element, nullptr);
  if (!f.found) throw std::invalid_argument("chunked_bound_parts: index " + std::to_string(index) + " is outside the tensor");
  return f.kept;
}

}  // namespace ssmv::bound
