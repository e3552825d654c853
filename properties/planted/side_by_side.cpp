#include "properties/planted/side_by_side.h"

#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <span>
#include <utility>
#include <vector>

#include "fast/chunk_scan/chunk_scan.h"
#include "fast/ssu/ssu.h"
#include "properties/gen/problem_gen.h"
#include "properties/planted/catalogue.h"
#include "spec/format.h"
#include "spec/parallel.h"
#include "spec/realistic_problem.h"
#include "verify/allclose/allclose.h"
#include "verify/allclose/fp32_reference.h"
#include "verify/json/json.h"
#include "verify/run/kernel_check.h"

namespace ssmv::prop {
namespace {

constexpr int kPropertyMixDecode = 240;   // 80 per state format
constexpr int kPropertyMixPrefill = 120;  // 20 per (contract, chunk size)

std::vector<double> decoded(Format f, const std::vector<Bits>& bits) {
  std::vector<double> out(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) out[i] = decode(f, bits[i]);
  return out;
}

// allclose's view of one tensor: per rtol in kRtols the least passing atol (+inf with a NaN).
json::Value tensor_excess(Format f, std::span<const double> kernel, std::span<const double> ref) {
  const std::vector<double> dev = verify::deviations(kernel, ref);
  json::Value excess = json::Value::array();
  for (double rtol : kRtols) {
    const double atol = verify::smallest_atol(dev, ref, rtol);
    excess.push_back(std::isfinite(atol) ? json::Value(atol) : json::Value("inf"));
  }
  return {{"format", format_name(f)}, {"excess", excess}};
}

struct Case {
  Case(std::string set_name, std::string what) : set(std::move(set_name)), label(std::move(what)) {}
  std::string set, label;
  DecodeProblem decode;             // ssu
  Problem problem;                  // chunk_scan
  chunk_scan::ContractKind kind{};  // chunk_scan
  int64_t chunk_size = 0;
};

json::Value judge_case(const std::string& kernel, const Case& c) {
  json::Value r = {{"set", c.set}, {"label", c.label}};
  if (kernel == "ssu") {
    const Problem& p = c.decode.problem;
    const verify::KernelCheck kc = verify::check_ssu(c.decode, verify::Device::twin);
    const ssu::Result got = ssu::run(c.decode, Device::twin);
    const verify::Fp32Reference ref = verify::fp32_reference(c.decode);
    r["ssmv_violation"] = !kc.ok();
    r["y"] = tensor_excess(p.formats.output, decoded(p.formats.output, got.y), ref.y);
    r["state"] = tensor_excess(p.formats.state, decoded(p.formats.state, got.state_pool), ref.state_pool);
  } else {
    const Problem& p = c.problem;
    const verify::KernelCheck kc =
        verify::check_chunk_scan(p, c.kind, c.chunk_size, verify::Device::twin, /*boundary_states=*/true);
    chunk_scan::Config cfg;
    cfg.contract = c.kind;
    cfg.chunk_size = c.chunk_size;
    const chunk_scan::Result got = chunk_scan::run(p, Device::twin, cfg);
    const verify::Fp32Reference ref = verify::fp32_reference(p);
    r["ssmv_violation"] = !kc.ok();
    r["y"] = tensor_excess(p.formats.output, std::vector<double>(got.y.begin(), got.y.end()), ref.y);
    r["state"] = tensor_excess(p.formats.state, std::vector<double>(got.final_state.begin(), got.final_state.end()),
                               ref.final_state);
  }
  return r;
}

// A generator's value outside a property: seed `i`, size ramping 0..100 over `count` cases.
template <typename T>
T draw(const rc::Gen<T>& gen, int i, int count) {
  return gen(rc::Random(uint64_t(i) + 1), i * 100 / count).value();
}

std::vector<Case> decode_cases() {
  std::vector<Case> out;
  const Format states[] = {Format::fp32, Format::bf16, Format::fp16};
  for (int i = 0; i < kPropertyMixDecode; ++i) {
    DecodeOptions o;
    o.state_format = states[i % 3];
    Case c{"property_mix", "decode #" + std::to_string(i)};
    c.decode = draw(decode_problem(o), i, kPropertyMixDecode).decode;
    out.push_back(std::move(c));
  }
  // Production widths: 32 requests of 1 token and 8 of 4, fp32 and bf16 states.
  for (Format state : {Format::fp32, Format::bf16}) {
    for (int64_t tokens : {1, 4}) {
      const int64_t R = tokens == 1 ? 32 : 8;
      Shape s{{0}, 8, 64, 128, 2};
      for (int64_t r = 0; r < R; ++r) s.cu_seqlens.push_back(s.cu_seqlens.back() + tokens);
      Case c{"production", std::to_string(R) + " requests x " + std::to_string(tokens) + " tokens, " +
                               std::string(format_name(state)) + " state"};
      c.decode = one_slot_per_sequence(
          realistic_problem(s, Formats{Format::bf16, state, Format::bf16}, 101 + uint64_t(tokens)));
      out.push_back(std::move(c));
    }
  }
  return out;
}

std::vector<Case> prefill_cases() {
  std::vector<Case> out;
  using chunk_scan::ContractKind;
  const ContractKind kinds[] = {ContractKind::production, ContractKind::fp32};
  const int64_t sizes[] = {64, 128, 256};
  for (int i = 0; i < kPropertyMixPrefill; ++i) {
    PrefillOptions o;
    o.chunk_size = sizes[i % 3];
    Case c{"property_mix", "prefill #" + std::to_string(i)};
    c.problem = draw(prefill_problem(o), i, kPropertyMixPrefill).problem;
    c.kind = kinds[(i / 3) % 2];
    c.chunk_size = o.chunk_size;
    out.push_back(std::move(c));
  }
  for (ContractKind kind : kinds) {
    const Shape s{{0, 1024}, 2, 64, 128, 1};
    Case c{"production", std::string("1 x 1024 tokens, chunk 256, ") + (kind == ContractKind::fp32 ? "fp32" : "production") +
                             " contract"};
    c.problem = realistic_problem(s, Formats{Format::bf16, Format::fp32, Format::bf16}, 202);
    c.kind = kind;
    c.chunk_size = 256;
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

int side_by_side(const std::string& kernel, const std::string& path, int threads) {
  if (kernel != "ssu" && kernel != "chunk_scan") {
    std::fprintf(stderr, "side-by-side: kernel '%s': expected ssu or chunk_scan\n", kernel.c_str());
    return 2;
  }
  const std::vector<Case> cases = kernel == "ssu" ? decode_cases() : prefill_cases();
  std::vector<json::Value> rows(cases.size());
  // Cases are independent; each check also threads inside (ref::default_threads()), so
  // threads = 1 is the usual choice.
  ssmv::for_each_task(int64_t(cases.size()), std::max(threads, 1), [&](int64_t i, int) { rows[i] = judge_case(kernel, cases[i]); });
  json::Value doc = {{"bug", kPlantedBugName}, {"kernel", kernel}, {"rtols", kRtols}, {"problems", rows}};
  const std::filesystem::path tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << doc.dump(1) << "\n";
    if (!out) {
      std::fprintf(stderr, "side-by-side: cannot write %s\n", tmp.c_str());
      return 2;
    }
  }
  std::filesystem::rename(tmp, path);
  return 0;
}

}  // namespace ssmv::prop
