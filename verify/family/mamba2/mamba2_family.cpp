#include "verify/family/mamba2/mamba2_family.h"

#include <algorithm>
#include <cstdio>
#include <future>
#include <optional>

#include "spec/parallel.h"
#include "verify/family/hints.h"
#include "verify/family/mamba2/dump_reading.h"
#include "verify/judge/external_check.h"

namespace ssmv::family::mamba2 {
namespace {

class Mamba2Dump : public Dump {
 public:
  explicit Mamba2Dump(ResolvedDump d)
      : problem_(std::move(d.problem)), kernel_(std::move(d.kernel)), outputs_(std::move(d.outputs)) {}

  CheckedDump check(const std::string& name, const CheckOptions& o) const override {
    const Contract& contract = kernel_.family == "handoff" ? kernel_.decode_contract : kernel_.contract;
    const bool stochastic = verify::stores_stochastically(contract, "y", problem_.formats) ||
                            verify::stores_stochastically(contract, "final_state", problem_.formats);
    // The bias test of a stochastic rounding reads every element's values; the sharp verdict
    // every element's weight (it judges one kernel per dump, not a hand-off); the table
    // prints no per-element vectors.
    const bool sharp_reads_weights = o.sharp && kernel_.family != "handoff";
    // With the sharp verdict, the worst elements' bound attribution (single-threaded) runs on
    // its own thread beside it instead of before it on one core (verify::DeferredAttribution);
    // and where the reference leaves cores idle, the verdict's first pass (its emulations) runs
    // beside the check, reading each row's weights once the judging has written them
    // (sharp::SharpBeside).
    verify::DeferredAttribution attribution;
    verify::JudgingFeed feed(problem_.shape.num_sequences() * problem_.shape.H);
    std::optional<sharp::SharpBeside> sharp;
    if (sharp_reads_weights && sharp::first_pass_beside_pays(problem_, process_threads())) {
      // It gives the y weights back behind its readers; a flagged tensor's later passes read
      // them from the check made again.
      sharp.emplace(problem_, kernel_, outputs_.y, outputs_.final_states, o.sharp_options, feed, [this] {
        return verify::check_external(problem_, kernel_, outputs_.y, outputs_.final_states,
                                      verify::ElementDetail::sharp_weights);
      });
    }
    verify::KernelCheck kc = verify::check_external(
        problem_, kernel_, outputs_.y, outputs_.final_states,
        stochastic || o.keep_elements
            ? verify::ElementDetail::elements
            : (sharp_reads_weights ? verify::ElementDetail::sharp_weights : verify::ElementDetail::summary),
        nullptr, o.sharp ? &attribution : nullptr, sharp ? &feed : nullptr);
    if (o.sharp) {
      // If the sharp verdict throws, the future's destructor waits for the attribution; get()
      // rethrows the attribution's own exception.
      std::future<void> beside = std::async(std::launch::async, [&] {
        if (attribution) attribution(kc);
      });
      if (sharp) {
        sharp->finish(kc);
      } else {
        sharp::sharp_verdicts(problem_, kernel_, kc, outputs_.y, outputs_.final_states, o.sharp_options);
      }
      beside.get();
    }
    // The sharp verdict has read its per-element weights (2 bytes per element: 134 MB for a
    // 256-request decode step's final state); give them back before the report keeps the check.
    for (verify::TensorReport& t : kc.tensors) t.sharp_weights.clear();
    CheckedDump r;
    r.biases = verify::stochastic_biases(problem_, kernel_, kc, outputs_.y, outputs_.final_states, o.false_alarm);
    if (o.keep_elements) {
      for (const verify::TensorReport& t : kc.tensors) {
        r.element_maps.push_back({t.name == "y" ? verify::y_layout(problem_) : verify::state_layout(problem_, t.elements)});
      }
    }
    r.entry = verify::report_entry(name, std::move(kc), problem_);
    return r;
  }

  std::vector<std::string> failure_hints() const override {
    std::vector<std::string> hints;
    for (std::string hint : {softplus_hint(problem_), narrower_format_hint("y", problem_.formats.output, outputs_.y),
                             narrower_format_hint("final_states", problem_.formats.state, outputs_.final_states)}) {
      if (!hint.empty()) hints.push_back(std::move(hint));
    }
    return hints;
  }

  std::string error_hint() const override { return softplus_hint(problem_); }

  std::string problem_difference(const Dump& other) const override {
    return first_difference(problem_, dynamic_cast<const Mamba2Dump&>(other).problem_);
  }

 private:
  Problem problem_;
  verify::ExternalKernel kernel_;
  tensor_file::KernelOutputs outputs_;
};

class Mamba2Family : public Family {
 public:
  std::string name() const override { return "mamba2"; }
  std::vector<std::string> kernels() const override { return {"ssu", "chunk_scan", "handoff"}; }
  std::string kernel_help() const override {
    return "ssu: a decode kernel launched once per token (or --tokens-per-launch), the state stored in the state "
           "format between launches; chunk_scan: a chunked prefill with --chunk-size; handoff: the first K tokens of "
           "every sequence through the chunked kernel, the rest decoded token by token from the state it stored in "
           "the state format";
  }
  std::unique_ptr<Dump> read(const DumpFiles& f) const override {
    return std::make_unique<Mamba2Dump>(resolve(f));
  }
};

}  // namespace

const Family& family() {
  static const Mamba2Family f;
  return f;
}

std::string softplus_hint(const Problem& p) {
  if (p.dt_softplus) return "";
  const int64_t H = p.shape.H;
  int64_t negative = 0;
  double lowest = 0;
  for (size_t i = 0; i < p.dt.size(); ++i) {
    const double delta = double(p.dt[i]) + (p.has_dt_bias() ? double(p.dt_bias[i % size_t(H)]) : 0.0);
    if (delta <= 0) ++negative;
    lowest = std::min(lowest, delta);
  }
  if (negative == 0) return "";
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "hint: judged without softplus, δ = dt + dt_bias is <= 0 at %lld of %zu (token, head) pairs (lowest "
                "%.4g); a kernel that applies softplus to dt (mamba_ssm's dt_softplus=True) needs --dt-softplus "
                "(or metadata ssmv.dt_softplus = true)",
                (long long)negative, p.dt.size(), lowest);
  return buf;
}

}  // namespace ssmv::family::mamba2
