#include "verify/tensor_file/problem_file.h"

#include <optional>
#include <set>
#include <stdexcept>
#include <type_traits>

#include "verify/tensor_file/tensor_file.h"

namespace ssmv::tensor_file {
namespace {

const std::set<std::string> kProblemNames = {"x", "dt", "A", "B", "C", "D", "z", "dt_bias", "initial_states", "cu_seqlens",
                                             "prefill_tokens", "initial_states_scale"};
const std::set<std::string> kOutputNames = {"y", "final_states", "final_states_scale"};

// One expected dimension: its name and its value, or kFree when any value is accepted.
constexpr int64_t kFree = -1;
struct Dim {
  std::string name;
  int64_t value;
};

// Checks t's shape against `dims`; on mismatch: "[4, 2, 16] disagrees with
// [tokens=5, G, N] (<why>)". Free dimensions must still be positive.
void expect_shape(const Tensor& t, const std::vector<Dim>& dims, const std::string& why) {
  bool ok = t.shape.size() == dims.size();
  for (size_t i = 0; ok && i < dims.size(); ++i) {
    ok = dims[i].value == kFree ? t.shape[i] > 0 : t.shape[i] == dims[i].value;
  }
  if (ok) return;
  std::string want = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) want += ", ";
    want += dims[i].name;
    if (dims[i].value != kFree) {
      want += '=';
      want += std::to_string(dims[i].value);
    }
  }
  want += "]";
  t.where().fail("shape", shape_string(t.shape) + " disagrees with " + want + (why.empty() ? "" : " (" + why + ")"));
}

const Tensor* find(const TensorMap& m, const std::string& name) {
  const auto it = m.find(name);
  return it == m.end() ? nullptr : &it->second;
}

const Tensor& require(const TensorMap& m, const std::string& name, const std::string& file) {
  const Tensor* t = find(m, name);
  if (t == nullptr) Where{file, name}.fail("", "missing (a problem needs x, dt, A, B and C)");
  return *t;
}

void check_names(const TensorMap& m, const std::string& file) {
  for (const auto& [name, t] : m) {
    const int64_t n = t.element_count();
    if (n < 0 || t.bytes().size() != size_t(n) * dtype_size(t.dtype)) {
      Where{file, name}.fail("data", std::to_string(t.bytes().size()) + " bytes do not hold shape " + shape_string(t.shape));
    }
    if (!kProblemNames.count(name) && !kOutputNames.count(name)) {
      Where{file, name}.fail("name", "not a problem or output tensor (expected x, dt, A, B, C and optionally D, z, "
                                     "dt_bias, initial_states, cu_seqlens, prefill_tokens; y, final_states)");
    }
  }
}

// Same tensor, but with the caller's file label (tensors built in memory carry none). The
// copy shares the bytes (a view or a shared buffer), so relabelling costs no copy of them.
Tensor labelled(const Tensor& t, const std::string& file) {
  Tensor c = t;
  c.file = file;
  return c;
}

// t's values narrowed to f (bf16 and fp16 as their bits), or as floats (floats()).
FormatValues values(const Tensor& t, const std::string& file, Format f) {
  if (t.file == file) return as_format_values(t, f);
  return as_format_values(labelled(t, file), f);
}
std::vector<float> floats(const Tensor& t, const std::string& file, Format f) {
  if (t.file == file) return as_format_floats(t, f);
  return as_format_floats(labelled(t, file), f);
}

