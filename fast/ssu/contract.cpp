#include "fast/ssu/contract.h"

#include "fast/common/fast_math_budgets.h"

namespace ssmv::ssu {

Contract contract() {
  Contract c;
  c.name = "ssu";
  c.kernel = "ssu";
  c.family = Family::sequential;
  c.accumulation = Format::fp32;
  // The state stays fp32 across the tokens of one launch; y is computed from the
  // unrounded fp32 state, which is rounded only when stored (final and per-token states).
  c.roundings = {
      {Point::stored_state, FormatRef::state},
      {Point::output, FormatRef::output},
  };
  // exp(fl(δ·A)), softplus (with the x > 20 shortcut) and sigmoid: the measured budgets
  // of fast/common/fast_math.h, valid for every argument (fast_math_budgets.h).
  c.transcendentals = fm::fast_math_budgets();
  c.reductions.push_back(
      {Sum::y, "y = Σ_n C·S", ReductionOrder::sequential_fma, 16,
       "the row's L lanes (L = 16 when N = 16·V for V in {2, 4, 8} with V·bytes(state) <= 16, else 32) each "
       "accumulate acc = fma(C[n], S[n], acc) from acc = +0 over their n = (j·L + u)·V + v (u < L the lane; "
       "j < J, v < V, n < N; for L = 32: V = widest of 8/4/2/1 with V·bytes(state) <= 16 and 32·V <= N, "
       "J = ceil(N/(32·V)) <= 2; for L = 16: J = 1), in order j then v; then an xor butterfly of fp32 adds over "
       "the L lanes (offsets L/2, ..., 2, 1: 5 levels for L = 32, 4 for L = 16); then y = fma(D, x, sum) (one "
       "rounding for the D term), y = y·(z·sigmoid(z)). For L = 32 the longest lane chain is at most "
       "ceil(N/16) - 1 longer than ceil(N/32); for L = 16 it is N/16 with 4 levels; so partials = 16 bounds the "
       "depth (lane chain + tree) for every "
       "N <= 256 (tests/contract_test.cpp)"});
  c.flush_to_zero = false;
  c.softplus_shortcut = true;
  // Bit-identical: same per-thread code, explicit fma, portable transcendentals, and
  // measured so (gpu_twin_how_measured).
  c.gpu_twin_max_ulps = 0;
  c.gpu_twin_how_measured =
      "H200, 2026-11-30 09:31 UTC (bench/NOTES.md, final device call of the third session; per-item and "
      "streamed kernels): ssu_gpu_test, 1200 random problems (every format, P and N from 1 to 256, pads, "
      "repeated read slots, per-token states; 600237 y elements and every pool slot; the 107 the streamed kernel "
      "can take also on both kernels, the streamed one on a one-block grid) plus the streamed kernel's loops "
      "(640 items, 1 to 5 batches per warp, N = 64, 96, 128, 256), "
      "the benchmark shapes and the unaligned-pool path: GPU = twin bit for bit, repeated runs identical; every "
      "variant of ssu_bench equal to its twin on a batch-8 problem of the benchmark shape. The octet kernel "
      "(a row on 8 lanes, each running 2 or 4 logical lanes' chains and the butterfly levels between them): "
      "H200 and H100, 2026-12-06 (bench/NOTES.md, session 27), and H100, 2026-12-07 with the input format and N "
      "fixed at compile time (session 28) and with each (token, row) pair's y finished by a lane of its octet "
      "(session 29): the 35 of those problems it takes, the tokens "
      "test's window shapes, P = 16 to 256 with N = 64 and 128 in 1, 3 and automatic row splits, padded pool rows: "
      "GPU = twin bit for bit";
  return c;
}

}  // namespace ssmv::ssu
