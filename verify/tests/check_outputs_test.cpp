// `ssmv check`'s judge on external kernels' dumps: outputs of a kernel run elsewhere, saved
// to tensor files and read back, judged under a bundled contract. The "external" kernels
// here are the bundled twins driven the way a foreign kernel would be: SSU launched once
// per token (the state stored in the state format between tokens — the sequential family
// as `check` reads it), and chunk_scan. A perturbation of one element by a multiple of its
// bound must be caught as a VIOLATION at that element.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <filesystem>

#include "fast/chunk_scan/chunk_scan.h"
#include "fast/ssu/ssu.h"
#include "verify/contracts/contract_json.h"
#include "verify/judge/exact_bounds.h"
#include "verify/bound/chunked_bound.h"
#include "verify/bound/sequential_bound.h"
#include "verify/judge/external_check.h"
#include "verify/judge/handoff.h"
#include "verify/judge/worst_sources.h"
#include "verify/judge/problem_slice.h"
#include "spec/realistic_problem.h"
#include "verify/tensor_file/problem_file.h"
#include "verify/tensor_file/tensor_file.h"

namespace ssmv::verify {
namespace {

// One sequence decoded token by token: each launch reads the state stored by the previous
// one (state format) and stores its own.
void decode_token_by_token(const Problem& p, std::vector<float>& y, std::vector<float>& final_state) {
  const Shape& s = p.shape;
  ASSERT_EQ(s.num_sequences(), 1);
  const int64_t per = s.H * s.P * s.N, T = s.num_tokens();
  DecodeProblem d;
  d.slots = 1;
  d.state_pool = p.has_initial_state() ? p.initial_state : std::vector<float>(per, 0.0f);
  d.slot_in = {0};
  y.clear();
  for (int64_t t = 0; t < T; ++t) {
    d.problem = slice_tokens(p, {t}, {t + 1});
    d.problem.initial_state.clear();  // the state comes from the pool
    const ssu::Result r = ssu::run(d, Device::twin);
    for (Bits b : r.y) y.push_back(float(decode(p.formats.output, b)));
    for (int64_t i = 0; i < per; ++i) d.state_pool[i] = float(decode(p.formats.state, r.state_pool[i]));
  }
  final_state = d.state_pool;
}

Problem problem(Format state) {
  return realistic_problem(Shape{{0, 23}, 2, 4, 16, 1}, Formats{Format::bf16, state, Format::fp32}, 77);
}

class CheckOutputs : public ::testing::TestWithParam<Format> {};

TEST_P(CheckOutputs, SsuLaunchedPerTokenIsWithinTheSequentialContract) {
  const Problem p = problem(GetParam());
  std::vector<float> y, final_state;
  decode_token_by_token(p, y, final_state);
  const KernelCheck kc = check_outputs(p, contract_preset("ssu", 0), "ssu", y, final_state);
  ASSERT_EQ(kc.tensors.size(), 2u);
  EXPECT_TRUE(kc.ok()) << "y usage " << kc.tensors[0].max_bound_usage << ", state usage "
                       << kc.tensors[1].max_bound_usage;
  // Not vacuous: the fp32 outputs are not all exact, so the bound was exercised.
  EXPECT_GT(kc.tensors[0].count(Verdict::within_contract), 0);
}

TEST_P(CheckOutputs, PerturbedElementIsAViolationAtThatElement) {
  const Problem p = problem(GetParam());
  std::vector<float> y, final_state;
  decode_token_by_token(p, y, final_state);
  const Contract c = contract_preset("ssu", 0);
  const KernelCheck clean = check_outputs(p, c, "ssu", y, final_state);
  // Move y[17] by 1% of its value (at least 1e-2): with fp32 outputs every element's bound
  // is below ~1e-5 relative to the magnitudes involved (the clean check's usage is ≤ 1),
  // so this is far outside it — and only this element moves.
  const int64_t i = 17;
  y[i] = y[i] + std::max(1e-2f, std::fabs(y[i]) * 1e-2f);
  const KernelCheck bad = check_outputs(p, c, "ssu", y, final_state);
  ASSERT_TRUE(clean.ok());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.tensors[0].count(Verdict::violation), 1);
  EXPECT_EQ(bad.tensors[0].worst.index, i);
  EXPECT_GT(bad.tensors[0].max_bound_usage, 1.0);
}

void expect_same_difference(const DifferenceAt& a, const DifferenceAt& b, const char* what) {
  EXPECT_EQ(a.index, b.index) << what;
  EXPECT_EQ(a.coords, b.coords) << what;
  EXPECT_EQ(a.value, b.value) << what;
}

// Every field of two reports equal (the per-element vectors only when `elements`).
void expect_same_report(const TensorReport& a, const TensorReport& b, bool elements) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.elements, b.elements);
  EXPECT_EQ(a.counts, b.counts) << a.name;
  EXPECT_EQ(a.ulp_p50, b.ulp_p50) << a.name;
  EXPECT_EQ(a.ulp_p99, b.ulp_p99) << a.name;
  EXPECT_EQ(a.ulp_max, b.ulp_max) << a.name;
  EXPECT_EQ(a.max_bound_usage, b.max_bound_usage) << a.name;
  EXPECT_EQ(a.worst.index, b.worst.index) << a.name;
  EXPECT_EQ(a.worst.coords, b.worst.coords) << a.name;
  EXPECT_EQ(a.worst.computed, b.worst.computed) << a.name;
  EXPECT_EQ(a.worst.exact_rounded, b.worst.exact_rounded) << a.name;
  EXPECT_EQ(a.worst.exact, b.worst.exact) << a.name;
  EXPECT_EQ(a.worst.exact_decimal, b.worst.exact_decimal) << a.name;
  EXPECT_EQ(a.worst.bound, b.worst.bound) << a.name;
  EXPECT_EQ(a.worst.judgement.bound_usage, b.worst.judgement.bound_usage) << a.name;
  expect_same_difference(a.max_abs_difference, b.max_abs_difference, "abs");
  expect_same_difference(a.max_rel_difference, b.max_rel_difference, "rel");
  expect_same_difference(a.max_err_over_scale, b.max_err_over_scale, "over scale");
  expect_same_difference(a.max_ulps_at_scale, b.max_ulps_at_scale, "ulps at scale");
  ASSERT_EQ(a.worst_bound_sources.size(), b.worst_bound_sources.size()) << a.name;
  for (size_t k = 0; k < a.worst_bound_sources.size(); ++k) {
    EXPECT_EQ(a.worst_bound_sources[k].label, b.worst_bound_sources[k].label) << a.name;
    EXPECT_EQ(a.worst_bound_sources[k].share, b.worst_bound_sources[k].share) << a.name;
  }
  if (elements) {
    EXPECT_EQ(a.computed, b.computed) << a.name;
    EXPECT_EQ(a.exact_nearest, b.exact_nearest) << a.name;
    EXPECT_EQ(a.bounds, b.bounds) << a.name;
    EXPECT_EQ(a.scales, b.scales) << a.name;
  } else {
    EXPECT_TRUE(a.computed.empty() && a.exact_nearest.empty() && a.bounds.empty() && a.scales.empty());
  }
}

