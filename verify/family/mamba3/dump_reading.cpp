#include "verify/family/mamba3/dump_reading.h"

#include <set>

#include "verify/cli/usage_error.h"
#include "verify/tensor_file/tensor.h"

namespace ssmv::family::mamba3 {
namespace {

using ssmv::mamba3::Problem;
using tensor_file::Tensor;
using tensor_file::TensorMap;
using tensor_file::Where;

const std::set<std::string> kInputNames = {
    "x",      "B",      "C", "dt", "adt", "trap", "angles", "B_bias", "C_bias", "D", "z", "cu_seqlens",
    "initial_angle_state", "initial_states", "initial_B_prev", "initial_x_prev"};
const std::set<std::string> kOutputNames = {"y", "final_angle_state", "final_states", "final_B_prev", "final_x_prev"};

// A tensor of the dump, labelled with the file it came from.
class DumpTensors {
 public:
  DumpTensors(const TensorMap& m, std::string file) : m_(m), file_(std::move(file)) {}

  const Tensor* find(const std::string& name) const {
    const auto it = m_.find(name);
    return it == m_.end() ? nullptr : &it->second;
  }
  // The values of `name` in format f, its shape checked against `dims` (names for the message).
  std::vector<float> values(const std::string& name, Format f, const std::vector<int64_t>& dims,
                            const char* dim_names) const {
    const Tensor* t = find(name);
    if (t == nullptr) return {};
    Tensor labelled = *t;  // shares the bytes
    labelled.file = file_;
    if (labelled.shape != dims) {
      labelled.where().fail("shape", tensor_file::shape_string(labelled.shape) + " disagrees with " + dim_names + " = " +
                                         tensor_file::shape_string(dims));
    }
    return tensor_file::as_format_floats(labelled, f);
  }
  std::vector<float> required(const std::string& name, Format f, const std::vector<int64_t>& dims,
                              const char* dim_names) const {
    if (find(name) == nullptr) Where{file_, name}.fail("", "missing (a Mamba-3 dump needs x, B, C, dt, adt, trap, angles, B_bias and C_bias)");
    return values(name, f, dims, dim_names);
  }
  void only(const std::set<std::string>& names, const char* list) const {
    for (const auto& [name, t] : m_) {
      if (!names.count(name)) Where{file_, name}.fail("name", std::string("not a Mamba-3 tensor (expected ") + list + ")");
    }
  }
  const std::string& file() const { return file_; }

