// The sharp verdict (verify/sharp/sharp_verdict.h): the bundled twins — correct kernels of
// their contracts — are never SUSPICIOUS; outputs with one extra rounding are, with that
// rounding named first; the verdict is deterministic and thread-count invariant (a unit's runs
// side by side equal its runs alone); options and inapplicable dumps are refused or marked as
// the header says.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "fast/chunk_scan/chunk_scan.h"
#include "fast/chunk_scan/contract.h"
#include "fast/ssu/contract.h"
#include "fast/ssu/ssu.h"
#include "spec/format.h"
#include "spec/realistic_problem.h"
#include "verify/judge/external_check.h"
#include "verify/judge/sharp_weight.h"
#include "verify/sharp/candidates.h"
#include "verify/sharp/emulation.h"
#include "verify/sharp/sharp_verdict.h"

namespace ssmv::sharp {
namespace {

using verify::ExternalKernel;
using verify::KernelCheck;

std::vector<float> decoded(Format f, const std::vector<Bits>& bits) {
  std::vector<float> out(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) out[i] = float(decode(f, bits[i]));
  return out;
}

struct Dump {
  Problem problem;
  ExternalKernel kernel;
  std::vector<float> y, final_states;
};

// chunk_scan's twin on 1 × 768 tokens (three chunks of 256), H = 2, P = 32, N = 64.
Dump chunk_scan_dump(chunk_scan::ContractKind kind, uint64_t seed = 11) {
  Dump d;
  d.problem = realistic_problem(Shape{{0, 768}, 2, 32, 64, 1}, Formats{}, seed);
  chunk_scan::Config cfg;
  cfg.contract = kind;
  cfg.chunk_size = 256;
  const chunk_scan::Result r = chunk_scan::run(d.problem, Device::twin, cfg);
  d.kernel.family = "chunk_scan";
  d.kernel.contract = chunk_scan::contract(kind, 256);
  d.y = r.y;
  d.final_states = r.final_state;
  return d;
}

// SSU's twin: 16 requests of 16 tokens (one launch), H = 2, P = 32, N = 64.
Dump ssu_dump(Format state, uint64_t seed = 12) {
  Dump d;
  Shape s{{0}, 2, 32, 64, 1};
  for (int r = 0; r < 16; ++r) s.cu_seqlens.push_back(s.cu_seqlens.back() + 16);
  d.problem = realistic_problem(s, Formats{Format::bf16, state, Format::bf16}, seed);
  const ssu::Result r = ssu::run(one_slot_per_sequence(d.problem), Device::twin);
  d.kernel.family = "ssu";
  d.kernel.contract = ssu::contract();
  d.kernel.tokens_per_launch = 16;
  d.y = decoded(d.problem.formats.output, r.y);
  d.final_states = decoded(d.problem.formats.state, r.state_pool);
  return d;
}

// As ssmv check judges a dump: the check keeps only the bounds per element.
KernelCheck judged(const Dump& d, const SharpOptions& o = {}) {
  KernelCheck kc = verify::check_external(d.problem, d.kernel, d.y, d.final_states, verify::ElementDetail::sharp_weights);
  sharp_verdicts(d.problem, d.kernel, kc, d.y, d.final_states, o);
  return kc;
}

// As ssmv check judges it with the sharp verdict: the verdict's first pass beside the check,
// reading each row's weights as the judging writes them and giving them back behind its
// readers (SharpBeside with the check made again for a flagged tensor's later passes);
// `released` (optional) gets whether pages of the y weights went back.
KernelCheck judged_beside(const Dump& d, const SharpOptions& o = {}, bool* released = nullptr) {
  const FormatValues y(d.y), final_states(d.final_states);  // SharpBeside keeps references
  verify::JudgingFeed feed(d.problem.shape.num_sequences() * d.problem.shape.H);
  SharpBeside sharp(d.problem, d.kernel, y, final_states, o, feed, [&] {
    return verify::check_external(d.problem, d.kernel, y, final_states, verify::ElementDetail::sharp_weights);
  });
  KernelCheck kc = verify::check_external(d.problem, d.kernel, y, final_states, verify::ElementDetail::sharp_weights,
                                          nullptr, nullptr, &feed);
  sharp.finish(kc);
  if (released) *released = feed.released();
  return kc;
}

// The outputs the emulation gives under `e`: a kernel with exactly that arithmetic.
void emulate_into(Dump& d, const Emulation& e) {
  const Shape& sh = d.problem.shape;
  UnitOutputs out;
  for (int64_t s = 0; s < sh.num_sequences(); ++s) {
    for (int64_t h = 0; h < sh.H; ++h) {
      emulate_unit(d.problem, d.kernel.contract, e, Noise{}, s, h, out);
      for (int64_t j = 0; j < sh.seq_len(s); ++j) {
        for (int64_t p = 0; p < sh.P; ++p) {
          d.y[d.problem.x_index(sh.cu_seqlens[s] + j, h, p)] = float(out.y[j * sh.P + p]);
        }
      }
      for (int64_t i = 0; i < sh.P * sh.N; ++i) d.final_states[d.problem.state_index(s, h, 0, 0) + i] = float(out.state[i]);
    }
  }
}

// SSU on two sequences of 144 and 72 tokens, launches of 24 (so both sequences and some
// launches end mid-slab: slabs of 64, lockstep_rows), H = 2, P = 32, N = 64, fp32 state; its
// outputs those of the declared emulation (emulate_into sets them where a test needs a kernel).
Dump ssu_long_dump(uint64_t seed = 13) {
  Dump d;
  d.problem = realistic_problem(Shape{{0, 144, 216}, 2, 32, 64, 1}, Formats{Format::bf16, Format::fp32, Format::bf16},
                                seed);
  d.kernel.family = "ssu";
  d.kernel.contract = ssu::contract();
  d.kernel.tokens_per_launch = 24;
  const Shape& sh = d.problem.shape;
  d.y.assign(size_t(sh.num_tokens() * sh.H * sh.P), 0.0f);
  d.final_states.assign(size_t(sh.num_sequences() * sh.H * sh.P * sh.N), 0.0f);
  emulate_into(d, declared_emulation(d.kernel.contract, d.problem.formats, d.kernel.tokens_per_launch));
  return d;
}

const verify::SharpResult& sharp_of(const KernelCheck& kc, const std::string& tensor) {
  for (const verify::TensorReport& t : kc.tensors) {
    if (t.name == tensor) return t.sharp;
  }
  throw std::runtime_error("no tensor " + tensor);
}

// Every figure of both tensors' verdicts the same bits (a defect that drops a term can leave a
// residual NaN, which == would not match).
void expect_same_figures(const KernelCheck& a, const KernelCheck& b, const std::string& what) {
  const auto bits = [](double v) { return std::bit_cast<uint64_t>(v); };
  for (const std::string tensor : {"y", "final_state"}) {
    const verify::SharpResult &x = sharp_of(a, tensor), &y = sharp_of(b, tensor);
    ASSERT_TRUE(x.evaluated) << what << " " << tensor << ": " << x.why_not;
    EXPECT_EQ(x.evaluated, y.evaluated) << what << " " << tensor;
    EXPECT_EQ(x.suspicious, y.suspicious) << what << " " << tensor;
    EXPECT_EQ(x.allowed, y.allowed) << what << " " << tensor;
    for (auto slice : {&verify::SharpResult::whole, &verify::SharpResult::worst}) {
      EXPECT_EQ((x.*slice).head, (y.*slice).head) << what << " " << tensor;
      EXPECT_EQ((x.*slice).elements, (y.*slice).elements) << what << " " << tensor;
      EXPECT_EQ(bits((x.*slice).observed), bits((y.*slice).observed)) << what << " " << tensor;
      EXPECT_EQ(bits((x.*slice).null_mean), bits((y.*slice).null_mean)) << what << " " << tensor;
      EXPECT_EQ(bits((x.*slice).null_sd), bits((y.*slice).null_sd)) << what << " " << tensor;
    }
    EXPECT_EQ(bits(x.p_value_bound), bits(y.p_value_bound)) << what << " " << tensor;
    ASSERT_EQ(x.attribution.size(), y.attribution.size()) << what << " " << tensor;
    for (size_t i = 0; i < x.attribution.size(); ++i) {
      EXPECT_EQ(x.attribution[i].name, y.attribution[i].name) << what << " " << tensor;
      EXPECT_EQ(bits(x.attribution[i].residual), bits(y.attribution[i].residual)) << what << " " << tensor;
    }
  }
}

void expect_not_suspicious(const KernelCheck& kc, const std::string& what) {
  for (const std::string tensor : {"y", "final_state"}) {
    const verify::SharpResult& s = sharp_of(kc, tensor);
    ASSERT_TRUE(s.evaluated) << what << " " << tensor << ": " << s.why_not;
    EXPECT_FALSE(s.suspicious) << what << " " << tensor << ": " << s.text();
    EXPECT_GT(s.whole.null_mean, 0) << what << " " << tensor << ": the noise moved nothing (a vacuous null)";
    EXPECT_GT(s.whole.elements, 0) << what << " " << tensor;
  }
}

TEST(SharpVerdict, ChunkScanTwinIsNotSuspiciousUnderBothContracts) {
  for (auto kind : {chunk_scan::ContractKind::production, chunk_scan::ContractKind::fp32}) {
    const KernelCheck kc = judged(chunk_scan_dump(kind));
    ASSERT_TRUE(kc.ok());
    expect_not_suspicious(kc, kc.contract);
  }
}

TEST(SharpVerdict, SsuTwinIsNotSuspiciousForEveryStateFormat) {
  for (Format f : {Format::fp32, Format::bf16, Format::fp16}) {
    const KernelCheck kc = judged(ssu_dump(f));
    ASSERT_TRUE(kc.ok()) << format_name(f);
    expect_not_suspicious(kc, std::string("ssu, state ") + std::string(format_name(f)));
  }
}

// A kernel that rounds its running inter-chunk state to bf16 once per chunk — the bug that
// stays WITHIN_CONTRACT at production sizes — is SUSPICIOUS, and attribution names it.
TEST(SharpVerdict, RunningStateRoundedPerChunkIsSuspiciousAndNamed) {
  Dump d = chunk_scan_dump(chunk_scan::ContractKind::production);
  Emulation e = declared_emulation(d.kernel.contract, d.problem.formats, 1);
  e.at(Site::running_state) = Format::bf16;
  emulate_into(d, e);
  const KernelCheck kc = judged(d);
  const verify::SharpResult& s = sharp_of(kc, "final_state");
  ASSERT_TRUE(s.evaluated);
  EXPECT_TRUE(s.suspicious) << s.text();
  ASSERT_FALSE(s.attribution.empty());
  EXPECT_EQ(s.attribution[0].name, "running_state rounded to bf16") << s.text();
  EXPECT_TRUE(s.attribution[0].consistent) << s.text();
}

// Outputs of the declared emulation itself (a kernel of exactly the contract's model) and
// of the emulation without the optional roundings (a kernel rounding less than declared).
TEST(SharpVerdict, AllowedConfigurationsAreNotSuspicious) {
  Dump d = chunk_scan_dump(chunk_scan::ContractKind::production);
  for (const Configuration& c : allowed_configurations(d.kernel.contract, d.problem, 1)) {
    emulate_into(d, c.emulation);
    const KernelCheck kc = judged(d);
    for (const std::string tensor : {"y", "final_state"}) {
      const verify::SharpResult& s = sharp_of(kc, tensor);
      EXPECT_FALSE(s.suspicious) << c.name << " " << tensor << ": " << s.text();
    }
  }
}

TEST(SharpVerdict, SsuStateRoundedEveryTokenIsSuspicious) {
  Dump d = ssu_dump(Format::fp32);
  Emulation e = declared_emulation(d.kernel.contract, d.problem.formats, d.kernel.tokens_per_launch);
  e.at(Site::running_state) = Format::bf16;
  emulate_into(d, e);
  const KernelCheck kc = judged(d);
  const verify::SharpResult& s = sharp_of(kc, "final_state");
  EXPECT_TRUE(s.suspicious || kc.tensors[1].count(verify::Verdict::violation) > 0) << s.text();
  ASSERT_FALSE(s.attribution.empty());
  EXPECT_EQ(s.attribution[0].name, "running_state rounded to bf16") << s.text();
}

TEST(SharpVerdict, SameFiguresForAnyThreadCountAndRun) {
  const Dump d = chunk_scan_dump(chunk_scan::ContractKind::production);
  SharpOptions one, two;
  one.threads = 1;
  two.threads = 2;
  const KernelCheck a = judged(d, one), b = judged(d, two), c = judged(d, two);
  for (const std::string tensor : {"y", "final_state"}) {
    EXPECT_EQ(sharp_of(a, tensor).whole.observed, sharp_of(b, tensor).whole.observed);
    EXPECT_EQ(sharp_of(a, tensor).whole.null_mean, sharp_of(b, tensor).whole.null_mean);
    EXPECT_EQ(sharp_of(b, tensor).whole.null_sd, sharp_of(c, tensor).whole.null_sd);
  }
}

// Each task of runs holds the declared emulation beside them (sharp_verdict.cpp
// declared_and_monte_carlo): the figures of a sequential dump whose sequences span slabs are the
// same on one worker (one task per unit: 4 units) and on 8 (a task per run and unit, each with a
// declared emulation of its own), every allowed configuration and candidate defect included (a
// running state rounded to bf16 every token is SUSPICIOUS, so both are emulated).
TEST(SharpVerdict, SameFiguresForOneTaskPerUnitAndPerRun) {
  Dump d = ssu_long_dump();
  Emulation e = declared_emulation(d.kernel.contract, d.problem.formats, d.kernel.tokens_per_launch);
  e.at(Site::running_state) = Format::bf16;
  emulate_into(d, e);
  SharpOptions one, eight;
  one.threads = 1;
  eight.threads = 8;
  const KernelCheck a = judged(d, one), b = judged(d, eight);
  expect_same_figures(a, b, "1 and 8 workers");
  EXPECT_TRUE(sharp_of(a, "final_state").suspicious) << sharp_of(a, "final_state").text();
  EXPECT_FALSE(sharp_of(a, "final_state").attribution.empty());
}

// The first pass beside the check (SharpBeside, as ssmv check runs it) reads each weight after
// the judging wrote it and gives the weights back behind its readers: the same figures, bit for
// bit, as the verdict after the check, for a sequential and a chunked dump with a defect (so the
// other allowed configurations and the candidate defects run too, after the check, on the
// weights of the check made again) and a correct one, on 1 and 3 workers.
TEST(SharpVerdict, BesideTheCheckTheSameFiguresAsAfterIt) {
  Dump seq = ssu_long_dump();
  Emulation e = declared_emulation(seq.kernel.contract, seq.problem.formats, seq.kernel.tokens_per_launch);
  e.at(Site::running_state) = Format::bf16;
  emulate_into(seq, e);
  Dump chunked = chunk_scan_dump(chunk_scan::ContractKind::production);
  const Dump correct = chunked;
  Emulation f = declared_emulation(chunked.kernel.contract, chunked.problem.formats, 1);
  f.at(Site::running_state) = Format::bf16;
  emulate_into(chunked, f);
  for (int threads : {1, 3}) {
    SharpOptions o;
    o.threads = threads;
    for (const auto& [name, d] : {std::pair<std::string, const Dump*>{"ssu, state rounded per token", &seq},
                                  {"chunk_scan, state rounded per chunk", &chunked},
                                  {"chunk_scan twin", &correct}}) {
      bool released = false;
      const KernelCheck after = judged(*d, o), beside = judged_beside(*d, o, &released);
      expect_same_figures(after, beside, name + ", " + std::to_string(threads) + " workers");
      // 768 or 216 tokens × 2 heads × 32 rows: 24 or 7 pages of weights, given back as the
      // readers pass them (a flagged tensor's later passes then read the check made again).
      EXPECT_TRUE(released) << name;
    }
  }
  EXPECT_TRUE(sharp_of(judged_beside(chunked), "final_state").suspicious);
}

// A check that throws (here: y of the wrong size) closes its feed unfinished: the first pass
// beside it stops instead of waiting for rows that will never be judged, and the check's error
// is the one that comes out.
TEST(SharpVerdict, BesideACheckThatThrowsTheFirstPassStops) {
  Dump d = chunk_scan_dump(chunk_scan::ContractKind::production);
  d.y.pop_back();
  EXPECT_THROW(judged_beside(d), ProblemError);
}

// emulate_runs (the Monte Carlo runs of a unit side by side, sharing C·Bᵀ) gives each run the
// outputs emulate_unit gives it alone, bit for bit, under both contracts (tensor-core and
// sequential sums), for the declared emulation without noise, and for the declared emulation
// first with runs beside it (the runs' sums' noise modelled on it rather than on a noise-free
// run of their own, docs/sharp-verdicts.md [N3]: the same figures).
TEST(SharpEmulation, RunsSideBySideEqualRunsAlone) {
  for (chunk_scan::ContractKind kind : {chunk_scan::ContractKind::production, chunk_scan::ContractKind::fp32}) {
    const Dump d = chunk_scan_dump(kind);
    const Emulation e = declared_emulation(d.kernel.contract, d.problem.formats, 1);
    for (int mode : {0, 1, 2}) {  // all noisy, all noise-free, the declared one first
      const bool noisy = mode != 1;
      std::vector<Noise> noises;
      for (uint64_t seed : {7u, 8u, 9u}) noises.push_back(Noise{mode == 2 ? seed != 7u : noisy, seed});
      std::vector<UnitOutputs> together(noises.size());
      std::vector<UnitOutputs*> outs;
      for (UnitOutputs& o : together) outs.push_back(&o);
      emulate_runs(d.problem, d.kernel.contract, e, noises, 0, 1, outs);
      for (size_t r = 0; r < noises.size(); ++r) {
        UnitOutputs alone;
        emulate_unit(d.problem, d.kernel.contract, e, noises[r], 0, 1, alone);
        const std::string what = std::string(chunk_scan::contract_kind_name(kind)) + " mode " + std::to_string(mode) +
                                 " run " + std::to_string(r);
        ASSERT_EQ(alone.y.size(), size_t(768 * 32)) << what;
        EXPECT_EQ(together[r].y, alone.y) << what;
        EXPECT_EQ(together[r].state, alone.state) << what;
        if (noisy && r > 0) {
          EXPECT_NE(together[r].y, together[0].y) << what << ": the runs drew the same noise or none";
        }
      }
    }
  }
}

// The sequential family's runs go slab by slab in turn (emulate_runs): each gives the outputs
// emulate_unit gives it alone, bit for bit — its state, streams and draws carried from slab to
// slab — for sequences and launches that end mid-slab, and with a stochastically rounded state
// store, whose draws come between the tokens' own.
TEST(SharpEmulation, SequentialRunsInLockstepEqualRunsAlone) {
  const Dump d = ssu_long_dump();
  ASSERT_EQ(lockstep_rows(d.kernel.contract), 64);
  for (bool stochastic : {false, true}) {
    Emulation e = declared_emulation(d.kernel.contract, d.problem.formats, d.kernel.tokens_per_launch);
    e.stochastic_state = stochastic;
    for (int mode : {0, 1, 2}) {  // all noisy, all noise-free, the declared one first
      std::vector<Noise> noises;
      for (uint64_t seed : {7u, 8u, 9u}) noises.push_back(Noise{mode == 2 ? seed != 7u : mode != 1, seed});
      for (int64_t s : {0, 1}) {
        std::vector<UnitOutputs> together(noises.size());
        std::vector<UnitOutputs*> outs;
        for (UnitOutputs& o : together) outs.push_back(&o);
        emulate_runs(d.problem, d.kernel.contract, e, noises, s, 1, outs);
        for (size_t r = 0; r < noises.size(); ++r) {
          UnitOutputs alone;
          emulate_unit(d.problem, d.kernel.contract, e, noises[r], s, 1, alone);
          const std::string what = std::string(stochastic ? "stochastic" : "nearest") + " mode " +
                                   std::to_string(mode) + " sequence " + std::to_string(s) + " run " +
                                   std::to_string(r);
          ASSERT_EQ(alone.y.size(), size_t(d.problem.shape.seq_len(s) * 32)) << what;
          EXPECT_EQ(together[r].y, alone.y) << what;
          EXPECT_EQ(together[r].state, alone.state) << what;
          if (mode != 1 && r > 0) {  // (the fp32 state: its noise seldom moves a bf16 y)
            EXPECT_NE(together[r].state, together[0].state) << what << ": the runs drew the same noise or none";
          }
        }
      }
    }
  }
}

// The lockstep that the sharp verdict's Monte Carlo runs rely on to read the declared rows from
// a ring of lockstep_rows (sharp_verdict.cpp DeclaredRows): every run hands row j of y after the
// first has handed it and before the first hands row j + lockstep_rows; every run hands each row
// once, in order, and holds no y. In both families, with the declared emulation first and with
// noisy runs only (the chunked family's own noise-free run then goes before the first); a run
// trails the first by exactly lockstep_rows at the start of a whole chunk or slab.
TEST(SharpEmulation, RunsGoInLockstep) {
  std::vector<std::pair<std::string, Dump>> dumps;
  dumps.emplace_back("chunk_scan", chunk_scan_dump(chunk_scan::ContractKind::production));
  dumps.emplace_back("ssu", ssu_long_dump());
  for (const auto& [name, d] : dumps) {
    const Emulation e = declared_emulation(d.kernel.contract, d.problem.formats, d.kernel.tokens_per_launch);
    const int64_t rows = lockstep_rows(d.kernel.contract), len = d.problem.shape.seq_len(0);
    for (bool declared_first : {true, false}) {
      const std::vector<Noise> noises{Noise{!declared_first, 7u}, Noise{true, 8u}, Noise{true, 9u}};
      std::vector<UnitOutputs> outs(noises.size());
      std::vector<UnitOutputs*> ptrs;
      std::vector<int64_t> handed(noises.size(), 0);  // rows handed so far, per run
      int64_t out_of_order = 0, before_first = 0, too_far_behind = 0, most_behind = 0;
      for (size_t r = 0; r < outs.size(); ++r) {
        outs[r].y_row = [&, r](int64_t j, const double*) {
          out_of_order += j != handed[r];
          if (r > 0) {
            before_first += handed[0] <= j;
            too_far_behind += handed[0] > j + rows;
            most_behind = std::max(most_behind, handed[0] - j);
          }
          ++handed[r];
        };
        ptrs.push_back(&outs[r]);
      }
      emulate_runs(d.problem, d.kernel.contract, e, noises, 0, 1, ptrs);
      const std::string what = name + (declared_first ? ", declared first" : ", noisy runs only");
      EXPECT_EQ(out_of_order, 0) << what;
      EXPECT_EQ(before_first, 0) << what;
      EXPECT_EQ(too_far_behind, 0) << what;
      EXPECT_EQ(most_behind, rows) << what;
      for (size_t r = 0; r < outs.size(); ++r) {
        EXPECT_EQ(handed[r], len) << what << " run " << r;
        EXPECT_TRUE(outs[r].y.empty()) << what << " run " << r;
      }
    }
  }
}

// The heads of a group form the same C·Bᵀ sums: units running at once share them through one
// SharedSums (sharp_verdict.cpp, one per pass). Both heads of the dump's one group, on two
// threads at once and then one after the other, give the outputs each gives alone, bit for bit,
// with the declared emulation first and two runs beside it.
TEST(SharpEmulation, HeadsSharingCBSumsEqualHeadsAlone) {
  const Dump d = chunk_scan_dump(chunk_scan::ContractKind::production);
  const Emulation e = declared_emulation(d.kernel.contract, d.problem.formats, 1);
  const std::vector<Noise> noises{Noise{}, Noise{true, 8u}, Noise{true, 9u}};
  const auto run = [&](int64_t h, SharedSums* shared) {
    std::vector<UnitOutputs> outs(noises.size());
    std::vector<UnitOutputs*> ptrs;
    for (UnitOutputs& o : outs) ptrs.push_back(&o);
    emulate_runs(d.problem, d.kernel.contract, e, noises, 0, h, ptrs, shared);
    return outs;
  };
  const std::vector<UnitOutputs> alone0 = run(0, nullptr), alone1 = run(1, nullptr);
  for (bool side_by_side : {true, false}) {
    SharedSums shared;
    std::vector<UnitOutputs> with0, with1;
    if (side_by_side) {
      std::thread other([&] { with1 = run(1, &shared); });
      with0 = run(0, &shared);
      other.join();
    } else {
      with0 = run(0, &shared);
      with1 = run(1, &shared);
    }
    for (size_t r = 0; r < noises.size(); ++r) {
      const std::string what = std::string(side_by_side ? "side by side" : "in turn") + ", run " + std::to_string(r);
      EXPECT_EQ(with0[r].y, alone0[r].y) << what;
      EXPECT_EQ(with0[r].state, alone0[r].state) << what;
      EXPECT_EQ(with1[r].y, alone1[r].y) << what;
      EXPECT_EQ(with1[r].state, alone1[r].state) << what;
    }
  }
  EXPECT_NE(alone0[0].y, alone1[0].y);  // the heads differ: their x and A do
}

// A piece is formed once while a unit holds it, per (sequence, group, piece, noise); one that no
// unit holds is formed again; a make() that throws leaves it to the next.
TEST(SharpEmulation, SharedSumsFormAPieceOnceWhileHeld) {
  SharedSums shared;
  int formed = 0;
  const auto make = [&](SharedSums::Piece& p) {
    ++formed;
    p.acc = {1.0, 2.0, 3.0};
  };
  std::shared_ptr<const SharedSums::Piece> a = shared.get(0, 0, 5, true, make), b = shared.get(0, 0, 5, true, make);
  EXPECT_EQ(formed, 1);
  EXPECT_EQ(a.get(), b.get());
  const std::shared_ptr<const SharedSums::Piece> other = shared.get(0, 0, 5, false, make);  // without noise
  EXPECT_EQ(formed, 2);
  a.reset();
  b.reset();
  const std::shared_ptr<const SharedSums::Piece> again = shared.get(0, 0, 5, true, make);  // held by none
  EXPECT_EQ(formed, 3);
  EXPECT_EQ(again->acc, (std::vector<double>{1.0, 2.0, 3.0}));
  EXPECT_THROW(shared.get(1, 0, 0, true, [](SharedSums::Piece&) { throw std::runtime_error("no memory"); }),
               std::runtime_error);
  EXPECT_EQ(shared.get(1, 0, 0, true, make)->acc.size(), 3u);
  EXPECT_EQ(formed, 4);
}

// A piece no unit holds any longer hands its vectors' storage to the next piece formed (the
// pass's pieces are made one after the other, not each from fresh memory), and a piece held past
// its SharedSums is simply freed with it.
TEST(SharpEmulation, SharedSumsReuseADroppedPiecesStorage) {
  std::shared_ptr<const SharedSums::Piece> outliving;
  {
    SharedSums shared;
    const double* first = nullptr;
    const auto make = [&](SharedSums::Piece& p) {
      p.acc.resize(4096);
      for (size_t i = 0; i < p.acc.size(); ++i) p.acc[i] = double(i);
    };
    std::shared_ptr<const SharedSums::Piece> a = shared.get(0, 0, 0, false, make);
    first = a->acc.data();
    a.reset();
    const std::shared_ptr<const SharedSums::Piece> b = shared.get(0, 0, 1, false, make);
    EXPECT_EQ(b->acc.data(), first) << "piece 1 formed in piece 0's storage";
    EXPECT_EQ(b->acc[4095], 4095.0);
    outliving = shared.get(0, 0, 2, false, make);  // freshly allocated: piece 1 is still held
    EXPECT_NE(outliving->acc.data(), first);
  }
  EXPECT_EQ(outliving->acc.size(), 4096u);  // readable after the SharedSums went; freed when let go
  outliving.reset();
}

// Only the first run of a unit may be noise-free (the declared emulation beside its runs).
TEST(SharpEmulation, NoiseFreeRunOnlyFirst) {
  const Dump d = chunk_scan_dump(chunk_scan::ContractKind::production);
  const Emulation e = declared_emulation(d.kernel.contract, d.problem.formats, 1);
  std::vector<UnitOutputs> two(2);
  EXPECT_THROW(emulate_runs(d.problem, d.kernel.contract, e, {Noise{true, 7u}, Noise{}}, 0, 1, {&two[0], &two[1]}),
               std::invalid_argument);
}

TEST(SharpVerdict, OptionsAreValidated) {
  SharpOptions o;
  o.runs = 2;
  EXPECT_THROW(validate(o), std::invalid_argument);
  o = {};
  o.margin = 1.0;
  EXPECT_THROW(validate(o), std::invalid_argument);
  o = {};
  o.false_alarm = 1.0;
  EXPECT_THROW(validate(o), std::invalid_argument);
  EXPECT_NO_THROW(validate(SharpOptions{}));
}

// The weights are the bounds rounded to nearest bf16 (8 significant bits: spacing 2^-7 in
// [1, 2)), kept inside bf16's finite normal range, so exactly the elements whose bound is a
// positive finite number weigh something.
TEST(SharpWeight, IsTheBoundInBf16AndCountsTheElementsTheBoundCounts) {
  using verify::sharp_weight;
  using verify::sharp_weight_bits;
  EXPECT_EQ(sharp_weight_bits(1.0), 0x3f80);                  // 1 = 2^0: exponent field 127
  EXPECT_EQ(sharp_weight_bits(1.0 + 0.5 / 128), 0x3f80);      // a tie goes to the even 1
  EXPECT_EQ(sharp_weight_bits(1.0 + 0.75 / 128), 0x3f81);     // 3/4 of a ULP rounds up
  EXPECT_EQ(sharp_weight(sharp_weight_bits(0.375)), 0.375);   // exact in bf16
  EXPECT_EQ(sharp_weight_bits(1e-300), 0x0080);               // below bf16's range: 2^-126
  EXPECT_EQ(sharp_weight(0x0080), std::ldexp(1.0, -126));
  EXPECT_EQ(sharp_weight_bits(1e300), 0x7f7f);                // above it: the largest finite
  for (double b : {0.0, -1.0, std::numeric_limits<double>::infinity(), std::nan("")}) {
    EXPECT_EQ(sharp_weight_bits(b), 0) << b;                  // not counted, as with the bound
  }
  for (uint32_t b = 0x0080; b <= 0x7f7f; ++b) {                // every weight there can be
    ASSERT_EQ(sharp_weight(uint16_t(b)), decode(Format::bf16, b)) << b;
  }
  EXPECT_EQ(sharp_weight(0), 0.0);
}

TEST(SharpVerdict, WithoutPerElementWeightsTheTensorIsNotEvaluated) {
  const Dump d = chunk_scan_dump(chunk_scan::ContractKind::production);
  KernelCheck kc = verify::check_external(d.problem, d.kernel, d.y, d.final_states, verify::ElementDetail::summary);
  sharp_verdicts(d.problem, d.kernel, kc, d.y, d.final_states, SharpOptions{});
  for (const verify::TensorReport& t : kc.tensors) {
    EXPECT_FALSE(t.sharp.evaluated);
    EXPECT_NE(t.sharp.why_not.find("per-element weights"), std::string::npos) << t.sharp.why_not;
  }
}

}  // namespace
}  // namespace ssmv::sharp