// The streamed check (no exact value and no bound kept per element: each pair's bound
// stepped as the reference hands its y over, outputs judged as worker threads deliver
// them, in any order) gives the report of bounding and judging compute()'s kept result in
// flat order — every field, the bounds bit for bit and the worst elements' bound sources
// included — with 1 and 3 threads, with and without the per-element vectors. Three
// sequences, z, D, dt_bias, softplus and initial states; outputs with a NaN (the worst y is
// that invalid element) and without (the worst y is the largest bound usage).
TEST_P(CheckOutputs, StreamedJudgementEqualsJudgingTheKeptResult) {
  const Shape shape{{0, 9, 23, 30}, 3, 4, 16, 1};
  const Problem p = realistic_problem(shape, Formats{Format::bf16, GetParam(), Format::fp32}, 79);
  ASSERT_TRUE(p.has_z() && p.has_D() && p.has_dt_bias() && p.dt_softplus && p.has_initial_state());
  const ref::ExactResult exact = ref::compute(p);
  const Contract c = contract_preset("ssu", 0);
  const bound::SequentialInput in = sequential_input_for(p, c, exact, /*tokens_per_launch=*/1);
  const bound::SequentialBounds b = bound::sequential_bounds(in);
  std::vector<float> final_state(exact.final_state.size());
  for (size_t i = 0; i < final_state.size(); ++i) {
    final_state[i] = float(round_value(GetParam(), exact.final_state.nearest[i]));
  }
  for (bool with_nan : {true, false}) {
    // Any outputs will do: the exact values' rounding with a few elements moved.
    std::vector<float> y(exact.y.size());
    for (size_t i = 0; i < y.size(); ++i) y[i] = float(exact.y.nearest[i]) * (i % 7 == 0 ? 1.001f : 1.0f);
    if (with_nan) y[5] = NAN;
    TensorReport ky = judge_tensor("y", p.formats.output, format_bits(p.formats.output, y), exact.y, b.y, y_layout(p));
    TensorReport ks = judge_tensor("final_state", p.formats.state, format_bits(p.formats.state, final_state),
                                   exact.final_state, b.stored_state, state_layout(p, int64_t(final_state.size())));
    attribute_worst(ky, in, bound::BoundOf::y, ky.worst.index);
    attribute_worst(ks, in, bound::BoundOf::stored_state, ks.worst.index);
    ASSERT_FALSE(ky.worst_bound_sources.empty());
    ASSERT_FALSE(ks.worst_bound_sources.empty());
    EXPECT_EQ(ky.worst.index == 5, with_nan);
    for (int threads : {1, 3}) {
      ref::set_default_threads(threads);
      for (ElementDetail d : {ElementDetail::elements, ElementDetail::summary}) {
        const KernelCheck kc = check_outputs(p, c, "ssu", y, final_state, d);
        ASSERT_EQ(kc.tensors.size(), 2u);
        expect_same_report(kc.tensors[0], ky, d == ElementDetail::elements);
        expect_same_report(kc.tensors[1], ks, d == ElementDetail::elements);
        EXPECT_EQ(kc.tensors[0].count(Verdict::invalid), with_nan ? 1 : 0);
        EXPECT_GT(kc.tensors[0].count(Verdict::violation), 0);
      }
    }
  }
  ref::set_default_threads(0);
}