 private:
  const TensorMap& m_;
  std::string file_;
};

// Options of Mamba2's kernels that mean nothing for Mamba-3: each given is an error naming it.
void refuse_mamba2_options(const tensor_file::DumpOptions& o, const std::string& kernel) {
  const auto refuse = [&](bool given, const char* key, const char* why) {
    if (given) {
      throw cli::UsageError("'" + std::string(key) + "' (option or metadata ssmv." + key + ") given for kernel '" +
                            kernel + "': " + why);
    }
  };
  refuse(o.dt_softplus.has_value(), "dt_softplus", "Mamba-3's dt is taken as given (softplus applied before the kernel)");
  refuse(o.dt_limit.has_value(), "dt_limit", "Mamba-3's dt is taken as given");
  if (kernel == kStepKernel) {
    refuse(o.chunk_size.has_value(), "chunk_size", "the step kernel has no chunks");
    refuse(o.chunk_layout.has_value(), "chunk_layout", "the step kernel has no chunks");
  } else {
    refuse(o.chunk_layout.has_value() && *o.chunk_layout != "sequence", "chunk_layout",
           "mamba3_siso_combined's chunks start at every sequence's first token (chunk_layout sequence)");
  }
  refuse(o.prefill_tokens.has_value() && kernel != kHandoffKernel, "prefill_tokens",
         "only kernel mamba3_handoff has a prefill part");
  refuse(o.tokens_per_launch.has_value() && (kernel == kPrefillKernel || *o.tokens_per_launch != 1),
         "tokens_per_launch", "mamba_ssm's Mamba-3 step kernel takes one token per launch, its prefill all of them");
  refuse(o.decode_contract.has_value() && kernel != kHandoffKernel, "decode_contract",
         "only a hand-off (kernel mamba3_handoff) has a decode part");
}

}  // namespace

ResolvedDump resolve(const DumpFiles& f) {
  ResolvedDump d;
  d.kernel = f.options.kernel.value_or(kStepKernel);
  refuse_mamba2_options(f.options, d.kernel);
  if (d.kernel != kStepKernel) d.chunk_size = f.options.chunk_size.value_or(kDefaultPrefillChunk);
  if (d.kernel == kHandoffKernel) {
    if (!f.options.prefill_tokens || *f.options.prefill_tokens < 1) {
      throw cli::UsageError("kernel mamba3_handoff needs prefill_tokens >= 1 (option --prefill-tokens or metadata "
                            "ssmv.prefill_tokens): the tokens of every sequence that went through the prefill");
    }
    d.prefill_tokens = *f.options.prefill_tokens;
    d.decode_contract = f.options.decode_contract.value_or("mamba3_siso_step.production");
  }
  const DumpTensors in(*f.problem_tensors, f.problem_path);
  const DumpTensors out(*f.output_tensors, f.outputs_path);
  const std::string names = "x, B, C, dt, adt, trap, angles, B_bias, C_bias, D, z, cu_seqlens, initial_angle_state, "
                            "initial_states, initial_B_prev, initial_x_prev; y, final_angle_state, final_states, "
                            "final_B_prev, final_x_prev";
  // A full dump as the problem file (`ssmv compare`'s side a, whose outputs side b's are set
  // beside) or as the outputs file is fine: each file is read for its part.
  std::set<std::string> all = kInputNames;
  all.insert(kOutputNames.begin(), kOutputNames.end());
  in.only(all, names.c_str());
  if (f.problem_tensors != f.output_tensors) out.only(all, names.c_str());

  Problem& p = d.problem;
  p.formats.input = f.options.input_format.value_or(Format::bf16);
  p.formats.state = f.options.state_format.value_or(Format::fp32);
  p.formats.output = f.options.output_format.value_or(Format::bf16);
  // The shape from x [T, H, P], B [T, G, N] and angles [T, H, R].
  const Tensor* x = in.find("x");
  const Tensor* B = in.find("B");
  const Tensor* angles = in.find("angles");
  if (x == nullptr || B == nullptr || angles == nullptr) {
    in.required(x == nullptr ? "x" : B == nullptr ? "B" : "angles", Format::fp32, {}, "");
  }
  for (const Tensor* t : {x, B, angles}) {
    if (t->shape.size() != 3) {
      Where{f.problem_path, t->name}.fail("shape", tensor_file::shape_string(t->shape) + ": expected rank 3 (" +
                                                       (t == x ? "[T, H, P]" : t == B ? "[T, G, N]" : "[T, H, R]") + ")");
    }
  }
  const int64_t T = x->shape[0];
  p.shape.H = x->shape[1];
  p.shape.P = x->shape[2];
  p.shape.G = B->shape[1];
  p.shape.N = B->shape[2];
  p.shape.R = angles->shape[2];
  if (const Tensor* cu = in.find("cu_seqlens")) {
    Tensor labelled = *cu;
    labelled.file = f.problem_path;
    p.shape.cu_seqlens = tensor_file::to_int64(labelled);
  } else {
    p.shape.cu_seqlens = {0, T};
  }
  const ssmv::mamba3::Shape& s = p.shape;
  const int64_t S = s.num_sequences(), H = s.H, P = s.P, N = s.N, G = s.G, R = s.R;
  p.formats.angles = angles->dtype == tensor_file::DType::f32 || angles->dtype == tensor_file::DType::f64 ? Format::fp32 : Format::bf16;
  p.x = in.required("x", p.formats.input, {T, H, P}, "[T, H, P]");
  p.B = in.required("B", p.formats.input, {T, G, N}, "[T, G, N]");
  p.C = in.required("C", p.formats.input, {T, G, N}, "[T, G, N]");
  p.dt = in.required("dt", Format::fp32, {T, H}, "[T, H]");
  p.adt = in.required("adt", Format::fp32, {T, H}, "[T, H]");
  p.trap = in.required("trap", p.formats.input, {T, H}, "[T, H]");
  p.angles = in.required("angles", p.formats.angles, {T, H, R}, "[T, H, R]");
  p.B_bias = in.required("B_bias", Format::fp32, {H, N}, "[H, N]");
  p.C_bias = in.required("C_bias", Format::fp32, {H, N}, "[H, N]");
  p.D = in.values("D", Format::fp32, {H}, "[H]");
  p.z = in.values("z", p.formats.input, {T, H, P}, "[T, H, P]");
  p.initial.angle = in.values("initial_angle_state", Format::fp32, {S, H, R}, "[S, H, R]");
  p.initial.S = in.values("initial_states", p.formats.state, {S, H, P, N}, "[S, H, P, N]");
  p.initial.B_prev = in.values("initial_B_prev", p.formats.state, {S, H, N}, "[S, H, N]");
  p.initial.x_prev = in.values("initial_x_prev", p.formats.state, {S, H, P}, "[S, H, P]");
  ssmv::mamba3::validate(p);

  if (out.find("y") == nullptr) Where{f.outputs_path, "y"}.fail("", "missing (the kernel's output y [T, H, P])");
  d.outputs.y = out.values("y", p.formats.output, {T, H, P}, "[T, H, P]");
  d.outputs.final_state.angle = out.values("final_angle_state", Format::fp32, {S, H, R}, "[S, H, R]");
  d.outputs.final_state.S = out.values("final_states", p.formats.state, {S, H, P, N}, "[S, H, P, N]");
  d.outputs.final_state.B_prev = out.values("final_B_prev", p.formats.state, {S, H, N}, "[S, H, N]");
  d.outputs.final_state.x_prev = out.values("final_x_prev", p.formats.state, {S, H, P}, "[S, H, P]");
  d.contract = f.options.contract.value_or(d.kernel == kStepKernel ? "mamba3_siso_step.production"
                                                                    : "mamba3_siso_combined.production");
  return d;
}

tensor_file::TensorMap dump_tensors(const Problem& p, const Outputs& o) {
  const ssmv::mamba3::Shape& s = p.shape;
  const int64_t T = s.num_tokens(), S = s.num_sequences(), H = s.H, P = s.P, N = s.N, G = s.G, R = s.R;
  TensorMap m;
  const auto add = [&m](const std::string& name, Format f, std::vector<int64_t> shape, const std::vector<float>& v) {
    if (!v.empty()) m[name] = tensor_file::make_format_tensor(name, f, std::move(shape), v);
  };
  add("x", p.formats.input, {T, H, P}, p.x);
  add("B", p.formats.input, {T, G, N}, p.B);
  add("C", p.formats.input, {T, G, N}, p.C);
  add("dt", Format::fp32, {T, H}, p.dt);
  add("adt", Format::fp32, {T, H}, p.adt);
  add("trap", p.formats.input, {T, H}, p.trap);
  add("angles", p.formats.angles, {T, H, R}, p.angles);
  add("B_bias", Format::fp32, {H, N}, p.B_bias);
  add("C_bias", Format::fp32, {H, N}, p.C_bias);
  add("D", Format::fp32, {H}, p.D);
  add("z", p.formats.input, {T, H, P}, p.z);
  add("initial_angle_state", Format::fp32, {S, H, R}, p.initial.angle);
  add("initial_states", p.formats.state, {S, H, P, N}, p.initial.S);
  add("initial_B_prev", p.formats.state, {S, H, N}, p.initial.B_prev);
  add("initial_x_prev", p.formats.state, {S, H, P}, p.initial.x_prev);
  m["cu_seqlens"] = tensor_file::make_tensor("cu_seqlens", tensor_file::DType::i64, {S + 1},
                                             std::vector<double>(s.cu_seqlens.begin(), s.cu_seqlens.end()));
  add("y", p.formats.output, {T, H, P}, o.y);
  add("final_angle_state", Format::fp32, {S, H, R}, o.final_state.angle);
  add("final_states", p.formats.state, {S, H, P, N}, o.final_state.S);
  add("final_B_prev", p.formats.state, {S, H, N}, o.final_state.B_prev);
  add("final_x_prev", p.formats.state, {S, H, P}, o.final_state.x_prev);
  return m;
}

}  // namespace ssmv::family::mamba3