// A state tensor `name` [S, H, P, N] (its shape checked by the caller) in the state format f,
// as Values: FormatValues narrowed to f (a kernel's final states) or floats (a problem's
// initial states, std::vector<float>). A block-scaled f (int16_scaled) reads its codes with
// `name`_scale, one decode scale per row (s, h, p): [S, H, P], or [S, H, P, 1] as FlashInfer's
// state_scale. A scale tensor beside another format, or without its state, is an error.
template <class Values>
Values state_values(const TensorMap& m, const std::string& name, const std::string& file, Format f, const Shape& s,
                    int64_t S) {
  constexpr bool narrowed = std::is_same_v<Values, FormatValues>;
  const std::string scale_name = name + "_scale";
  const Tensor* t = find(m, name);
  const Tensor* scale = find(m, scale_name);
  if (!block_scaled(f)) {
    if (scale != nullptr) {
      Where{file, scale_name}.fail("", "given with the state format " + std::string(format_name(f)) +
                                           ", which has no scales (only int16_scaled has)");
    }
    if (t == nullptr) return Values{};
    if constexpr (narrowed) {
      return values(*t, file, f);
    } else {
      return floats(*t, file, f);
    }
  }
  if (t == nullptr) {
    if (scale != nullptr) Where{file, scale_name}.fail("", "given without '" + name + "'");
    return Values{};
  }
  if (scale == nullptr) {
    Where{file, scale_name}.fail("", "missing (the state format " + std::string(format_name(f)) + " needs the decode "
                                     "scale of every row of '" + name + "': [S, H, P] or [S, H, P, 1])");
  }
  const Tensor sl = labelled(*scale, file);
  const std::vector<Dim> rows = {{"S", S}, {"H", s.H}, {"P", s.P}};
  std::vector<Dim> rows1 = rows;
  rows1.push_back({"1", 1});
  expect_shape(sl, scale->shape.size() == 4 ? rows1 : rows, "one scale per row of '" + name + "'; or [S, H, P, 1]");
  Values v = as_scaled_values(labelled(*t, file), sl, f);
  if constexpr (narrowed) v.narrow(f);  // decoded values are floats: nothing is copied
  return v;
}

}  // namespace