// The streamed chunked check (bound up to y_before_dx, finished per element as the
// reference hands y over) gives the report of bounding and judging compute()'s whole result:
// every field, the bounds bit for bit and the worst elements' bound sources, with 1 and 3
// threads, with and without the per-element vectors; two sequences cut into several chunks,
// z, D, dt_bias, softplus and initial states.
TEST_P(CheckOutputs, StreamedChunkedJudgementEqualsJudgingTheKeptResult) {
  const Shape shape{{0, 70, 150}, 2, 4, 16, 1};
  const Problem p = realistic_problem(shape, Formats{Format::bf16, GetParam(), Format::fp32}, 81);
  ASSERT_TRUE(p.has_z() && p.has_D() && p.has_dt_bias() && p.dt_softplus && p.has_initial_state());
  const ref::ExactResult exact = ref::compute(p);
  const Contract c = contract_preset("chunk_scan.production", 64);
  const bound::ChunkedInput in = chunked_input_for(p, c, exact);
  const bound::ChunkedBounds b = bound::chunked_bounds(in);
  std::vector<float> final_state(exact.final_state.size());
  for (size_t i = 0; i < final_state.size(); ++i) {
    final_state[i] = float(round_value(GetParam(), exact.final_state.nearest[i])) * (i % 5 == 0 ? 1.0001f : 1.0f);
  }
  std::vector<float> y(exact.y.size());
  for (size_t i = 0; i < y.size(); ++i) y[i] = float(exact.y.nearest[i]) * (i % 7 == 0 ? 1.001f : 1.0f);
  TensorReport ky = judge_tensor("y", p.formats.output, format_bits(p.formats.output, y), exact.y, b.y, y_layout(p));
  TensorReport ks = judge_tensor("final_state", p.formats.state, format_bits(p.formats.state, final_state),
                                 exact.final_state, b.final_state, state_layout(p, int64_t(final_state.size())));
  attribute_worst(ky, p, c, exact, bound::BoundOf::y);
  attribute_worst(ks, p, c, exact, bound::BoundOf::final_state);
  ASSERT_FALSE(ky.worst_bound_sources.empty());
  ASSERT_FALSE(ks.worst_bound_sources.empty());
  for (int threads : {1, 3}) {
    ref::set_default_threads(threads);
    for (ElementDetail d : {ElementDetail::elements, ElementDetail::summary}) {
      const KernelCheck kc = check_outputs(p, c, "chunk_scan", y, final_state, d);
      ASSERT_EQ(kc.tensors.size(), 2u);
      expect_same_report(kc.tensors[0], ky, d == ElementDetail::elements);
      expect_same_report(kc.tensors[1], ks, d == ElementDetail::elements);
      EXPECT_GT(kc.tensors[0].count(Verdict::violation), 0);
    }
  }
  ref::set_default_threads(0);
}

