#include "spec/problem.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <type_traits>
#include <utility>

#include "spec/parallel.h"

namespace ssmv {
namespace {

[[noreturn]] void fail(const std::string& msg) { throw ProblemError(msg); }

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g (%a)", v, v);
  return buf;
}

template <class Values>
void check_size(const char* field, const Values& t, int64_t expected, const char* shape) {
  if (int64_t(t.size()) != expected) {
    fail(std::string("problem field '") + field + "': has " + std::to_string(t.size()) +
         " elements, shape " + shape + " needs " + std::to_string(expected));
  }
}

// Whether no value of v[lo, hi) has its exponent field (`inf`: all ones) all ones, asked of each
// value's bits without a branch, so that the loop vectorises (a 256-request decode's state is
// 67 million floats).
template <class Value, class Word>
bool exponents_finite(const Value* v, Word inf, size_t lo, size_t hi) {
  static_assert(sizeof(Word) == sizeof(Value));
  bool finite = true;
  for (size_t i = lo; i < hi; ++i) {
    Word w;
    std::memcpy(&w, v + i, sizeof w);
    finite &= (w & inf) != inf;
  }
  return finite;
}

// Every value finite and exact in `f`, checked in blocks of 2^20 elements on the process's
// worker threads (validate runs at every entry point a check goes through, and a 256-request
// decode state is 67 million elements); the first bad block's error is rethrown, so the
// element named is the first bad one. Values exact in f by how they are held (narrowed to f,
// or floats of fp32) are asked only to be finite, by their exponent fields; a block where one
// is not is walked again to name it.
template <class Values>
void check_values(const char* field, const Values& t, Format f) {
  constexpr size_t kBlock = size_t(1) << 20;
  const int64_t blocks = int64_t((t.size() + kBlock - 1) / kBlock);
  // Every float is a value of fp32 (and int16_scaled's values are fp32 values).
  bool exact = f == Format::fp32 || f == Format::int16_scaled;
  const float* floats = nullptr;   // the values as floats, where they are held so
  const uint16_t* bits = nullptr;  // or as 16-bit patterns, whose exponent field is bits_inf
  uint16_t bits_inf = 0;
  if constexpr (std::is_same_v<Values, FormatValues>) {
    exact = exact || (t.narrowed() && t.format() == f);
    if (t.holds_bits()) {
      bits = t.bits();
      bits_inf = t.format() == Format::bf16 ? 0x7f80u : 0x7c00u;
    } else {
      floats = t.floats();
    }
  } else {
    floats = t.data();
  }
  for_each_task(blocks, process_threads(), [&](int64_t b, int64_t) {
    const size_t lo = size_t(b) * kBlock, hi = std::min(t.size(), size_t(b + 1) * kBlock);
    if (exact && bits && exponents_finite(bits, bits_inf, lo, hi)) return;
    if (exact && floats && exponents_finite(floats, uint32_t{0x7f800000u}, lo, hi)) return;
    for (size_t i = lo; i < hi; ++i) {
      const float v = t[i];
      if (!std::isfinite(v)) {
        fail(std::string("problem field '") + field + "'[" + std::to_string(i) + "] = " + num(v) +
             ": inputs must be finite");
      }
      if (!exact && !representable(f, v)) {
        fail(std::string("problem field '") + field + "'[" + std::to_string(i) + "] = " + num(v) +
             " is not exact in its format " + std::string(format_name(f)));
      }
    }
  });
}

// a*b with a check against kMaxStateElements (and so against int64 overflow).
int64_t checked_product(const char* what, std::initializer_list<int64_t> factors) {
  int64_t r = 1;
  for (int64_t f : factors) {
    if (f != 0 && r > kMaxStateElements / f) {
      fail(std::string(what) + " is too large: more than " + std::to_string(kMaxStateElements) +
           " elements (kMaxStateElements) would not fit in memory");
    }
    r *= f;
  }
  return r;
}

}  // namespace

DMode Problem::d_mode() const {
  if (!has_D()) return DMode::none;
  if (int64_t(D.size()) == shape.H) return DMode::per_head;
  return DMode::per_head_dim;
}