Problem problem_from_tensors(const TensorMap& m, const std::string& file, const ProblemFileOptions& o, Layout* layout_out) {
  check_names(m, file);
  const Tensor& x = require(m, "x", file);
  const Tensor& dt = require(m, "dt", file);
  const Tensor& A = require(m, "A", file);
  const Tensor& B = require(m, "B", file);
  const Tensor& C = require(m, "C", file);
  const Tensor* cu = find(m, "cu_seqlens");
  const Tensor xl = labelled(x, file);

  // The layout and the token axis: packed [T, ...], or batched [batch, L, ...].
  Layout layout;
  int64_t batch = 0, L = 0, T = 0;
  const std::string from_x = "from x " + shape_string(x.shape);
  if (x.shape.size() == 3) {
    layout = Layout::packed;
    T = x.shape[0];
  } else if (x.shape.size() == 4 && cu != nullptr && x.shape[0] == 1) {
    layout = Layout::packed;  // varlen kernels' [1, T, H, P]
    T = x.shape[1];
  } else if (x.shape.size() == 4) {
    if (cu != nullptr) {
      Where{file, "cu_seqlens"}.fail("", "given with the batched layout x " + shape_string(x.shape) +
                                             " (batch > 1 means equal lengths); varlen data uses the packed layout "
                                             "x [tokens, H, P] with cu_seqlens");
    }
    layout = Layout::batched;
    batch = x.shape[0];
    L = x.shape[1];
    T = batch * L;  // both bounded by the file size, so the product fits
  } else {
    xl.where().fail("shape", shape_string(x.shape) + " is neither [tokens, H, P] (packed) nor [batch, L, H, P] (batched)");
  }
  const bool lead_axis = x.shape.size() == 4;  // tensors carry [batch, L, ...] or [1, T, ...]
  const int64_t H = x.shape[x.shape.size() - 2], P = x.shape.back();
  if (T <= 0 || H <= 0 || P <= 0) xl.where().fail("shape", shape_string(x.shape) + ": every dimension must be positive");

  // Leading dims of token tensors: [T] packed, [batch, L] batched, [1, T] varlen-with-batch.
  std::vector<Dim> lead;
  std::string lead_why;
  if (layout == Layout::batched) {
    lead = {{"batch", batch}, {"L", L}};
    lead_why = "batch and L " + from_x;
  } else if (lead_axis) {
    lead = {{"1", 1}, {"tokens", T}};
    lead_why = "tokens " + from_x;
  } else {
    lead = {{"tokens", T}};
    lead_why = "tokens " + from_x;
  }
  auto with = [&](std::vector<Dim> tail) {
    std::vector<Dim> d = lead;
    d.insert(d.end(), tail.begin(), tail.end());
    return d;
  };
  const Tensor Bl = labelled(B, file), Cl = labelled(C, file), dtl = labelled(dt, file), Al = labelled(A, file);
  expect_shape(dtl, with({{"H", H}}), lead_why + ", H " + from_x);
  expect_shape(Al, {{"H", H}}, "H " + from_x);
  expect_shape(Bl, with({{"G", kFree}, {"N", kFree}}), lead_why);
  const int64_t G = B.shape[B.shape.size() - 2], N = B.shape.back();
  const std::string from_b = "G and N from B " + shape_string(B.shape);
  expect_shape(Cl, with({{"G", G}, {"N", N}}), lead_why + ", " + from_b);

  Problem p;
  p.formats = o.formats;
  p.dt_softplus = o.dt_softplus;
  p.dt_limit_lo = o.dt_limit_lo;
  p.dt_limit_hi = o.dt_limit_hi;
  p.shape.H = H;
  p.shape.P = P;
  p.shape.G = G;
  p.shape.N = N;
  if (cu != nullptr) {
    const Tensor cl = labelled(*cu, file);
    if (cu->shape.size() != 1 || cu->shape[0] < 2) {
      cl.where().fail("shape", shape_string(cu->shape) + " is not [S + 1] with S >= 1 sequences");
    }
    p.shape.cu_seqlens = to_int64(cl);
    if (p.shape.cu_seqlens.back() != T) {
      cl.where().fail("values", "last entry " + std::to_string(p.shape.cu_seqlens.back()) + " is not the token count " +
                                    std::to_string(T) + " " + from_x);
    }
  } else if (layout == Layout::batched) {
    for (int64_t s = 0; s <= batch; ++s) p.shape.cu_seqlens.push_back(s * L);
  } else {
    p.shape.cu_seqlens = {0, T};
  }
  const int64_t S = p.shape.num_sequences();

  p.x = values(x, file, o.formats.input);
  p.dt = values(dt, file, o.formats.input);
  p.A = floats(A, file, Format::fp32);
  p.B = values(B, file, o.formats.input);
  p.C = values(C, file, o.formats.input);
  if (const Tensor* z = find(m, "z")) {
    expect_shape(labelled(*z, file), with({{"H", H}, {"P", P}}), lead_why + ", H and P " + from_x);
    p.z = values(*z, file, o.formats.input);
  }
  if (const Tensor* D = find(m, "D")) {
    if (D->shape.size() == 1) {
      expect_shape(labelled(*D, file), {{"H", H}}, "H " + from_x + "; or [H, P]");
    } else {
      expect_shape(labelled(*D, file), {{"H", H}, {"P", P}}, "H and P " + from_x + "; or [H]");
    }
    p.D = floats(*D, file, Format::fp32);
  }
  if (const Tensor* b = find(m, "dt_bias")) {
    expect_shape(labelled(*b, file), {{"H", H}}, "H " + from_x);
    p.dt_bias = floats(*b, file, Format::fp32);
  }
  if (const Tensor* h0 = find(m, "initial_states")) {
    expect_shape(labelled(*h0, file), {{"S", S}, {"H", H}, {"P", P}, {"N", N}},
                 "S sequences, H and P " + from_x + ", N from B " + shape_string(B.shape));
  }
  p.initial_state = state_values<std::vector<float>>(m, "initial_states", file, o.formats.state, p.shape, S);
  try {
    validate(p);
  } catch (const ProblemError& e) {
    Where{file, ""}.fail("", e.what());
  }
  if (layout_out) *layout_out = layout;
  return p;
}

Problem load_problem_file(const std::string& path, const ProblemFileOptions& options) {
  return problem_from_tensors(load_tensor_file(path), path, options);
}