// The chunked bound beside the reference (threads ≥ S·H + H: the bound on its own thread with
// the threads the pairs leave, its rows handed to the judging through bound::RowHandover) gives
// the report of the bound run first: every field, the sharp weights and the elements. Sequences
// of 300 and 217 tokens in 16-token chunks, so that the bound waits for room (its lead is one
// chunk) and the judging for rows.
TEST(CheckOutputsBoundBeside, GivesTheReportOfTheBoundRunFirst) {
  const Shape shape{{0, 300, 517}, 2, 4, 8, 1};
  const Problem p = realistic_problem(shape, Formats{Format::bf16, Format::fp32, Format::fp32}, 83);
  const ref::ExactResult exact = ref::compute(p);
  const Contract c = contract_preset("chunk_scan.production", 16);
  std::vector<float> final_state(exact.final_state.size());
  for (size_t i = 0; i < final_state.size(); ++i) final_state[i] = float(exact.final_state.nearest[i]);
  std::vector<float> y(exact.y.size());
  for (size_t i = 0; i < y.size(); ++i) y[i] = float(exact.y.nearest[i]) * (i % 7 == 0 ? 1.001f : 1.0f);
  for (ElementDetail d : {ElementDetail::elements, ElementDetail::sharp_weights}) {
    ref::set_default_threads(1);  // bound first
    const KernelCheck first = check_outputs(p, c, "chunk_scan", y, final_state, d);
    for (int threads : {6, 11}) {  // S·H + H = 6
      ref::set_default_threads(threads);
      const KernelCheck beside = check_outputs(p, c, "chunk_scan", y, final_state, d);
      ASSERT_EQ(beside.tensors.size(), 2u);
      for (size_t k = 0; k < 2; ++k) {
        expect_same_report(beside.tensors[k], first.tensors[k], d == ElementDetail::elements);
        EXPECT_TRUE(beside.tensors[k].sharp_weights == first.tensors[k].sharp_weights);
      }
      EXPECT_GT(beside.tensors[0].count(Verdict::violation), 0);
    }
  }
  ref::set_default_threads(0);
}

// A bound that refuses the problem (A > 0: bound/chunked_bound.h) beside the reference fails
// the check with the bound's own error, as when it runs first, not with a judging it stopped.
TEST(CheckOutputsBoundBeside, RefusingBoundFailsTheCheckWithItsOwnError) {
  Problem p = realistic_problem(Shape{{0, 64}, 2, 4, 8, 1}, Formats{Format::bf16, Format::fp32, Format::fp32}, 85);
  p.A[1] = 0.25;
  const Contract c = contract_preset("chunk_scan.production", 16);
  const std::vector<float> y(size_t(64 * 2 * 4), 0.0f), final_state(size_t(2 * 4 * 8), 0.0f);
  std::vector<std::string> errors;
  for (int threads : {1, 4}) {  // S·H + H = 4
    ref::set_default_threads(threads);
    try {
      check_outputs(p, c, "chunk_scan", y, final_state, ElementDetail::summary);
      ADD_FAILURE() << "accepted with " << threads << " threads";
    } catch (const std::invalid_argument& e) {
      errors.emplace_back(e.what());
    }
  }
  ref::set_default_threads(0);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(errors[0].find("A[1] = "), std::string::npos) << errors[0];
  EXPECT_EQ(errors[1], errors[0]);
}