float Problem::d_value(int64_t h, int64_t p) const {
  switch (d_mode()) {
    case DMode::none: return 0.0f;
    case DMode::per_head: return D[h];
    case DMode::per_head_dim: return D[h * shape.P + p];
  }
  return 0.0f;
}

void validate(const Problem& pr) {
  const Shape& s = pr.shape;
  if (s.H <= 0) fail("shape field 'H' = " + std::to_string(s.H) + ": must be positive");
  if (s.P <= 0) fail("shape field 'P' = " + std::to_string(s.P) + ": must be positive");
  if (s.N <= 0) fail("shape field 'N' = " + std::to_string(s.N) + ": must be positive");
  if (s.G <= 0) fail("shape field 'G' = " + std::to_string(s.G) + ": must be positive");
  if (s.H % s.G != 0) {
    fail("shape field 'G' = " + std::to_string(s.G) + " does not divide H = " + std::to_string(s.H));
  }
  if (s.cu_seqlens.size() < 2) {
    fail("shape field 'cu_seqlens' has " + std::to_string(s.cu_seqlens.size()) +
         " entries: needs at least 2 (one sequence)");
  }
  if (s.cu_seqlens[0] != 0) {
    fail("shape field 'cu_seqlens'[0] = " + std::to_string(s.cu_seqlens[0]) + ": must be 0");
  }
  for (size_t i = 1; i < s.cu_seqlens.size(); ++i) {
    const int64_t a = s.cu_seqlens[i - 1], b = s.cu_seqlens[i];
    if (b < a) {
      fail("shape field 'cu_seqlens'[" + std::to_string(i) + "] = " + std::to_string(b) +
           " decreases (previous " + std::to_string(a) + ")");
    }
    if (b == a) {
      fail("shape field 'cu_seqlens': sequence " + std::to_string(i - 1) + " is empty (cu[" +
           std::to_string(i - 1) + "] = cu[" + std::to_string(i) + "] = " + std::to_string(a) + ")");
    }
  }
  const int64_t T = s.num_tokens();
  if (T > kMaxTokens) {
    fail("shape field 'cu_seqlens': " + std::to_string(T) + " tokens exceed the limit " +
         std::to_string(kMaxTokens));
  }
  const int64_t S = s.num_sequences();
  checked_product("the state (S*H*P*N)", {S, s.H, s.P, s.N});
  const int64_t thp = checked_product("x (T*H*P)", {T, s.H, s.P});
  const int64_t tgn = checked_product("B (T*G*N)", {T, s.G, s.N});

  check_size("x", pr.x, thp, "[T, H, P]");
  check_size("dt", pr.dt, T * s.H, "[T, H]");
  check_size("A", pr.A, s.H, "[H]");
  check_size("B", pr.B, tgn, "[T, G, N]");
  check_size("C", pr.C, tgn, "[T, G, N]");
  if (pr.has_z()) check_size("z", pr.z, thp, "[T, H, P]");
  if (pr.has_dt_bias()) check_size("dt_bias", pr.dt_bias, s.H, "[H]");
  if (pr.has_D() && int64_t(pr.D.size()) != s.H && int64_t(pr.D.size()) != s.H * s.P) {
    fail("problem field 'D': has " + std::to_string(pr.D.size()) + " elements, needs H = " +
         std::to_string(s.H) + " or H*P = " + std::to_string(s.H * s.P));
  }
  if (pr.has_initial_state()) {
    check_size("initial_state", pr.initial_state, S * s.H * s.P * s.N, "[S, H, P, N]");
  }

  const Format in = pr.formats.input;
  // A block-scaled format (int16_scaled) holds states: rows of codes sharing one scale.
  for (const auto& [field, f] : {std::pair{"input", in}, std::pair{"output", pr.formats.output}}) {
    if (block_scaled(f)) {
      fail(std::string("format field '") + field + "' = " + std::string(format_name(f)) +
           ": a block-scaled format is a state format only");
    }
  }
  check_values("x", pr.x, in);
  check_values("dt", pr.dt, in);
  check_values("B", pr.B, in);
  check_values("C", pr.C, in);
  check_values("z", pr.z, in);
  check_values("A", pr.A, Format::fp32);
  check_values("dt_bias", pr.dt_bias, Format::fp32);
  check_values("D", pr.D, Format::fp32);
  check_values("initial_state", pr.initial_state, pr.formats.state);

  if (std::isnan(pr.dt_limit_lo)) fail("option 'dt_limit' lo = " + num(pr.dt_limit_lo) + ": NaN");
  if (std::isnan(pr.dt_limit_hi)) fail("option 'dt_limit' hi = " + num(pr.dt_limit_hi) + ": NaN");
  if (pr.dt_limit_lo > pr.dt_limit_hi) {
    fail("option 'dt_limit' = (" + num(pr.dt_limit_lo) + ", " + num(pr.dt_limit_hi) +
         "): lo is above hi");
  }
}

