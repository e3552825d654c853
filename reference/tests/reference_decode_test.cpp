// The decode form (SSU over a state pool) runs the same core as compute(): a request
// equals compute() from its slot's state; a pad request reads a zero state, writes
// nothing, and its y is that of a zero initial state.
#include <gtest/gtest.h>

#include "reference/reference.h"
#include "reference/tests/reference_test_util.h"

namespace ssmv::ref {
namespace {

using testing::identical;
using testing::random_problem;
using testing::same_element;

constexpr int64_t H = 2, P = 2, N = 3, kSlots = 4, kPad = -1;

// Three one-token requests: request 0 reads slot 2 and writes slot 0, request 1 pads,
// request 2 reads and writes slot 3. Slot 1 is untouched; slot 2 is read, not written.
DecodeProblem make_decode() {
  DecodeProblem d;
  d.problem = random_problem({0, 1, 2, 3}, H, P, N, 1, 53, false);
  d.slots = kSlots;
  Problem pool_values = random_problem({0, 1, 2, 3, kSlots}, H, P, N, 1, 59, true);  // 4 sequences
  d.state_pool = pool_values.initial_state;  // [slots, H, P, N] fp32 values
  d.slot_in = {2, kPad, 3};
  d.slot_out = {0, kPad, 3};
  d.pad_slot_id = kPad;
  return d;
}

// Request s alone as a compute() problem with the given initial state (empty: zero).
Problem request_alone(const DecodeProblem& d, int64_t s, std::vector<float> h0) {
  const Problem& pr = d.problem;
  Problem p = pr;
  p.shape.cu_seqlens = {0, 1};
  auto row = [&](const FormatValues& v, int64_t per_token) {
    FormatValues r;
    r.append(v, size_t(s * per_token), size_t(per_token));
    return r;
  };
  p.x = row(pr.x, H * P);
  p.z = row(pr.z, H * P);
  p.dt = row(pr.dt, H);
  p.B = row(pr.B, N);
  p.C = row(pr.C, N);
  p.initial_state = std::move(h0);
  return p;
}

TEST(ReferenceDecode, RequestsEqualComputeFromTheirSlots) {
  const DecodeProblem d = make_decode();
  const ExactDecodeResult r = compute_decode(d);
  const int64_t hpn = H * P * N;
  for (int64_t s : {0, 2}) {
    const std::vector<float> h0(d.state_pool.begin() + d.slot_in[s] * hpn,
                                d.state_pool.begin() + (d.slot_in[s] + 1) * hpn);
    const ExactResult alone = compute(request_alone(d, s, h0));
    for (int64_t i = 0; i < H * P; ++i) EXPECT_TRUE(same_element(r.result.y, s * H * P + i, alone.y, i));
    for (int64_t i = 0; i < hpn; ++i) {
      EXPECT_TRUE(same_element(r.state_pool, d.out_slot(s) * hpn + i, alone.final_state, i));
      EXPECT_EQ(r.state_pool.certified_error[d.out_slot(s) * hpn + i], alone.final_state.certified_error[i]);
    }
  }
}

TEST(ReferenceDecode, PadRequestReadsZeroAndWritesNothing) {
  const DecodeProblem d = make_decode();
  const ExactDecodeResult r = compute_decode(d);
  const int64_t hpn = H * P * N;
  // Slots 1 and 2 (nobody writes them) keep their given values, exactly.
  for (int64_t slot : {1, 2}) {
    for (int64_t i = 0; i < hpn; ++i) {
      const size_t j = size_t(slot * hpn + i);
      EXPECT_EQ(mpfr_cmp_d(r.state_pool.value[j].backend().data(), d.state_pool[j]), 0);
      EXPECT_EQ(r.state_pool.nearest[j], double(d.state_pool[j]));
      EXPECT_EQ(r.state_pool.magnitude[j], std::fabs(double(d.state_pool[j])));
      EXPECT_EQ(r.state_pool.certified_error[j], 0.0);
    }
  }
  // The pad request's y is that of a zero initial state.
  const ExactResult alone = compute(request_alone(d, 1, {}));
  bool nonzero = false;
  for (int64_t i = 0; i < H * P; ++i) {
    EXPECT_TRUE(same_element(r.result.y, 1 * H * P + i, alone.y, i));
    nonzero |= alone.y.nearest[i] != 0.0;
  }
  EXPECT_TRUE(nonzero);  // the pad request's y is a real output, not a placeholder
}

// A decode request of several tokens, its state handed through the pool to a second
// decode step, equals one compute() over all its tokens: the pool holds the exact state
// in value, and rounding that state to fp32 for the next step is what kernels do, so here
// the second step is fed the pool's full-precision values through compute_from_state().
TEST(ReferenceDecode, PoolHandOffEqualsOneLongerRequest) {
  DecodeProblem d = make_decode();
  const ExactDecodeResult first = compute_decode(d);
  const int64_t hpn = H * P * N;
  // Request 2 wrote slot 3. Continue it by request 0's token (reusing its inputs).
  ExactValues slot3;
  slot3.resize(hpn, first.result.check_precision_bits);
  for (int64_t i = 0; i < hpn; ++i) {
    mpfr_set(slot3.value[i].backend().data(), first.state_pool.value[3 * hpn + i].backend().data(), MPFR_RNDN);
    slot3.magnitude[i] = first.state_pool.magnitude[3 * hpn + i];
  }
  Problem next = request_alone(d, 0, {});
  next.initial_state.clear();
  const ExactResult second = compute_from_state(next, slot3);

  Problem both = request_alone(d, 2, std::vector<float>(d.state_pool.begin() + 3 * hpn, d.state_pool.begin() + 4 * hpn));
  const Problem tok0 = request_alone(d, 0, {});
  both.shape.cu_seqlens = {0, 2};
  both.x.append(tok0.x, 0, tok0.x.size());
  both.z.append(tok0.z, 0, tok0.z.size());
  both.dt.append(tok0.dt, 0, tok0.dt.size());
  both.B.append(tok0.B, 0, tok0.B.size());
  both.C.append(tok0.C, 0, tok0.C.size());
  const ExactResult whole = compute(both);
  for (int64_t i = 0; i < H * P; ++i) EXPECT_TRUE(same_element(whole.y, H * P + i, second.y, i));
  for (int64_t i = 0; i < hpn; ++i) EXPECT_TRUE(same_element(whole.final_state, i, second.final_state, i));
}

TEST(ReferenceDecode, BadSlotsAreRejected) {
  DecodeProblem d = make_decode();
  d.slot_in[0] = kSlots;
  try {
    compute_decode(d);
    ADD_FAILURE() << "accepted slot_in[0] = " << kSlots;
  } catch (const ProblemError& e) {
    EXPECT_NE(std::string(e.what()).find("'slot_in'[0] = 4 is outside [0, 4)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ssmv::ref