// The streamed hand-off check (verify/judge/handoff.h HandoffStream) gives the reports of
// bounding and judging the kept result (handoff_bounds over ref::compute), element for
// element, attribution included, for any thread count: one sequence split mid-chunk, one
// decoded whole (prefill 0) and one through the chunked kernel alone (prefill = its length).
TEST_P(CheckOutputs, StreamedHandoffJudgementEqualsJudgingTheKeptResult) {
  const Shape shape{{0, 70, 110, 150}, 2, 4, 16, 1};
  const Problem p = realistic_problem(shape, Formats{Format::bf16, GetParam(), Format::fp32}, 83);
  const std::vector<int64_t> prefill{45, 0, 40};
  const Contract chunked = contract_preset("chunk_scan.production", 32), decode = contract_preset("ssu", 0);
  const ref::ExactResult exact = ref::compute(p, handoff_reference_options(p, prefill));
  const HandoffBounds b = handoff_bounds(p, prefill, chunked, decode, true, exact);
  std::vector<float> final_state(exact.final_state.size());
  for (size_t i = 0; i < final_state.size(); ++i) {
    final_state[i] = float(round_value(GetParam(), exact.final_state.nearest[i])) * (i % 5 == 0 ? 1.0001f : 1.0f);
  }
  std::vector<float> y(exact.y.size());
  for (size_t i = 0; i < y.size(); ++i) y[i] = float(exact.y.nearest[i]) * (i % 7 == 0 ? 1.001f : 1.0f);
  KernelCheck kept{"handoff", "", "external", {}};
  kept.tensors.push_back(judge_tensor("y", p.formats.output, format_bits(p.formats.output, y), exact.y, b.y, y_layout(p)));
  kept.tensors.push_back(judge_tensor("final_state", p.formats.state, format_bits(p.formats.state, final_state),
                                      exact.final_state, b.final_state, state_layout(p, int64_t(final_state.size()))));
  attribute_handoff(kept, p, prefill, chunked, decode, true, exact);
  ASSERT_FALSE(kept.tensors[0].worst_bound_sources.empty());
  ASSERT_FALSE(kept.tensors[1].worst_bound_sources.empty());
  for (int threads : {1, 3}) {
    ref::set_default_threads(threads);
    for (ElementDetail d : {ElementDetail::elements, ElementDetail::summary}) {
      const KernelCheck kc = check_handoff_outputs(p, prefill, chunked, decode, "handoff", y, final_state, d);
      ASSERT_EQ(kc.tensors.size(), 2u);
      expect_same_report(kc.tensors[0], kept.tensors[0], d == ElementDetail::elements);
      expect_same_report(kc.tensors[1], kept.tensors[1], d == ElementDetail::elements);
      EXPECT_GT(kc.tensors[0].count(Verdict::violation), 0);
    }
  }
  ref::set_default_threads(0);
}

// compute_scalars() gives compute()'s δ and decay bit for bit, through its per-pair entries.
TEST(CheckOutputsScalars, ComputeScalarsEqualsCompute) {
  const Problem p = problem(Format::fp32);
  const ref::ExactResult r = ref::compute(p);
  const ref::ExactScalars s = ref::compute_scalars(p);
  ASSERT_EQ(s.pairs(), r.delta.size());
  const TokenHeadColumn delta = s.delta_column(), decay = s.decay_column();
  for (size_t k = 0; k < s.pairs(); ++k) {
    EXPECT_EQ(std::bit_cast<uint64_t>(delta[k]), std::bit_cast<uint64_t>(r.delta[k])) << "pair " << k;
    EXPECT_EQ(std::bit_cast<uint64_t>(decay[k]), std::bit_cast<uint64_t>(r.decay[k])) << "pair " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(StateFormats, CheckOutputs, ::testing::Values(Format::fp32, Format::bf16),
                         [](const auto& info) { return std::string(format_name(info.param)); });

TEST(CheckOutputsFiles, ChunkScanDumpRoundTripsThroughNpzAndIsWithinContract) {
  const Problem p = realistic_problem(Shape{{0, 70, 75}, 2, 4, 16, 1},
                                      Formats{Format::bf16, Format::fp32, Format::bf16}, 78);
  chunk_scan::Config cfg;
  cfg.chunk_size = 64;
  const chunk_scan::Result r = chunk_scan::run(p, Device::twin, cfg);
  const auto dir = std::filesystem::temp_directory_path() / "ssmv_check_outputs_test";
  std::filesystem::create_directories(dir);
  const std::string problem_path = (dir / "problem.npz").string(), outputs_path = (dir / "outputs.npz").string();
  tensor_file::save_npz(problem_path, tensor_file::problem_tensors(p));
  tensor_file::save_npz(outputs_path, tensor_file::output_tensors({r.y, r.final_state}, p));

  tensor_file::ProblemFileOptions o;
  o.formats = p.formats;
  o.dt_softplus = p.dt_softplus;
  const Problem back = tensor_file::load_problem_file(problem_path, o);
  const tensor_file::KernelOutputs out = tensor_file::load_outputs_file(outputs_path, back);
  const KernelCheck kc = check_outputs(back, contract_preset("chunk_scan.production", 64), "chunk_scan",
                                       out.y, out.final_states);
  EXPECT_TRUE(kc.ok());
  EXPECT_EQ(kc.tensors.size(), 2u);
  std::filesystem::remove_all(dir);
}

TEST(CheckOutputsFiles, WrongSizeIsRejected) {
  const Problem p = problem(Format::fp32);
  EXPECT_THROW(check_outputs(p, contract_preset("ssu", 0), "ssu", std::vector<float>(3, 0.0f), {}),
               ProblemError);
}

}  // namespace
}  // namespace ssmv::verify
