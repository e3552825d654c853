#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "spec/problem.h"

namespace ssmv {
namespace {

// The smallest valid problem: one sequence of one token, one head, P = N = 1.
Problem tiny() {
  Problem p;
  p.shape = Shape{{0, 1}, 1, 1, 1, 1};
  p.formats = Formats{Format::bf16, Format::fp32, Format::bf16};
  p.x = {1.0f};
  p.dt = {0.5f};
  p.A = {-1.0f};
  p.B = {1.0f};
  p.C = {1.0f};
  return p;
}

void expect_rejected(const Problem& p, const std::string& fragment) {
  try {
    validate(p);
    ADD_FAILURE() << "accepted a bad problem; expected a message containing '" << fragment << "'";
  } catch (const ProblemError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << fragment;
  }
}

TEST(ProblemValidate, AcceptsTiny) { EXPECT_NO_THROW(validate(tiny())); }

TEST(ProblemValidate, GroupsMustDivideHeads) {
  Problem p = tiny();
  p.shape.H = 3;
  p.shape.G = 2;
  expect_rejected(p, "'G' = 2 does not divide H = 3");
}

TEST(ProblemValidate, CuSeqlensDecreasing) {
  Problem p = tiny();
  p.shape.cu_seqlens = {0, 2, 1};
  expect_rejected(p, "'cu_seqlens'[2] = 1 decreases");
}

TEST(ProblemValidate, EmptySequence) {
  Problem p = tiny();
  p.shape.cu_seqlens = {0, 1, 1};
  expect_rejected(p, "sequence 1 is empty");
}

TEST(ProblemValidate, CuSeqlensOverrunTensors) {
  Problem p = tiny();
  p.shape.cu_seqlens = {0, 2};
  expect_rejected(p, "problem field 'x': has 1 elements, shape [T, H, P] needs 2");
}

TEST(ProblemValidate, ShapesDisagree) {
  Problem p = tiny();
  p.B = {1.0f, 2.0f};
  expect_rejected(p, "problem field 'B': has 2 elements");
}

TEST(ProblemValidate, NonFinite) {
  Problem p = tiny();
  p.x.set(0, std::numeric_limits<float>::infinity());
  expect_rejected(p, "problem field 'x'[0] = inf");
  p = tiny();
  p.A[0] = std::numeric_limits<float>::quiet_NaN();
  expect_rejected(p, "problem field 'A'[0] = nan");
}

// An fp32 state's floats are only asked to be finite (every float is an fp32 value), a block
// of 2^20 at a time without a branch; a block with a bad element is walked again to name the
// first one. Two bad elements in the second block and one past it: the first is named.
TEST(ProblemValidate, NonFiniteStateNamesTheFirstBadElement) {
  Problem p = tiny();
  p.shape = Shape{{0, 1}, 1, 1, 3 << 20, 1};  // N = 3·2^20: three blocks of the state
  p.B = std::vector<float>(size_t(3) << 20, 1.0f);
  p.C = p.B;
  p.initial_state.assign(size_t(3) << 20, 0.5f);
  EXPECT_NO_THROW(validate(p));
  p.initial_state[(size_t(1) << 20) + 17] = -std::numeric_limits<float>::infinity();
  p.initial_state[(size_t(1) << 20) + 99] = std::numeric_limits<float>::quiet_NaN();
  p.initial_state[(size_t(2) << 20) + 1] = std::numeric_limits<float>::quiet_NaN();
  expect_rejected(p, "problem field 'initial_state'[1048593] = -inf");
}

TEST(ProblemValidate, NotExactInFormat) {
  Problem p = tiny();
  p.x.set(0, 1.0f + 0x1p-10f);  // needs 11 significand bits; bf16 has 8
  expect_rejected(p, "is not exact in its format bf16");
}

TEST(ProblemValidate, DtLimit) {
  Problem p = tiny();
  p.dt_limit_lo = 1.0f;
  p.dt_limit_hi = 0.5f;
  expect_rejected(p, "lo is above hi");
}

TEST(ProblemValidate, StateTooLarge) {
  Problem p = tiny();
  p.shape.cu_seqlens = {0, 1};
  p.shape.H = 1 << 20;
  p.shape.G = 1;
  p.shape.P = 1 << 10;
  p.shape.N = 1 << 10;
  expect_rejected(p, "would not fit in memory");
}

DecodeProblem tiny_decode() {
  DecodeProblem d;
  d.problem = tiny();
  d.problem.shape.cu_seqlens = {0, 1, 2};
  d.problem.x = {1.0f, 2.0f};
  d.problem.dt = {0.5f, 0.25f};
  d.problem.B = {1.0f, 1.0f};
  d.problem.C = {1.0f, 1.0f};
  d.slots = 3;
  d.state_pool = {0.0f, 1.0f, 2.0f};
  d.slot_in = {0, 2};
  return d;
}

TEST(DecodeValidate, AcceptsTiny) { EXPECT_NO_THROW(validate(tiny_decode())); }

TEST(DecodeValidate, SlotOutOfRange) {
  DecodeProblem d = tiny_decode();
  d.slot_in[1] = 3;
  try {
    validate(d);
    FAIL() << "accepted slot 3 of 3";
  } catch (const ProblemError& e) {
    EXPECT_NE(std::string(e.what()).find("'slot_in'[1] = 3 is outside [0, 3)"), std::string::npos) << e.what();
  }
}

TEST(DecodeValidate, PadSlotAccepted) {
  DecodeProblem d = tiny_decode();
  d.slot_in[1] = -1;
  EXPECT_NO_THROW(validate(d));
}

TEST(DecodeValidate, TwoWritersOfOneSlot) {
  DecodeProblem d = tiny_decode();
  d.slot_in = {1, 1};
  try {
    validate(d);
    FAIL() << "accepted two writers of slot 1";
  } catch (const ProblemError& e) {
    EXPECT_NE(std::string(e.what()).find("both write slot 1"), std::string::npos) << e.what();
  }
}

TEST(DecodeValidate, ReadOfAnotherRequestsSlot) {
  DecodeProblem d = tiny_decode();
  d.slot_in = {0, 1};
  d.slot_out = {1, 2};
  try {
    validate(d);
    FAIL() << "accepted a read of a slot another request writes";
  } catch (const ProblemError& e) {
    EXPECT_NE(std::string(e.what()).find("reads slot 1 that request 0 writes"), std::string::npos) << e.what();
  }
}

TEST(DecodeValidate, SharedReadSlotWithSeparateDestinations) {
  DecodeProblem d = tiny_decode();
  d.slot_in = {0, 0};
  d.slot_out = {1, 2};
  EXPECT_NO_THROW(validate(d));
}

}  // namespace
}  // namespace ssmv
