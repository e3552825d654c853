// The contract's own rounding model, run: the recurrence in double with the roundings a
// configuration names applied where the kernel would apply them, optionally with Monte Carlo
// noise standing for every fp32 rounding and transcendental the contract allows. The sharp
// verdict (sharp_verdict.h) compares a kernel's outputs with these emulations; the method is
// docs/sharp-verdicts.md.
//
// Accuracy: double carries 53 bits, the values it emulates 24 (fp32) or fewer, so the
// emulation's own error (about 2^-53 per operation, relative to the magnitudes) is 2^-29 of
// one fp32 rounding and is ignored.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "spec/contract.h"
#include "spec/problem.h"

namespace ssmv::sharp {

// The places a value may be rounded to a coarser format. The contract's declared points
// (spec/contract.h Point) map onto the first four; the rest are where a buggy kernel rounds
// (the candidate defects of attribution.h).
enum class Site : uint8_t {
  dt_scaled_B,           // chunked: B_k·exp(cs_last − cs_k)·δ_k before the chunk-state product
  decayed_CB,            // chunked: (C_m·B_k)·exp(cs_m − cs_k)·δ_k before it multiplies x_k
  incoming_state,        // chunked: the state entering a chunk, before C·h
  final_incoming_state,  // chunked: the state entering a sequence's last piece, before the final state
  delta,                 // both: δ after softplus and clamp
  dB,                    // sequential: δ·B before the update
  cumsum,                // chunked: the within-chunk cumulative sum of δ·A
  running_state,         // both: the fp32 running state, after every chunk (chunked) or token (sequential)
  inter_term,            // chunked: the inter-chunk part of y before the intra-chunk sum is added
  state_via,             // both: the stored state rounded to this format first (a double rounding)
};
inline constexpr size_t kSites = 10;
std::string_view site_name(Site s);

// One emulation: which sites round (to which format), how the stores round, and what the
// arithmetic leaves out (the semantic defects of attribution).
struct Emulation {
  std::array<std::optional<Format>, kSites> round_at{};
  Format state = Format::fp32;   // the stored state's format (the dump's)
  Format output = Format::bf16;  // y's format (the dump's)
  // A stored value declared stochastic: rounded to nearest in a deterministic emulation (the
  // mean of the draw), to a random neighbour in a noisy one.
  bool stochastic_state = false, stochastic_output = false;
  bool output_truncated = false;     // y stored by truncation (toward zero), not to nearest
  bool y_from_stored_state = false;  // sequential: y from the state rounded to its format
  bool drop_D = false, drop_dt_bias = false, drop_softplus = false;
  // Sequential: tokens of every sequence per launch (the state stored at each launch's end).
  int64_t tokens_per_launch = 1;

