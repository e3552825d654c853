// Tensor files onto ssmv::Problem and a kernel's outputs: a problem dumped by NumPy the way a
// PyTorch user would (bf16 as int16 bit patterns, packed varlen layout), the batched layout
// in native-bf16 safetensors, and the errors naming file, tensor and field.
#include "verify/tensor_file/problem_file.h"

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "verify/tensor_file/tensor_file.h"
#include "verify/tensor_file/tests/test_util.h"

namespace ssmv::tensor_file {
namespace {

using namespace testing;

// make_numpy_fixtures.py's ramp: value(i) = (i - offset) * scale over the flat index.
std::vector<float> ramp(int n, float scale, int offset) {
  std::vector<float> v;
  for (int i = 0; i < n; ++i) v.push_back(float(i - offset) * scale);
  return v;
}

TEST(ProblemFile, NumPyDumpOfAPackedBf16ProblemLoads) {
  ProblemFileOptions o;
  o.formats = Formats{Format::bf16, Format::fp32, Format::bf16};
  o.dt_softplus = true;
  o.dt_limit_hi = 8.0f;
  Layout layout;
  const Problem p = problem_from_tensors(load_tensor_file(fixture("numpy_problem.npz")), "numpy_problem.npz", o, &layout);
  EXPECT_EQ(layout, Layout::packed);
  // T = 5 tokens in sequences [0, 2) and [2, 5); H = 4, P = 3, G = 2, N = 4.
  EXPECT_EQ(p.shape.cu_seqlens, (std::vector<int64_t>{0, 2, 5}));
  EXPECT_EQ(p.shape.H, 4);
  EXPECT_EQ(p.shape.P, 3);
  EXPECT_EQ(p.shape.G, 2);
  EXPECT_EQ(p.shape.N, 4);
  EXPECT_EQ(p.x, ramp(60, 0.125f, 30));
  EXPECT_EQ(p.B, ramp(40, 0.125f, 20));
  EXPECT_EQ(p.C, ramp(40, -0.0625f, 7));
  std::vector<float> dt;
  for (int i = 0; i < 20; ++i) dt.push_back(0.0625f * float(1 + i % 4));
  EXPECT_EQ(p.dt, dt);
  EXPECT_EQ(p.A, (std::vector<float>{-1, -2, -3, -4}));
  EXPECT_EQ(p.D, std::vector<float>(4, 0.5f));
  EXPECT_EQ(p.dt_bias, std::vector<float>(4, -0.25f));
  EXPECT_TRUE(p.z.empty());
  EXPECT_TRUE(p.initial_state.empty());
  EXPECT_TRUE(p.dt_softplus);
  EXPECT_EQ(p.dt_limit_hi, 8.0f);
}

// A small problem in either layout: batch = 2 sequences of L = 3 tokens, H = 2, P = 2,
// G = 1, N = 2; values k/8 (exact in bf16).
TensorMap small_problem(bool batched, DType in = DType::bf16) {
  auto vals = [](int n, int k0) {
    std::vector<double> v;
    for (int i = 0; i < n; ++i) v.push_back(double((i * 5 + k0) % 11 - 5) / 8);
    return v;
  };
  const int64_t b = 2, L = 3, T = 6, H = 2, P = 2, G = 1, N = 2;
  auto lead = [&](std::vector<int64_t> tail) {
    std::vector<int64_t> s = batched ? std::vector<int64_t>{b, L} : std::vector<int64_t>{T};
    s.insert(s.end(), tail.begin(), tail.end());
    return s;
  };
  TensorMap m;
  m["x"] = make_tensor("x", in, lead({H, P}), vals(T * H * P, 1));
  m["dt"] = make_tensor("dt", in, lead({H}), std::vector<double>(T * H, 0.25));
  m["A"] = make_tensor("A", DType::f32, {H}, {-1, -0.5});
  m["B"] = make_tensor("B", in, lead({G, N}), vals(T * G * N, 2));
  m["C"] = make_tensor("C", in, lead({G, N}), vals(T * G * N, 3));
  m["z"] = make_tensor("z", in, lead({H, P}), vals(T * H * P, 4));
  m["D"] = make_tensor("D", DType::f32, {H, P}, {1, 2, 3, 4});
  m["initial_states"] = make_tensor("initial_states", DType::f32, {b, H, P, N}, vals(b * H * P * N, 5));
  if (!batched) m["cu_seqlens"] = make_tensor("cu_seqlens", DType::i64, {3}, {0, 3, 6});
  return m;
}

// The reader narrows the input-format tensors, y and the final states to their formats: bf16
// held as bits (from bf16, i16 or f32 arrays alike), fp32 as floats; the same values either way.
TEST(ProblemFile, SixteenBitTensorsAreHeldAsTheirBits) {
  ProblemFileOptions o;
  o.formats = Formats{Format::bf16, Format::bf16, Format::bf16};
  const Problem p = problem_from_tensors(small_problem(false), "bf16.npz", o);
  for (const FormatValues* v : {&p.x, &p.dt, &p.B, &p.C, &p.z}) {
    ASSERT_TRUE(v->holds_bits());
    EXPECT_EQ(v->format(), Format::bf16);
  }
  EXPECT_THROW(Problem(p).x.set(0, 1.0f), std::logic_error) << "a dump's tensors are not written";
  // The same values stored as f32 (bf16 values held wider, x.float()) load the same.
  const Problem wide = problem_from_tensors(small_problem(false, DType::f32), "f32.npz", o);
  EXPECT_TRUE(wide.x.holds_bits());
  EXPECT_EQ(std::memcmp(wide.x.bits(), p.x.bits(), 2 * p.x.size()), 0);
  EXPECT_EQ(wide.B, p.B);
  TensorMap outs;
  outs["y"] = make_tensor("y", DType::f32, {6, 2, 2}, std::vector<double>(24, -0.375));
  outs["final_states"] = make_tensor("final_states", DType::bf16, {2, 2, 2, 2}, std::vector<double>(16, 3.0));
  const KernelOutputs out = outputs_from_tensors(outs, "out.npz", p);
  ASSERT_TRUE(out.y.holds_bits());
  EXPECT_EQ(out.y.bits()[23], 0xbec0);  // -0.375
  ASSERT_TRUE(out.final_states.holds_bits());
  EXPECT_EQ(out.final_states[15], 3.0f);
  o.formats = Formats{Format::fp32, Format::fp32, Format::fp32};
  const Problem fp32 = problem_from_tensors(small_problem(false, DType::f32), "fp32.npz", o);
  EXPECT_TRUE(fp32.x.narrowed());
  EXPECT_FALSE(fp32.x.holds_bits());
  EXPECT_EQ(fp32.x, p.x);
}

TEST(ProblemFile, BatchedAndPackedLayoutsGiveTheSameProblem) {
  TempDir dir;
  save_safetensors(dir.file("batched.safetensors"), small_problem(true));
  save_npz(dir.file("packed.npz"), small_problem(false));
  ProblemFileOptions o;
  Layout lb, lp;
  const Problem b = problem_from_tensors(load_tensor_file(dir.file("batched.safetensors")), "b", o, &lb);
  const Problem p = problem_from_tensors(load_tensor_file(dir.file("packed.npz")), "p", o, &lp);
  EXPECT_EQ(lb, Layout::batched);
  EXPECT_EQ(lp, Layout::packed);
  EXPECT_EQ(b.shape.cu_seqlens, (std::vector<int64_t>{0, 3, 6}));  // from equal lengths
  EXPECT_EQ(b.shape.cu_seqlens, p.shape.cu_seqlens);
  EXPECT_EQ(b.x, p.x);
  EXPECT_EQ(b.z, p.z);
  EXPECT_EQ(b.B, p.B);
  EXPECT_EQ(b.initial_state, p.initial_state);
  EXPECT_EQ(b.d_mode(), DMode::per_head_dim);
  EXPECT_EQ(load_problem_file(dir.file("packed.npz"), o).x, p.x);
}

TEST(ProblemFile, VarlenKernelsLeadingAxisOfOneIsThePackedLayout) {
  TensorMap m = small_problem(false);
  for (const char* name : {"x", "dt", "B", "C", "z"}) m[name].shape.insert(m[name].shape.begin(), 1);
  Layout l;
  const Problem p = problem_from_tensors(m, "v.npz", ProblemFileOptions{}, &l);
  EXPECT_EQ(l, Layout::packed);
  EXPECT_EQ(p.shape.num_tokens(), 6);
  EXPECT_EQ(p.shape.num_sequences(), 2);
}

TEST(ProblemFile, MismatchesNameFileTensorAndField) {
  const ProblemFileOptions o;
  auto err = [&](TensorMap m) { return error_of([&] { problem_from_tensors(m, "problem.npz", o); }); };
  TensorMap m = small_problem(false);
  m["B"] = make_tensor("B", DType::bf16, {4, 1, 2}, std::vector<double>(8, 0));
  EXPECT_EQ(err(m), "problem.npz: tensor 'B': shape: [4, 1, 2] disagrees with [tokens=6, G, N] (tokens from x [6, 2, 2])");
  m = small_problem(false);
  m["C"] = make_tensor("C", DType::bf16, {6, 1, 3}, std::vector<double>(18, 0));
  EXPECT_EQ(err(m), "problem.npz: tensor 'C': shape: [6, 1, 3] disagrees with [tokens=6, G=1, N=2] (tokens from x "
                    "[6, 2, 2], G and N from B [6, 1, 2])");
  m = small_problem(true);
  m["dt"] = make_tensor("dt", DType::bf16, {6, 2}, std::vector<double>(12, 0.25));
  EXPECT_EQ(err(m), "problem.npz: tensor 'dt': shape: [6, 2] disagrees with [batch=2, L=3, H=2] (batch and L from x "
                    "[2, 3, 2, 2], H from x [2, 3, 2, 2])");
  m = small_problem(false);
  m["initial_states"] = make_tensor("initial_states", DType::f32, {1, 2, 2, 2}, std::vector<double>(8, 0));
  EXPECT_EQ(err(m), "problem.npz: tensor 'initial_states': shape: [1, 2, 2, 2] disagrees with [S=2, H=2, P=2, N=2] "
                    "(S sequences, H and P from x [6, 2, 2], N from B [6, 1, 2])");
  m = small_problem(false);
  m.erase("A");
  EXPECT_EQ(err(m), "problem.npz: tensor 'A': missing (a problem needs x, dt, A, B and C)");
  m = small_problem(false);
  m["initial_state"] = m["initial_states"];
  EXPECT_EQ(err(m), "problem.npz: tensor 'initial_state': name: not a problem or output tensor (expected x, dt, A, B, "
                    "C and optionally D, z, dt_bias, initial_states, cu_seqlens, prefill_tokens; y, final_states)");
  m = small_problem(true);
  m["cu_seqlens"] = make_tensor("cu_seqlens", DType::i32, {3}, {0, 3, 6});
  EXPECT_EQ(err(m), "problem.npz: tensor 'cu_seqlens': given with the batched layout x [2, 3, 2, 2] (batch > 1 means "
                    "equal lengths); varlen data uses the packed layout x [tokens, H, P] with cu_seqlens");
  m = small_problem(false);
  m["cu_seqlens"] = make_tensor("cu_seqlens", DType::i32, {3}, {0, 3, 5});
  EXPECT_EQ(err(m), "problem.npz: tensor 'cu_seqlens': values: last entry 5 is not the token count 6 from x [6, 2, 2]");
  m["cu_seqlens"] = make_tensor("cu_seqlens", DType::f32, {3}, {0, 3, 6});
  EXPECT_EQ(err(m), "problem.npz: tensor 'cu_seqlens': dtype: dtype f32 is not an integer type");
  m = small_problem(false);
  m["x"] = make_tensor("x", DType::bf16, {6, 4}, std::vector<double>(24, 0));
  EXPECT_EQ(err(m), "problem.npz: tensor 'x': shape: [6, 4] is neither [tokens, H, P] (packed) nor [batch, L, H, P] "
                    "(batched)");
}

TEST(ProblemFile, ValuesAreCheckedInTheirDeclaredFormats) {
  const ProblemFileOptions o;  // bf16 inputs
  TensorMap m = small_problem(false, DType::f32);
  EXPECT_NO_THROW(problem_from_tensors(m, "p.npz", o));  // fp32 tensors holding bf16 values
  m["x"] = make_tensor("x", DType::f32, {6, 2, 2}, std::vector<double>(24, 0.1f));
  EXPECT_EQ(error_of([&] { problem_from_tensors(m, "p.npz", o); }),
            "p.npz: tensor 'x': values: element 0 = 0.10000000149011612 (0x1.99999ap-4) of f32 is not exact in the "
            "declared format bf16");
  // validate() runs last: a NaN parameter is refused with the field and value.
  m = small_problem(false);
  m["A"] = make_tensor("A", DType::f32, {2}, {-1, NAN});
  EXPECT_EQ(error_of([&] { problem_from_tensors(m, "p.npz", o); }),
            "p.npz: problem field 'A'[1] = nan (nan): inputs must be finite");
}

TEST(ProblemFile, OutputsAreCheckedAgainstTheProblem) {
  const ProblemFileOptions o;
  const Problem p = problem_from_tensors(small_problem(false), "p.npz", o);
  TensorMap out;
  out["y"] = make_tensor("y", DType::bf16, {2, 3, 2, 2}, std::vector<double>(24, 0.5));
  out["final_states"] = make_tensor("final_states", DType::f32, {2, 2, 2, 2}, std::vector<double>(16, -1));
  KernelOutputs k = outputs_from_tensors(out, "out.npz", p);
  EXPECT_EQ(k.y, std::vector<float>(24, 0.5f));
  EXPECT_EQ(k.final_states, std::vector<float>(16, -1.0f));
  out["y"] = make_tensor("y", DType::f32, {6, 2, 2}, std::vector<double>(24, NAN));
  k = outputs_from_tensors(out, "out.npz", p);
  EXPECT_TRUE(std::isnan(k.y[23])) << "NaN outputs load; the verdict calls them INVALID";
  out["y"] = make_tensor("y", DType::bf16, {6, 2, 3}, std::vector<double>(36, 0));
  EXPECT_EQ(error_of([&] { outputs_from_tensors(out, "out.npz", p); }),
            "out.npz: tensor 'y': shape: [6, 2, 3] disagrees with [tokens=6, H=2, P=2] (tokens, H and P of the problem "
            "(cu_seqlens 2 sequences))");
  out["y"] = make_tensor("y", DType::bf16, {6, 2, 2}, std::vector<double>(24, 0));
  out["final_states"] = make_tensor("final_states", DType::f32, {1, 2, 2, 2}, std::vector<double>(8, 0));
  EXPECT_EQ(error_of([&] { outputs_from_tensors(out, "out.npz", p); }),
            "out.npz: tensor 'final_states': shape: [1, 2, 2, 2] disagrees with [S=2, H=2, P=2, N=2] (sequences, H, P "
            "and N of the problem)");
  out.erase("y");
  EXPECT_EQ(error_of([&] { outputs_from_tensors(out, "out.npz", p); }), "out.npz: tensor 'y': missing (the outputs need y)");
}

// An int16_scaled state (FlashInfer's state_scale): i16 codes in initial_states / final_states and
// one fp32 decode scale per row (s, h, p) in *_scale, [S, H, P] or [S, H, P, 1]; each value is
// fl(code·scale) (spec/format.h decode_scaled).
TEST(ProblemFile, AScaledInt16StateReadsItsCodesWithTheirRowScales) {
  ProblemFileOptions o;
  o.formats.state = Format::int16_scaled;
  TensorMap m = small_problem(false);
  // S = 2, H = 2, P = 2 rows of N = 2 codes: row r holds codes (r - 3)·1000 and 32767.
  std::vector<double> codes, scales;
  for (int r = 0; r < 8; ++r) {
    codes.push_back((r - 3) * 1000);
    codes.push_back(32767);
    scales.push_back(std::ldexp(1.0, -r));
  }
  m["initial_states"] = make_tensor("initial_states", DType::i16, {2, 2, 2, 2}, codes);
  m["initial_states_scale"] = make_tensor("initial_states_scale", DType::f32, {2, 2, 2, 1}, scales);
  const Problem p = problem_from_tensors(m, "p.npz", o);
  ASSERT_EQ(p.initial_state.size(), 16u);
  EXPECT_EQ(p.initial_state[0], -3000.0f);            // row 0: scale 1
  EXPECT_EQ(p.initial_state[5], 32767.0f / 4);        // row 2: scale 2^-2
  EXPECT_EQ(p.initial_state[14], 4000.0f / 128);      // row 7: scale 2^-7
  m["initial_states_scale"] = make_tensor("initial_states_scale", DType::f32, {2, 2, 2}, scales);
  EXPECT_EQ(problem_from_tensors(m, "p.npz", o).initial_state, p.initial_state);

  const auto err = [&](const TensorMap& t) { return error_of([&] { problem_from_tensors(t, "p.npz", o); }); };
  TensorMap bad = m;
  bad.erase("initial_states_scale");
  EXPECT_EQ(err(bad), "p.npz: tensor 'initial_states_scale': missing (the state format int16_scaled needs the decode "
                      "scale of every row of 'initial_states': [S, H, P] or [S, H, P, 1])");
  bad = m;
  bad["initial_states_scale"] = make_tensor("initial_states_scale", DType::f32, {2, 2, 1}, {1, 1, 1, 1});
  EXPECT_EQ(err(bad), "p.npz: tensor 'initial_states_scale': shape: [2, 2, 1] disagrees with [S=2, H=2, P=2] (one "
                      "scale per row of 'initial_states'; or [S, H, P, 1])");
  for (double v : {-0.5, double(NAN), double(INFINITY)}) {
    std::vector<double> sc = scales;
    sc[3] = v;
    bad["initial_states_scale"] = make_tensor("initial_states_scale", DType::f32, {2, 2, 2}, sc);
    EXPECT_NE(err(bad).find("p.npz: tensor 'initial_states_scale': values: element 3 = "), std::string::npos) << v;
    EXPECT_NE(err(bad).find(": a decode scale must be finite and >= 0"), std::string::npos) << v;
  }
  bad = m;
  bad["initial_states"] = make_tensor("initial_states", DType::f32, {2, 2, 2, 2}, codes);
  EXPECT_EQ(err(bad), "p.npz: tensor 'initial_states': dtype: dtype f32 cannot hold the codes of int16_scaled "
                      "(expected i16)");
  bad = m;
  bad["initial_states"].mutable_bytes()[0] = 0x00, bad["initial_states"].mutable_bytes()[1] = 0x80;  // code -32768: no value of the format
  EXPECT_EQ(err(bad), "p.npz: problem field 'initial_state'[0] = nan (nan): inputs must be finite");
  // A scale beside another state format, or without its state, is refused.
  EXPECT_EQ(error_of([&] { problem_from_tensors(m, "p.npz", ProblemFileOptions{}); }),
            "p.npz: tensor 'initial_states_scale': given with the state format fp32, which has no scales (only "
            "int16_scaled has)");
  bad = m;
  bad.erase("initial_states");
  EXPECT_EQ(err(bad), "p.npz: tensor 'initial_states_scale': given without 'initial_states'");

  // Outputs: final_states with final_states_scale; a code -32768 loads as NaN (INVALID, judged).
  TensorMap out;
  out["y"] = make_tensor("y", DType::bf16, {6, 2, 2}, std::vector<double>(24, 0.5));
  out["final_states"] = make_tensor("final_states", DType::i16, {2, 2, 2, 2}, codes);
  out["final_states_scale"] = make_tensor("final_states_scale", DType::f32, {2, 2, 2}, scales);
  out["final_states"].mutable_bytes()[2] = 0x00, out["final_states"].mutable_bytes()[3] = 0x80;
  const KernelOutputs k = outputs_from_tensors(out, "out.npz", p);
  EXPECT_TRUE(std::isnan(k.final_states[1]));
  EXPECT_EQ(k.final_states[15], 32767.0f / 128);
  out.erase("final_states_scale");
  EXPECT_EQ(error_of([&] { outputs_from_tensors(out, "out.npz", p); }),
            "out.npz: tensor 'final_states_scale': missing (the state format int16_scaled needs the decode scale of "
            "every row of 'final_states': [S, H, P] or [S, H, P, 1])");
  EXPECT_THROW(problem_tensors(p), std::invalid_argument) << "codes and scales are the kernel's to write";
}

TEST(ProblemFile, ProblemsAndOutputsRoundTripThroughBothFileKinds) {
  TempDir dir;
  ProblemFileOptions o;
  o.formats = Formats{Format::bf16, Format::fp16, Format::bf16};
  o.dt_softplus = true;
  o.dt_limit_lo = 0.0f;
  TensorMap src = small_problem(false);
  src["initial_states"] = make_tensor("initial_states", DType::f16, {2, 2, 2, 2}, std::vector<double>(16, -0.75));
  src["dt_bias"] = make_tensor("dt_bias", DType::f32, {2}, {0.5, -0.5});
  const Problem p = problem_from_tensors(src, "src", o);
  KernelOutputs out;
  out.y = std::vector<float>(24, 0.25f);
  out.y.set(5, NAN);
  out.final_states = std::vector<float>(16, 0x1p-24f);  // fp16 min subnormal
  for (const char* name : {"rt.npz", "rt.safetensors"}) {
    const std::string path = dir.file(name);
    TensorMap all = problem_tensors(p);
    all.merge(output_tensors(out, p));
    name[3] == 'n' ? save_npz(path, all) : save_safetensors(path, all);
    const Problem back = load_problem_file(path, o);
    EXPECT_EQ(back.shape.cu_seqlens, p.shape.cu_seqlens) << name;
    EXPECT_EQ(back.x, p.x) << name;
    EXPECT_EQ(back.dt, p.dt) << name;
    EXPECT_EQ(back.A, p.A) << name;
    EXPECT_EQ(back.B, p.B) << name;
    EXPECT_EQ(back.C, p.C) << name;
    EXPECT_EQ(back.z, p.z) << name;
    EXPECT_EQ(back.D, p.D) << name;
    EXPECT_EQ(back.dt_bias, p.dt_bias) << name;
    EXPECT_EQ(back.initial_state, p.initial_state) << name;
    const KernelOutputs ob = load_outputs_file(path, back);
    EXPECT_TRUE(std::isnan(ob.y[5])) << name;
    EXPECT_EQ(ob.y[0], 0.25f) << name;
    EXPECT_EQ(ob.final_states, out.final_states) << name;
  }
}

}  // namespace
}  // namespace ssmv::tensor_file
