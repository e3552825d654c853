// validate() of the Mamba-3 problem: a valid problem passes; each bad shape, size, format
// or value is refused with a message naming the field and its value.
#include "spec/mamba3/problem.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <limits>
#include <string>

namespace ssmv::mamba3 {
namespace {

// One sequence of two tokens, H = 2, G = 1, P = 1, N = 4, R = 1, every tensor present.
Problem small() {
  Problem p;
  p.shape = Shape{{0, 2}, 2, 1, 4, 1, 1};
  p.formats = Formats{Format::bf16, Format::bf16, Format::fp32, Format::bf16};
  p.x = {1.0f, 2.0f, 3.0f, 4.0f};
  p.B = {1.0f, 0.0f, 0.5f, -1.0f, 2.0f, 0.25f, 0.0f, 1.0f};
  p.C = p.B;
  p.dt = {0.5f, 0.25f, 0.125f, 1.0f};
  p.adt = {-0.5f, -1.0f, -0.25f, -2.0f};
  p.trap = {0.0f, 1.0f, -1.0f, 0.5f};
  p.angles = {0.5f, -0.5f, 1.0f, 0.0f};
  p.B_bias.assign(8, 1.0f);
  p.C_bias.assign(8, 1.0f);
  p.D = {1.0f, 0.5f};
  p.z = {1.0f, -1.0f, 2.0f, 0.5f};
  return p;
}

void with_initial_state(Problem& p) {
  const Shape& s = p.shape;
  p.initial.angle.assign(s.num_sequences() * s.H * s.R, 6.0f);
  p.initial.S.assign(s.num_sequences() * s.H * s.P * s.N, 0.5f);
  p.initial.B_prev.assign(s.num_sequences() * s.H * s.N, 0.25f);
  p.initial.x_prev.assign(s.num_sequences() * s.H * s.P, -1.0f);
}

// validate()'s message for p, or "accepted".
std::string verdict(const Problem& p) {
  try {
    validate(p);
  } catch (const ProblemError& e) {
    return e.what();
  }
  return "accepted";
}

// One change to small() and a fragment its refusal must contain.
struct Bad {
  void (*change)(Problem&);
  const char* fragment;
};

void expect_each_rejected(std::initializer_list<Bad> cases) {
  for (const Bad& c : cases) {
    Problem p = small();
    c.change(p);
    const std::string message = verdict(p);
    EXPECT_NE(message.find(c.fragment), std::string::npos) << "message: " << message << "\nexpected: " << c.fragment;
  }
}

TEST(Mamba3ProblemValidate, AcceptsSmallWithAndWithoutInitialState) {
  Problem p = small();
  EXPECT_NO_THROW(validate(p));
  with_initial_state(p);
  EXPECT_NO_THROW(validate(p));
  p.D.clear();
  p.z.clear();
  EXPECT_NO_THROW(validate(p));  // D and z are optional
}

TEST(Mamba3ProblemValidate, IndexHelpersFollowTheRowMajorLayouts) {
  Problem p = small();
  p.shape = Shape{{0, 3, 5}, 4, 3, 8, 2, 3};
  EXPECT_EQ(p.x_index(2, 1, 2), (2 * 4 + 1) * 3 + 2);
  EXPECT_EQ(p.bc_index(2, 1, 7), (2 * 2 + 1) * 8 + 7);
  EXPECT_EQ(p.angle_index(4, 3, 2), (4 * 4 + 3) * 3 + 2);
  EXPECT_EQ(p.state_index(1, 2, 1, 5), ((1 * 4 + 2) * 3 + 1) * 8 + 5);
  EXPECT_EQ(p.shape.group_of(3), 1);  // H/G = 2 heads per group
  EXPECT_EQ(p.shape.seq_len(1), 2);
}

TEST(Mamba3ProblemValidate, RejectsBadShapes) {
  expect_each_rejected({
      {[](Problem& p) {
         p.shape.H = 3;
         p.shape.G = 2;
       },
       "'G' = 2 does not divide H = 3"},
      {[](Problem& p) { p.shape.N = 5; }, "'N' = 5: must be even"},
      {[](Problem& p) { p.shape.R = 3; }, "'R' = 3: must lie in [1, N/2 = 2]"},
      {[](Problem& p) { p.shape.R = 0; }, "'R' = 0"},
      {[](Problem& p) { p.shape.P = 0; }, "'P' = 0: must be positive"},
      {[](Problem& p) {
         p.shape.cu_seqlens = {1, 2};
       },
       "'cu_seqlens'[0] = 1: must be 0"},
      {[](Problem& p) {
         p.shape.cu_seqlens = {0, 2, 2};
       },
       "'cu_seqlens'[2] = 2: must exceed cu_seqlens[1] = 2"},
      {[](Problem& p) { p.shape.cu_seqlens = {0}; }, "'cu_seqlens' has 1 entries"},
  });
}

TEST(Mamba3ProblemValidate, RejectsTensorSizesThatDisagreeWithTheShape) {
  expect_each_rejected({
      {[](Problem& p) { p.angles.push_back(0.0f); }, "'angles': has 5 elements, [T, H, R] needs 4"},
      {[](Problem& p) { p.adt.pop_back(); }, "'adt': has 3 elements, [T, H] needs 4"},
      {[](Problem& p) { p.C_bias.resize(4); }, "'C_bias': has 4 elements, [H, N] needs 8"},
      {[](Problem& p) { p.D = {1.0f}; }, "'D': has 1 elements, [H] needs 2"},
  });
}

TEST(Mamba3ProblemValidate, RejectsAFourPartStateGivenInPart) {
  expect_each_rejected({
      {[](Problem& p) {
         with_initial_state(p);
         p.initial.x_prev.clear();
       },
       "'initial': angle, S, B_prev and x_prev are given together"},
      {[](Problem& p) {
         with_initial_state(p);
         p.initial.B_prev.push_back(0.0f);
       },
       "'initial.B_prev': has 9 elements, [S, H, N] needs 8"},
  });
}

TEST(Mamba3ProblemValidate, RejectsValuesNotExactInTheirFormatOrNotFinite) {
  expect_each_rejected({
      {[](Problem& p) { p.x[3] = 1.0f + 0x1p-10f; }, "'x'[3] = 1.0009765"},
      {[](Problem& p) { p.angles[1] = 0x1.000002p0f; }, "'angles'[1]"},
      {[](Problem& p) { p.dt[0] = std::numeric_limits<float>::quiet_NaN(); }, "'dt'[0] = nan"},
      {[](Problem& p) {
         with_initial_state(p);
         p.formats.state = Format::bf16;
         p.initial.S[2] = 0x1.000002p0f;
       },
       "'initial.S'[2]"},
      {[](Problem& p) { p.formats.angles = Format::int16_scaled; }, "format field 'angles' = int16_scaled"},
  });
}

}  // namespace
}  // namespace ssmv::mamba3
