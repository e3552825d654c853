#include "properties/planted/sharp_proof.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "fast/chunk_scan/chunk_scan.h"
#include "fast/chunk_scan/contract.h"
#include "fast/ssu/contract.h"
#include "fast/ssu/ssu.h"
#include "properties/planted/catalogue.h"
#include "reference/reference.h"
#include "spec/format.h"
#include "spec/realistic_problem.h"
#include "verify/allclose/allclose.h"
#include "verify/allclose/fp32_reference.h"
#include "verify/json/json.h"
#include "verify/judge/external_check.h"
#include "verify/sharp/sharp_verdict.h"
#include "verify/tensor_file/tensor_file.h"

namespace ssmv::prop {
namespace {

std::vector<float> decoded(Format f, const std::vector<Bits>& bits) {
  std::vector<float> out(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) out[i] = float(decode(f, bits[i]));
  return out;
}

// allclose at mamba_ssm's tolerance for the format: the elements it fails.
int64_t allclose_failures(Format f, const std::vector<float>& kernel, const std::vector<double>& ref) {
  const verify::Tolerance t = verify::mamba_ssm_tolerance(f);
  const std::vector<double> k(kernel.begin(), kernel.end());
  return verify::allclose_violations(k, ref, t.rtol, t.atol);
}

json::Value num(double v) { return std::isfinite(v) ? json::Value(v) : json::Value(v > 0 ? "inf" : "nan"); }

json::Value tensor_json(const verify::TensorReport& r, int64_t allclose_failed) {
  const verify::SharpResult& s = r.sharp;
  json::Value attribution = json::Value::array();
  for (size_t i = 0; i < s.attribution.size() && i < 3; ++i) {
    attribution.push_back({{"name", s.attribution[i].name},
                           {"explained", num(s.attribution[i].explained)},
                           {"consistent", s.attribution[i].consistent}});
  }
  return {{"name", r.name},
          {"format", format_name(r.format)},
          {"violations", r.count(verify::Verdict::violation)},
          {"invalid", r.count(verify::Verdict::invalid)},
          {"max_bound_usage", num(r.max_bound_usage)},
          {"sharp_evaluated", s.evaluated},
          {"suspicious", s.suspicious},
          {"ratio", num(s.whole.ratio)},
          {"worst_head", s.worst.head},
          {"worst_ratio", num(s.worst.ratio)},
          {"p_value_bound", num(s.p_value_bound)},
          {"allowed", s.allowed},
          {"attribution", attribution},
          {"allclose_failed", allclose_failed}};
}

json::Value judge(const std::string& label, const Problem& p, const verify::ExternalKernel& k,
                  const std::vector<float>& y, const std::vector<float>& fs, const verify::Fp32Reference& ref) {
  verify::KernelCheck kc = verify::check_external(p, k, y, fs, verify::ElementDetail::elements);
  sharp::SharpOptions o;
  o.threads = ref::default_threads();
  sharp::sharp_verdicts(p, k, kc, y, fs, o);
  json::Value tensors = json::Value::array();
  for (const verify::TensorReport& r : kc.tensors) {
    const bool is_y = r.name == "y";
    tensors.push_back(tensor_json(r, allclose_failures(r.format, is_y ? y : fs, is_y ? ref.y : ref.final_state)));
  }
  // FNV-1a of the outputs' bits: a bug whose outputs equal the bundled twin's on this problem
  // is not exercised by it (sharp_summary.py compares with the control's).
  uint64_t hash = 0xcbf29ce484222325ull;
  for (const std::vector<float>* v : {&y, &fs}) {
    for (float x : *v) {
      uint32_t b;
      std::memcpy(&b, &x, sizeof b);
      for (int i = 0; i < 4; ++i) hash = (hash ^ ((b >> (8 * i)) & 0xff)) * 0x100000001b3ull;
    }
  }
  char hex[20];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return {{"label", label}, {"contract", k.contract.name}, {"outputs_hash", hex}, {"tensors", tensors}};
}

// δ clamped to [2^-9, 2^-3.5] (fp32 values): realistic δ (1e-3 to 0.1) reaches both ends.
void clamp_dt(Problem& p) {
  p.dt_limit_lo = 0x1p-9f;
  p.dt_limit_hi = 0x1.6a09e6p-4f;
}

json::Value ssu_case(Format state) {
  Shape s{{0}, 4, 64, 128, 2};
  const int64_t requests = 64, tokens = 64;
  for (int64_t r = 0; r < requests; ++r) s.cu_seqlens.push_back(s.cu_seqlens.back() + tokens);
  RealisticOptions ro;
  ro.d_mode = state == Format::bf16 ? DMode::per_head_dim : DMode::per_head;
  Problem p = realistic_problem(s, Formats{Format::bf16, state, Format::bf16}, 301 + uint64_t(state), ro);
  clamp_dt(p);
  const DecodeProblem d = one_slot_per_sequence(p);
  ssu::Config cfg;
  cfg.threads = ref::default_threads();
  const ssu::Result got = ssu::run(d, Device::twin, cfg);
  verify::ExternalKernel k;
  k.family = "ssu";
  k.contract = ssu::contract();
  k.tokens_per_launch = tokens;  // one launch: the twin keeps the state in fp32 across a request's tokens
  const verify::Fp32Reference ref = verify::fp32_reference(p);
  return judge(std::to_string(requests) + " requests x " + std::to_string(tokens) + " tokens, " +
                   std::string(format_name(state)) + " state" +
                   (ro.d_mode == DMode::per_head_dim ? ", D per (head, dim)" : ""),
               p, k, decoded(p.formats.output, got.y), decoded(p.formats.state, got.state_pool), ref);
}

// Two sequences (2048 and 304 tokens: a chunk edge inside the second), H = 4 in 2 groups.
json::Value chunk_scan_case(chunk_scan::ContractKind kind, int64_t P) {
  const Shape s{{0, 2048, 2352}, 4, P, 128, 2};
  RealisticOptions ro;
  ro.d_mode = DMode::per_head_dim;
  Problem p = realistic_problem(s, Formats{Format::bf16, Format::fp32, Format::bf16}, 402, ro);
  clamp_dt(p);
  chunk_scan::Config cfg;
  cfg.contract = kind;
  cfg.chunk_size = 256;
  cfg.threads = ref::default_threads();
  const chunk_scan::Result got = chunk_scan::run(p, Device::twin, cfg);
  verify::ExternalKernel k;
  k.family = "chunk_scan";
  k.contract = chunk_scan::contract(kind, 256);
  const verify::Fp32Reference ref = verify::fp32_reference(p);
  return judge("2048 + 304 tokens, P " + std::to_string(P) + ", chunk 256, " +
                   (kind == chunk_scan::ContractKind::fp32 ? "fp32" : "production") + " contract",
               p, k, got.y, got.final_state, ref);
}

}  // namespace

int sharp_proof(const std::string& kernel, const std::string& path) {
  if (kernel != "ssu" && kernel != "chunk_scan") {
    std::fprintf(stderr, "sharp: kernel '%s': expected ssu or chunk_scan\n", kernel.c_str());
    return 2;
  }
  json::Value cases = json::Value::array();
  if (kernel == "ssu") {
    for (Format f : {Format::fp32, Format::bf16}) cases.push_back(ssu_case(f));
  } else {
    // Production widths (P = 64) under both contracts; P = 128 reaches a second 64-row tile.
    cases.push_back(chunk_scan_case(chunk_scan::ContractKind::production, 64));
    cases.push_back(chunk_scan_case(chunk_scan::ContractKind::fp32, 64));
    cases.push_back(chunk_scan_case(chunk_scan::ContractKind::production, 128));
  }
  const json::Value doc = {{"bug", kPlantedBugName}, {"kernel", kernel}, {"cases", cases}};
  const std::string text = doc.dump(1) + "\n";
  try {
    tensor_file::write_file_atomically(path, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()),
                                                                       text.size()));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sharp: %s\n", e.what());
    return 2;
  }
  return 0;
}

}  // namespace ssmv::prop