DecodeProblem one_slot_per_sequence(Problem p) {
  const Shape& s = p.shape;
  const int64_t S = s.num_sequences();
  DecodeProblem d;
  d.slots = S;
  d.state_pool = p.has_initial_state() ? std::move(p.initial_state)
                                       : std::vector<float>(size_t(S * s.state_elements_per_sequence()), 0.0f);
  p.initial_state.clear();
  for (int64_t r = 0; r < S; ++r) d.slot_in.push_back(r);
  d.problem = std::move(p);
  return d;
}

void validate(const DecodeProblem& d) {
  validate(d.problem);
  const Problem& pr = d.problem;
  const Shape& s = pr.shape;
  const int64_t S = s.num_sequences();
  if (pr.has_initial_state()) {
    fail("decode problem field 'problem.initial_state' must be empty: requests read the state pool");
  }
  if (d.slots <= 0) fail("decode problem field 'slots' = " + std::to_string(d.slots) + ": must be positive");
  const int64_t pool = checked_product("the state pool (slots*H*P*N)", {d.slots, s.H, s.P, s.N});
  check_size("state_pool", d.state_pool, pool, "[slots, H, P, N]");
  check_values("state_pool", d.state_pool, pr.formats.state);
  if (int64_t(d.slot_in.size()) != S) {
    fail("decode problem field 'slot_in' has " + std::to_string(d.slot_in.size()) +
         " entries, one per request needs " + std::to_string(S));
  }
  if (!d.slot_out.empty() && int64_t(d.slot_out.size()) != S) {
    fail("decode problem field 'slot_out' has " + std::to_string(d.slot_out.size()) +
         " entries, one per request needs " + std::to_string(S));
  }
  if (d.pad_slot_id >= 0 && d.pad_slot_id < d.slots) {
    fail("decode problem field 'pad_slot_id' = " + std::to_string(d.pad_slot_id) +
         " is a valid slot index (0.." + std::to_string(d.slots - 1) + "); it must lie outside");
  }
  auto check_slot = [&](const char* field, int64_t i, int64_t v) {
    if (v != d.pad_slot_id && (v < 0 || v >= d.slots)) {
      fail(std::string("decode problem field '") + field + "'[" + std::to_string(i) + "] = " +
           std::to_string(v) + " is outside [0, " + std::to_string(d.slots) +
           ") and is not the pad slot id " + std::to_string(d.pad_slot_id));
    }
  };
  std::map<int64_t, int64_t> writer;  // slot -> request writing it
  for (int64_t i = 0; i < S; ++i) {
    check_slot("slot_in", i, d.slot_in[i]);
    if (!d.slot_out.empty()) check_slot("slot_out", i, d.slot_out[i]);
    if (d.is_pad(i)) continue;
    const int64_t out = d.out_slot(i);
    if (out == d.pad_slot_id) {
      fail("decode problem field 'slot_out'[" + std::to_string(i) +
           "] is the pad slot id but slot_in is not: a request either pads or writes");
    }
    auto [it, inserted] = writer.emplace(out, i);
    if (!inserted) {
      fail("decode problem: requests " + std::to_string(it->second) + " and " + std::to_string(i) +
           " both write slot " + std::to_string(out));
    }
  }
  for (int64_t i = 0; i < S; ++i) {
    if (d.is_pad(i)) continue;
    auto it = writer.find(d.slot_in[i]);
    if (it != writer.end() && it->second != i) {
      fail("decode problem: request " + std::to_string(i) + " reads slot " +
           std::to_string(d.slot_in[i]) + " that request " + std::to_string(it->second) +
           " writes; the result would depend on the order of requests");
    }
  }
}

}  // namespace ssmv
