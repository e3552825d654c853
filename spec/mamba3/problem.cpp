#include "spec/mamba3/problem.h"

#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <utility>

namespace ssmv::mamba3 {
namespace {

[[noreturn]] void fail(const std::string& msg) { throw ProblemError("mamba3 " + msg); }

std::string show(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g (%a)", v, v);
  return buf;
}

void positive(const char* field, int64_t v) {
  if (v <= 0) fail(std::string("shape field '") + field + "' = " + std::to_string(v) + ": must be positive");
}

// The product of the factors, refused beyond ssmv::kMaxStateElements (so no int64 overflow).
int64_t elements(const char* tensor, std::initializer_list<int64_t> factors) {
  int64_t r = 1;
  for (int64_t f : factors) {
    if (f != 0 && r > kMaxStateElements / f) {
      fail(std::string("tensor '") + tensor + "' would hold more than " + std::to_string(kMaxStateElements) +
           " elements (kMaxStateElements)");
    }
    r *= f;
  }
  return r;
}

void sized(const char* field, const std::vector<float>& t, int64_t expected, const char* layout) {
  if (int64_t(t.size()) != expected) {
    fail(std::string("problem field '") + field + "': has " + std::to_string(t.size()) + " elements, " + layout +
         " needs " + std::to_string(expected));
  }
}

// Every element finite and exact in f; the first bad one is named.
void exact_in(const char* field, const std::vector<float>& t, Format f) {
  for (size_t i = 0; i < t.size(); ++i) {
    if (!std::isfinite(t[i])) {
      fail(std::string("problem field '") + field + "'[" + std::to_string(i) + "] = " + show(t[i]) +
           ": inputs must be finite");
    }
    if (!representable(f, t[i])) {
      fail(std::string("problem field '") + field + "'[" + std::to_string(i) + "] = " + show(t[i]) +
           " is not exact in its format " + std::string(format_name(f)));
    }
  }
}

void check_shape(const Shape& s) {
  positive("H", s.H);
  positive("P", s.P);
  positive("N", s.N);
  positive("G", s.G);
  if (s.H % s.G != 0) fail("shape field 'G' = " + std::to_string(s.G) + " does not divide H = " + std::to_string(s.H));
  if (s.N % 2 != 0) fail("shape field 'N' = " + std::to_string(s.N) + ": must be even (B and C rotate in pairs)");
  if (s.R < 1 || s.R > s.N / 2) {
    fail("shape field 'R' = " + std::to_string(s.R) + ": must lie in [1, N/2 = " + std::to_string(s.N / 2) + "]");
  }
  const auto& cu = s.cu_seqlens;
  if (cu.size() < 2) {
    fail("shape field 'cu_seqlens' has " + std::to_string(cu.size()) + " entries: needs at least 2 (one sequence)");
  }
  if (cu[0] != 0) fail("shape field 'cu_seqlens'[0] = " + std::to_string(cu[0]) + ": must be 0");
  for (size_t i = 1; i < cu.size(); ++i) {
    if (cu[i] <= cu[i - 1]) {
      fail("shape field 'cu_seqlens'[" + std::to_string(i) + "] = " + std::to_string(cu[i]) +
           ": must exceed cu_seqlens[" + std::to_string(i - 1) + "] = " + std::to_string(cu[i - 1]) +
           " (sequences are non-empty)");
    }
  }
  if (s.num_tokens() > kMaxTokens) {
    fail("shape field 'cu_seqlens': " + std::to_string(s.num_tokens()) + " tokens exceed the limit " +
         std::to_string(kMaxTokens));
  }
}

void check_initial(const Problem& pr) {
  const Shape& s = pr.shape;
  const FourPartState& st = pr.initial;
  if (st.empty()) return;
  const int64_t S = s.num_sequences();
  sized("initial.angle", st.angle, elements("initial.angle", {S, s.H, s.R}), "[S, H, R]");
  sized("initial.S", st.S, elements("initial.S", {S, s.H, s.P, s.N}), "[S, H, P, N]");
  sized("initial.B_prev", st.B_prev, elements("initial.B_prev", {S, s.H, s.N}), "[S, H, N]");
  sized("initial.x_prev", st.x_prev, elements("initial.x_prev", {S, s.H, s.P}), "[S, H, P]");
  exact_in("initial.angle", st.angle, Format::fp32);
  exact_in("initial.S", st.S, pr.formats.state);
  exact_in("initial.B_prev", st.B_prev, pr.formats.state);
  exact_in("initial.x_prev", st.x_prev, pr.formats.state);
}

}  // namespace

void validate(const Problem& pr) {
  const Shape& s = pr.shape;
  check_shape(s);
  const Formats& f = pr.formats;
  for (const auto& [field, format] :
       {std::pair{"input", f.input}, std::pair{"angles", f.angles}, std::pair{"output", f.output}}) {
    if (block_scaled(format)) {
      fail(std::string("format field '") + field + "' = " + std::string(format_name(format)) +
           ": a block-scaled format is a state format only");
    }
  }
  const int64_t T = s.num_tokens();
  const int64_t thp = elements("x", {T, s.H, s.P});
  const int64_t tgn = elements("B", {T, s.G, s.N});
  const int64_t th = elements("dt", {T, s.H});
  sized("x", pr.x, thp, "[T, H, P]");
  sized("B", pr.B, tgn, "[T, G, N]");
  sized("C", pr.C, tgn, "[T, G, N]");
  sized("dt", pr.dt, th, "[T, H]");
  sized("adt", pr.adt, th, "[T, H]");
  sized("trap", pr.trap, th, "[T, H]");
  sized("angles", pr.angles, elements("angles", {T, s.H, s.R}), "[T, H, R]");
  sized("B_bias", pr.B_bias, s.H * s.N, "[H, N]");
  sized("C_bias", pr.C_bias, s.H * s.N, "[H, N]");
  if (pr.has_D()) sized("D", pr.D, s.H, "[H]");
  if (pr.has_z()) sized("z", pr.z, thp, "[T, H, P]");
  if (!pr.initial.empty() &&
      (pr.initial.angle.empty() || pr.initial.S.empty() || pr.initial.B_prev.empty() || pr.initial.x_prev.empty())) {
    fail("problem field 'initial': angle, S, B_prev and x_prev are given together or not at all (sizes " +
         std::to_string(pr.initial.angle.size()) + ", " + std::to_string(pr.initial.S.size()) + ", " +
         std::to_string(pr.initial.B_prev.size()) + ", " + std::to_string(pr.initial.x_prev.size()) + ")");
  }
  check_initial(pr);

  exact_in("x", pr.x, f.input);
  exact_in("B", pr.B, f.input);
  exact_in("C", pr.C, f.input);
  exact_in("z", pr.z, f.input);
  exact_in("trap", pr.trap, f.input);
  exact_in("angles", pr.angles, f.angles);
  exact_in("dt", pr.dt, Format::fp32);
  exact_in("adt", pr.adt, Format::fp32);
  exact_in("B_bias", pr.B_bias, Format::fp32);
  exact_in("C_bias", pr.C_bias, Format::fp32);
  exact_in("D", pr.D, Format::fp32);
}

}  // namespace ssmv::mamba3
