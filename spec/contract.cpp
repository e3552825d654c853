#include "spec/contract.h"

#include <algorithm>

namespace ssmv {

std::string_view family_name(Family f) { return f == Family::sequential ? "sequential" : "chunked"; }

std::string_view reduction_order_name(ReductionOrder o) {
  switch (o) {
    case ReductionOrder::sequential_fma: return "sequential_fma";
    case ReductionOrder::tree: return "tree";
    case ReductionOrder::mma_m16n8k16: return "mma_m16n8k16";
    case ReductionOrder::any_order: return "any_order";
  }
  return "?";
}

std::string_view point_name(Point p) {
  switch (p) {
    case Point::dt_scaled_B: return "dt_scaled_B";
    case Point::decayed_CB: return "decayed_CB";
    case Point::incoming_state: return "incoming_state";
    case Point::stored_state: return "stored_state";
    case Point::output: return "output";
    case Point::final_incoming_state: return "final_incoming_state";
  }
  return "?";
}

std::string_view rounding_mode_name(RoundingMode m) {
  return m == RoundingMode::stochastic ? "stochastic" : "nearest";
}

bool parse_rounding_mode(std::string_view text, RoundingMode& out) {
  if (text == "nearest") {
    out = RoundingMode::nearest;
  } else if (text == "stochastic") {
    out = RoundingMode::stochastic;
  } else {
    return false;
  }
  return true;
}

bool stochastic_rounding_allowed(Point p, FormatRef f) {
  return (p == Point::stored_state || p == Point::output) && f != FormatRef::fp32;
}

std::string_view format_ref_name(FormatRef f) {
  switch (f) {
    case FormatRef::input: return "input";
    case FormatRef::state: return "state";
    case FormatRef::output: return "output";
    case FormatRef::fp32: return "fp32";
    case FormatRef::bf16: return "bf16";
    case FormatRef::fp16: return "fp16";
  }
  return "?";
}

std::string_view sum_name(Sum s) {
  switch (s) {
    case Sum::cumsum: return "cumsum";
    case Sum::chunk_state: return "chunk_state";
    case Sum::state_passing: return "state_passing";
    case Sum::cb: return "CB";
    case Sum::y: return "y";
  }
  return "?";
}

std::string_view chunk_layout_name(ChunkLayout l) { return l == ChunkLayout::global ? "global" : "sequence"; }

bool parse_sum(std::string_view text, Sum& out) {
  for (Sum s : {Sum::cumsum, Sum::chunk_state, Sum::state_passing, Sum::cb, Sum::y}) {
    if (sum_name(s) == text) {
      out = s;
      return true;
    }
  }
  return false;
}

bool parse_chunk_layout(std::string_view text, ChunkLayout& out) {
  for (ChunkLayout l : {ChunkLayout::sequence, ChunkLayout::global}) {
    if (chunk_layout_name(l) == text) {
      out = l;
      return true;
    }
  }
  return false;
}

const std::vector<Sum>& family_sums(Family f) {
  static const std::vector<Sum> sequential{Sum::y};
  static const std::vector<Sum> chunked{Sum::cumsum, Sum::chunk_state, Sum::state_passing, Sum::cb, Sum::y};
  return f == Family::sequential ? sequential : chunked;
}

const Reduction* find_reduction(const Contract& c, Sum s) {
  for (const Reduction& r : c.reductions) {
    if (r.sum == s) return &r;
  }
  return nullptr;
}

Reduction undeclared_reduction(Sum s) {
  Reduction r;
  r.sum = s;
  r.what = std::string(sum_name(s)) + ": not declared by the contract";
  r.order = ReductionOrder::sequential_fma;
  r.partials = 1;
  r.detail = "not declared: bounded as one sequential chain of fused multiply-adds (partials 1, the deepest order)";
  return r;
}

Reduction reduction_of(const Contract& c, Sum s) {
  const Reduction* r = find_reduction(c, s);
  return r != nullptr ? *r : undeclared_reduction(s);
}

namespace {
int64_t ceil_log2(int64_t v) {
  int64_t d = 0;
  while ((int64_t{1} << d) < v) ++d;
  return d;
}
}  // namespace

int64_t reduction_depth(const Reduction& r, int64_t length) {
  if (length <= 1) return length;  // one term: at most the rounding of its own product
  switch (r.order) {
    case ReductionOrder::sequential_fma: {
      const int64_t k = r.partials < 1 ? 1 : r.partials;
      return (length + k - 1) / k + ceil_log2(k);
    }
    case ReductionOrder::tree: return ceil_log2(length);
    case ReductionOrder::mma_m16n8k16: return (length + 15) / 16;
    case ReductionOrder::any_order: return length;
  }
  return length;
}

bool describes_input_format(const Contract& c, Format input) {
  return c.input_formats.empty() || std::find(c.input_formats.begin(), c.input_formats.end(), input) != c.input_formats.end();
}

Format resolve(FormatRef ref, Format input, Format state, Format output) {
  switch (ref) {
    case FormatRef::input: return input;
    case FormatRef::state: return state;
    case FormatRef::output: return output;
    case FormatRef::fp32: return Format::fp32;
    case FormatRef::bf16: return Format::bf16;
    case FormatRef::fp16: return Format::fp16;
  }
  return Format::fp32;
}

std::vector<ChunkPiece> chunk_pieces(int64_t begin, int64_t end, int64_t chunk_size, ChunkLayout layout) {
  std::vector<ChunkPiece> out;
  for (int64_t t = begin; t < end;) {
    const int64_t c0 = layout == ChunkLayout::global ? t / chunk_size * chunk_size : t;
    const int64_t stop = std::min(end, c0 + chunk_size);
    out.push_back({t, stop - t, c0});
    t = stop;
  }
  return out;
}

}  // namespace ssmv