  std::optional<Format>& at(Site s) { return round_at[size_t(s)]; }
  const std::optional<Format>& at(Site s) const { return round_at[size_t(s)]; }
};

// The emulation of `c` as declared: its rounding points coarser than its accumulation format,
// resolved for the problem's formats, and its stores.
Emulation declared_emulation(const Contract& c, const Formats& f, int64_t tokens_per_launch);

// The noise of one Monte Carlo run: every fp32 rounding the contract allows becomes a
// random error of its largest magnitude's variance, every transcendental a uniform error
// within its budget (docs/sharp-verdicts.md, "the noise model").
struct Noise {
  bool on = false;
  uint64_t seed = 0;  // with (sequence, head): each unit's stream, the same for any thread count
};

// One (sequence, head)'s outputs, as the kernel would store them (values of the dump's formats).
// With y_row set, each token's row of y is handed to it as it is made (j: the token's place in
// the sequence; row: P values, valid during the call) and `y` stays empty, so an emulation
// holds O(P·N), not the sequence's y (the sharp verdict's runs, sharp_verdict.cpp).
struct UnitOutputs {
  std::vector<double> y;      // [len, P]: the sequence's tokens in order (without y_row)
  std::vector<double> state;  // [P, N]: its final state
  std::function<void(int64_t j, const double* row)> y_row;
  std::vector<double> row;    // [P] scratch for y_row
  // When set and true (any run's, for runs in lockstep), the emulation ends at its next slab or
  // piece, its outputs incomplete: how a reader beside a check that stopped ends early, since
  // y_row may not throw (it is called from target_clones functions, whose frames GCC 12 does
  // not unwind: spec/vector_clones.h).
  const std::atomic<bool>* stop = nullptr;
  // The sequential emulation's working state [N, P], its stored copy and its noise streams,
  // carried from slab to slab of a run and kept between calls: a decode dump's units are a few
  // tokens each, and allocating and zeroing these per unit had been a fifth of a 64-request
  // check's time.
  std::vector<double> work_state, work_stored;
  std::vector<uint32_t> work_lanes;
};

// The C·Bᵀ sums of a chunked contract's pieces with their noise model's figures, which every
// head of a group forms alike (they depend on the inputs and the contract alone): the units
// that run at the same time share them through one SharedSums. The first unit to reach a piece
// forms it, the others that reach it meanwhile wait for it and read it; a piece no unit holds
// any longer is dropped, so only the pieces in hand are kept (about L²/2·3 doubles each, 0.8 MB
// at chunk 256), and its vectors' storage goes to the next piece formed: made anew per piece
// and group, such blocks (256 KiB – 1 MiB) had stayed resident in the arenas of the many threads
// that freed them (bench/NOTES.md "Session 31"). The sums are the same bits whichever unit forms
// them. One per pass over the units of one contract.
class SharedSums {
 public:
  struct Piece {
    std::vector<double> acc, bias, sd;  // row m's sums at m(m + 1)/2; bias and sd with noise
  };
  // Piece `piece` of sequence s and group g (with the noise model when noisy), formed by
  // make() if no unit holds it now.
  std::shared_ptr<const Piece> get(int64_t s, int64_t g, int64_t piece, bool noisy,
                                   const std::function<void(Piece&)>& make);

 private:
  struct Entry {
    std::once_flag formed;
    Piece piece;
  };
  // Dropped pieces' vectors, for the next piece formed; an entry's deleter hands its piece back
  // (through a weak pointer: a piece that outlives the SharedSums is simply freed).
  struct Spares {
    std::mutex mutex;
    std::vector<Piece> pieces;
  };
  std::shared_ptr<Entry> new_entry();
  std::mutex mutex_;
  std::map<std::tuple<int64_t, int64_t, int64_t, bool>, std::weak_ptr<Entry>> entries_;
  std::shared_ptr<Spares> spares_ = std::make_shared<Spares>();
};

// Runs one (sequence, head) of `p` under `e` (with `c`'s budgets and reductions for the
// noise): sequential for Family::sequential, chunked (c.chunk_size, c.chunk_layout)
// otherwise. `out` is resized; reusing it across calls keeps the inner loops allocation-free.
// `shared` (optional, chunked family): the C·Bᵀ sums shared with the pass's other units.
void emulate_unit(const Problem& p, const Contract& c, const Emulation& e, const Noise& noise, int64_t sequence,
                  int64_t head, UnitOutputs& out, SharedSums* shared = nullptr);

// emulate_unit for several noises at once, noises[r] into *outs[r] (the same outputs as one
// call each): the chunked family forms C·Bᵀ once for all of them, since it depends on the
// inputs alone, and models the noise of its sums once, on a noise-free run's partial sums
// (docs/sharp-verdicts.md [N3]): noises[0] when its noise is off, else one more run. The noises
// are all on, all off, or noises[0] off (the declared emulation) and the rest on.
// The runs go in lockstep: outs[0] hands row j of y (UnitOutputs::y_row) before any other run
// does, and before it hands row j + lockstep_rows(c), so a caller that judges every run's rows
// against the first's (the sharp verdict's Monte Carlo runs against the declared emulation) keeps
// lockstep_rows(c) of the first's rows, not the sequence's (SharpEmulation.RunsGoInLockstep).
void emulate_runs(const Problem& p, const Contract& c, const Emulation& e, const std::vector<Noise>& noises,
                  int64_t sequence, int64_t head, const std::vector<UnitOutputs*>& outs, SharedSums* shared = nullptr);

// How many rows of y the other runs of emulate_runs may trail the first by: a chunk's (the
// chunked family goes piece by piece, every run through a piece before the next) or a slab's of
// 64 tokens (the sequential family: every run through a slab before the next).
int64_t lockstep_rows(const Contract& c);

}  // namespace ssmv::sharp