KernelOutputs outputs_from_tensors(const TensorMap& m, const std::string& file, const Problem& p) {
  check_names(m, file);
  const Shape& s = p.shape;
  const int64_t T = s.num_tokens(), S = s.num_sequences();
  const Tensor* y = find(m, "y");
  if (y == nullptr) Where{file, "y"}.fail("", "missing (the outputs need y)");
  const Tensor yl = labelled(*y, file);
  // Batched [S, L, H, P] is accepted when every sequence has length L: its row-major order
  // is then exactly the packed order.
  bool equal_lengths = true;
  for (int64_t i = 0; i < S; ++i) equal_lengths = equal_lengths && s.seq_len(i) == s.seq_len(0);
  const std::string why = "tokens, H and P of the problem (cu_seqlens " + std::to_string(S) + " sequences)";
  if (y->shape.size() == 4 && equal_lengths) {
    expect_shape(yl, {{"batch", S}, {"L", s.seq_len(0)}, {"H", s.H}, {"P", s.P}}, why);
  } else if (y->shape.size() == 4 && y->shape[0] == 1) {
    expect_shape(yl, {{"1", 1}, {"tokens", T}, {"H", s.H}, {"P", s.P}}, why);
  } else {
    expect_shape(yl, {{"tokens", T}, {"H", s.H}, {"P", s.P}}, why);
  }
  KernelOutputs out;
  out.y = values(*y, file, p.formats.output);
  if (const Tensor* f = find(m, "final_states")) {
    expect_shape(labelled(*f, file), {{"S", S}, {"H", s.H}, {"P", s.P}, {"N", s.N}}, "sequences, H, P and N of the problem");
  }
  out.final_states = state_values<FormatValues>(m, "final_states", file, p.formats.state, s, S);
  return out;
}

std::optional<std::vector<int64_t>> prefill_tokens_from_tensors(const TensorMap& m, const std::string& file,
                                                                const Problem& p) {
  const Tensor* t = find(m, "prefill_tokens");
  if (t == nullptr) return std::nullopt;
  const Tensor tl = labelled(*t, file);
  const int64_t S = p.shape.num_sequences();
  expect_shape(tl, {{"S", S}}, "one prefix length per sequence of the problem");
  std::vector<int64_t> k = to_int64(tl);
  for (int64_t q = 0; q < S; ++q) {
    if (k[q] < 0 || k[q] > p.shape.seq_len(q)) {
      tl.where().fail("values", "element " + std::to_string(q) + " = " + std::to_string(k[q]) +
                                    " is outside [0, " + std::to_string(p.shape.seq_len(q)) + "], the length of sequence " +
                                    std::to_string(q));
    }
  }
  return k;
}

KernelOutputs load_outputs_file(const std::string& path, const Problem& problem) {
  return outputs_from_tensors(load_tensor_file(path), path, problem);
}

// A block-scaled state has no tensor of its decoded values: its codes and scales are the
// kernel's to write.
void expect_writable_state(const Problem& p, const char* who) {
  if (block_scaled(p.formats.state)) {
    throw std::invalid_argument(std::string(who) + ": a " + std::string(format_name(p.formats.state)) +
                                " state is written by its kernel as codes and scales, not from decoded values");
  }
}

TensorMap problem_tensors(const Problem& p) {
  expect_writable_state(p, "problem_tensors");
  const Shape& s = p.shape;
  const int64_t T = s.num_tokens(), S = s.num_sequences();
  const Format in = p.formats.input;
  TensorMap m;
  auto add = [&](const std::string& name, Format f, std::vector<int64_t> shape, const FormatValues& v) {
    if (!v.empty()) m[name] = make_format_tensor(name, f, std::move(shape), v);
  };
  add("x", in, {T, s.H, s.P}, p.x);
  add("dt", in, {T, s.H}, p.dt);
  add("A", Format::fp32, {s.H}, p.A);
  add("B", in, {T, s.G, s.N}, p.B);
  add("C", in, {T, s.G, s.N}, p.C);
  add("z", in, {T, s.H, s.P}, p.z);
  add("dt_bias", Format::fp32, {s.H}, p.dt_bias);
  add("D", Format::fp32, p.d_mode() == DMode::per_head ? std::vector<int64_t>{s.H} : std::vector<int64_t>{s.H, s.P}, p.D);
  add("initial_states", p.formats.state, {S, s.H, s.P, s.N}, p.initial_state);
  m["cu_seqlens"] = make_tensor("cu_seqlens", DType::i64, {S + 1},
                                std::vector<double>(s.cu_seqlens.begin(), s.cu_seqlens.end()));
  return m;
}

TensorMap output_tensors(const KernelOutputs& o, const Problem& p) {
  expect_writable_state(p, "output_tensors");
  const Shape& s = p.shape;
  TensorMap m;
  m["y"] = make_format_tensor("y", p.formats.output, {s.num_tokens(), s.H, s.P}, o.y);
  if (!o.final_states.empty()) {
    m["final_states"] = make_format_tensor("final_states", p.formats.state, {s.num_sequences(), s.H, s.P, s.N},
                                           o.final_states);
  }
  return m;
}

}  // namespace ssmv::tensor_file
