// Judging one output tensor element by element as the exact values arrive, in any order
// and from several threads, keeping only what its TensorReport needs: counts, the ULP
// distances' histogram (for the percentiles), the maxima with where they are, the worst
// element with its exact value, and (only when asked) the per-element vectors. Memory is
// O(threads) plus the per-element vectors when kept, whatever the tensor's size; the report
// is identical to judging the elements one after another in flat order, for any order and
// thread count. judge_tensor (tensor_report.h) is this with every element at once.
#pragma once

#include <mpfr.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "reference/handed_value.h"
#include "verify/judge/tensor_layout.h"
#include "verify/judge/tensor_report.h"

namespace ssmv::verify {

// Whether a TensorReport keeps its per-element vectors (computed, exact_nearest, bounds,
// scales: what side-by-side comparisons need; and the sharp weights), only the sharp weights
// (what the sharp verdict reads: verify/sharp/sharp_verdict.h), or only the summary the
// reports print.
enum class ElementDetail : uint8_t { elements, summary, sharp_weights };

class TensorJudge {
 public:
  TensorJudge(std::string name, Format format, int64_t elements, TensorLayout layout, ElementDetail detail);
  ~TensorJudge();
  TensorJudge(const TensorJudge&) = delete;
  TensorJudge& operator=(const TensorJudge&) = delete;

  // Judges element i (each exactly once): the kernel's bits, the exact value (correctly
  // rounded to the format, its nearest double, certified error, magnitude, and the value
  // itself, copied only while the element is the worst so far) and its bound. `extra`: a
  // value of the caller's kept with the worst element (the sequential check's y before the
  // gate, which its bound's attribution reads). Calls for different elements may come from
  // different threads at once.
  void add(int64_t i, Bits computed, Bits exact_rounded, double exact_nearest, double certified_error,
           double magnitude, double bound, const ref::HandedValue& exact_value, double extra = 0);

  // Elements first, first + 1, ..., first + n − 1 (n = computed.size()) at once, as n calls of
  // add() with extra 0: the kernel's value computed[k] (a value of the format, rounded to its
  // bits here), the exact value values[k] (rounded to the format here), nearest[k],
  // certified_error[k], magnitude[k], bound[k]. A pair's final state is one such run: the
  // calling thread's partial is looked up once, not per element.
  void add_run(int64_t first, std::span<const float> computed, std::span<const ref::HandedValue> values,
               const double* nearest, const double* certified_error, const double* magnitude, const double* bound);

  // The sharp weights in flat order (null unless kept): written by add() and add_run(), read
  // beside the judging once a JudgingFeed says they are (judging_feed.h); the pages stay put
  // when finish() moves them into the report.
  const uint16_t* sharp_weights() const { return report_.sharp_weights.data(); }

  // The report (call once, after every add).
  TensorReport finish();

  // After finish(): the worst element's certified error and `extra` (0 without a worst).
  struct WorstInputs {
    double certified_error = 0, extra = 0;
  };
  const WorstInputs& worst_inputs() const { return worst_inputs_; }

 private:
  struct Partial;
  Partial& partial();  // the calling thread's (cached per thread)
  void add_to(Partial& r, int64_t i, Bits computed, Bits exact_rounded, double exact_nearest, double certified_error,
              double magnitude, double bound, const ref::HandedValue& exact_value, double extra);
  static uint64_t next_serial();

  TensorReport report_;  // name, format, coordinates, elements; per-element vectors when kept
  std::function<std::vector<int64_t>(int64_t)> coords_;  // the layout's
  bool keep_, keep_weights_;
  uint64_t serial_;
  std::mutex mutex_;
  std::unordered_map<std::thread::id, std::unique_ptr<Partial>> partials_;
  WorstInputs worst_inputs_;
};

}  // namespace ssmv::verify
