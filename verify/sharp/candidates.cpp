#include "verify/sharp/candidates.h"

#include "spec/format.h"

namespace ssmv::sharp {
namespace {

std::string fmt(Format f) { return std::string(format_name(f)); }

// The intermediate sites a contract may declare (its stores always happen: the dump holds
// the stored values).
constexpr Site kOptionalSites[] = {Site::dt_scaled_B, Site::decayed_CB, Site::incoming_state,
                                   Site::final_incoming_state};

// The coarse formats a buggy kernel rounds an fp32 intermediate to: the 16-bit formats, the
// problem's input format first when it is fp16.
std::vector<Format> coarse_formats(const Problem& p) {
  if (p.formats.input == Format::fp16) return {Format::fp16, Format::bf16};
  return {Format::bf16, Format::fp16};
}

}  // namespace

std::vector<Configuration> allowed_configurations(const Contract& c, const Problem& p, int64_t tokens_per_launch) {
  const Emulation declared = declared_emulation(c, p.formats, tokens_per_launch);
  std::vector<Configuration> out{{"as declared", "every rounding the contract declares, where it declares it", declared}};
  int optional = 0;
  Emulation none = declared;
  for (Site s : kOptionalSites) {
    if (!declared.at(s)) continue;
    ++optional;
    Emulation e = declared;
    e.at(s).reset();
    none.at(s).reset();
    out.push_back({"without " + std::string(site_name(s)), "the declared roundings except " +
                                                                std::string(site_name(s)) + " (kept in fp32)",
                   e});
  }
  if (optional >= 2) out.push_back({"without intermediate roundings", "every intermediate kept in fp32", none});
  return out;
}

std::vector<Configuration> candidate_defects(const Contract& c, const Problem& p, int64_t tokens_per_launch) {
  const Emulation declared = declared_emulation(c, p.formats, tokens_per_launch);
  const bool chunked = c.family == Family::chunked;
  std::vector<Configuration> out;
  auto add = [&](std::string name, std::string description, auto edit) {
    Emulation e = declared;
    edit(e);
    out.push_back({std::move(name), std::move(description), e});
  };
  for (Format f : coarse_formats(p)) {
    const std::string F = fmt(f);
    add("running_state rounded to " + F,
        chunked ? "the running inter-chunk state rounded to " + F + " once per chunk (the state-passing step)"
                : "the fp32 state rounded to " + F + " after every token (a " + F + " register or smem copy)",
        [&](Emulation& e) { e.at(Site::running_state) = f; });
    add("delta rounded to " + F, "δ rounded to " + F + " (the dt dtype) before it scales B" +
                                     std::string(chunked ? " and the weights" : ""),
        [&](Emulation& e) { e.at(Site::delta) = f; });
    if (chunked) {
      add("cumsum rounded to " + F, "the within-chunk cumulative sum of δ·A held in " + F,
          [&](Emulation& e) { e.at(Site::cumsum) = f; });
      for (Site s : {Site::dt_scaled_B, Site::decayed_CB, Site::incoming_state}) {
        if (declared.at(s)) continue;
        add(std::string(site_name(s)) + " rounded to " + F,
            std::string(site_name(s)) + " rounded to " + F + " where the contract keeps it in fp32",
            [&](Emulation& e) { e.at(s) = f; });
      }
    } else {
      add("dB rounded to " + F, "δ·B held in " + F + " before the update", [&](Emulation& e) { e.at(Site::dB) = f; });
    }
  }
  const bool coarse_output = format_info(p.formats.output).precision < 24;
  const bool coarse_state = format_info(p.formats.state).precision < 24 && !block_scaled(p.formats.state);
  if (coarse_output) {
    add("y truncated to " + fmt(p.formats.output), "y stored by truncation instead of round-to-nearest-even",
        [&](Emulation& e) { e.output_truncated = true; });
    if (chunked) {
      add("inter term rounded to " + fmt(p.formats.output),
          "the inter-chunk part of y rounded to the output format before the intra-chunk sum is added",
          [&](Emulation& e) { e.at(Site::inter_term) = p.formats.output; });
    }
  }
  if (!chunked && coarse_state) {
    add("y from the stored state", "y computed from the state rounded to its " + fmt(p.formats.state) +
                                       " cache format instead of the fp32 state",
        [&](Emulation& e) { e.y_from_stored_state = true; });
  }
  if (p.formats.state == Format::fp16) {
    add("state stored through bf16", "the fp16 state cast through bf16 on its way to the cache",
        [&](Emulation& e) { e.at(Site::state_via) = Format::bf16; });
  }
  if (p.has_D()) add("D·x missing", "the skip term D·x never added", [](Emulation& e) { e.drop_D = true; });
  if (p.has_dt_bias()) {
    add("dt_bias missing", "dt_bias never added before the softplus", [](Emulation& e) { e.drop_dt_bias = true; });
  }
  if (p.dt_softplus) add("softplus missing", "the dt_softplus flag ignored", [](Emulation& e) { e.drop_softplus = true; });
  return out;
}

}  // namespace ssmv::sharp
