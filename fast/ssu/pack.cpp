#include "fast/ssu/pack.h"

#include <cstring>
#include <string>

#include "fast/common/storage_bytes.h"

namespace ssmv::ssu {
namespace {

// Values exact in format f (validate checked it) as their bits: an fp32 value is its own
// bits; a 16-bit value is its own rounding to nearest even (exact, so no rounding happens).
std::vector<uint8_t> encode(Format f, const float* v, size_t n) {
  std::vector<uint8_t> out(n * storage_bytes(f));
  if (f == Format::fp32) {
    if (n != 0) std::memcpy(out.data(), v, out.size());
    return out;
  }
  for (size_t i = 0; i < n; ++i) {
    const uint16_t w = static_cast<uint16_t>(round_nearest_even(f, static_cast<double>(v[i])));
    std::memcpy(out.data() + 2 * i, &w, 2);
  }
  return out;
}
std::vector<uint8_t> encode(Format f, const std::vector<float>& v) { return encode(f, v.data(), v.size()); }
// The same of a tensor; one held as f's bits is copied as it is.
std::vector<uint8_t> encode(Format f, const FormatValues& v) {
  if (!v.holds_bits()) return encode(f, v.floats(), v.size());
  if (v.format() != f) return encode(f, v.to_vector());
  std::vector<uint8_t> out(v.size() * 2);
  if (!v.empty()) std::memcpy(out.data(), v.bits(), out.size());
  return out;
}

std::vector<Bits> decode_bits(Format f, const std::vector<uint8_t>& raw) {
  std::vector<Bits> out(raw.size() / storage_bytes(f));
  for (size_t i = 0; i < out.size(); ++i) {
    if (f == Format::fp32) {
      uint32_t w;
      std::memcpy(&w, raw.data() + 4 * i, 4);
      out[i] = w;
    } else {
      uint16_t w;
      std::memcpy(&w, raw.data() + 2 * i, 2);
      out[i] = w;
    }
  }
  return out;
}

std::vector<int32_t> narrow(const std::vector<int64_t>& v) { return std::vector<int32_t>(v.begin(), v.end()); }

}  // namespace

void validate(const DecodeProblem& d, const Config& config) {
  ssmv::validate(d);
  const Problem& pr = d.problem;
  const Shape& s = pr.shape;
  auto fail = [](const std::string& m) { throw ProblemError("ssu: " + m); };
  if (s.P > kMaxP) fail("field 'P' = " + std::to_string(s.P) + ": the kernel supports P <= " + std::to_string(kMaxP));
  if (s.N > kMaxN) fail("field 'N' = " + std::to_string(s.N) + ": the kernel supports N <= " + std::to_string(kMaxN));
  if (s.H > 65535) fail("field 'H' = " + std::to_string(s.H) + ": the kernel supports H <= 65535");
  if (block_scaled(pr.formats.state)) {
    fail("format field 'state' = " + std::string(format_name(pr.formats.state)) +
         ": the bundled kernel stores fp32, bf16 or fp16 states");
  }
  if (d.slots > INT32_MAX) fail("field 'slots' = " + std::to_string(d.slots) + ": the kernel indexes slots in 32 bits");
  if (d.pad_slot_id < INT32_MIN || d.pad_slot_id > INT32_MAX) {
    fail("field 'pad_slot_id' = " + std::to_string(d.pad_slot_id) + ": must fit in 32 bits");
  }
  if (s.num_tokens() > INT32_MAX) fail("field 'cu_seqlens' ends at " + std::to_string(s.num_tokens()) + ": more than 2^31 - 1 tokens");
  if (!config.token_state_slots.empty()) {
    if (int64_t(config.token_state_slots.size()) != s.num_tokens()) {
      fail("option 'token_state_slots' has " + std::to_string(config.token_state_slots.size()) +
           " entries; one per token needs " + std::to_string(s.num_tokens()));
    }
    for (size_t q = 0; q < config.token_state_slots.size(); ++q) {
      const int64_t v = config.token_state_slots[q];
      if (v != d.pad_slot_id && (v < 0 || v >= d.slots)) {
        fail("option 'token_state_slots'[" + std::to_string(q) + "] = " + std::to_string(v) + " is outside [0, " +
             std::to_string(d.slots) + ") and is not the pad slot id " + std::to_string(d.pad_slot_id));
      }
    }
  }
}

HostLaunch::HostLaunch(const DecodeProblem& d, const Config& config) {
  validate(d, config);
  const Problem& pr = d.problem;
  const Shape& s = pr.shape;
  const Formats& f = pr.formats;
  indices.cu_seqlens = narrow(s.cu_seqlens);
  indices.slot_in = narrow(d.slot_in);
  indices.slot_out = narrow(d.slot_out);
  indices.token_state_slots = narrow(config.token_state_slots);
  state = encode(f.state, d.state_pool);
  x = encode(f.input, pr.x);
  dt = encode(f.input, pr.dt);
  B = encode(f.input, pr.B);
  C = encode(f.input, pr.C);
  z = encode(f.input, pr.z);
  y.assign(size_t(s.num_tokens() * s.H * s.P) * storage_bytes(f.output), 0);
  A = pr.A;
  dt_bias = pr.dt_bias;
  D = pr.D;

  Params& p = params_;
  p.num_requests = static_cast<int32_t>(s.num_sequences());
  p.num_tokens = static_cast<int32_t>(s.num_tokens());
  p.H = static_cast<int32_t>(s.H);
  p.P = static_cast<int32_t>(s.P);
  p.N = static_cast<int32_t>(s.N);
  p.G = static_cast<int32_t>(s.G);
  p.slots = static_cast<int32_t>(d.slots);
  p.pad_slot_id = static_cast<int32_t>(d.pad_slot_id);
  p.input_format = f.input;
  p.state_format = f.state;
  p.output_format = f.output;
  p.dt_softplus = pr.dt_softplus;
  p.dt_limit_lo = pr.dt_limit_lo;
  p.dt_limit_hi = pr.dt_limit_hi;
  p.d_mode = pr.d_mode();
  p.cu_seqlens = indices.cu_seqlens.data();
  p.slot_in = indices.slot_in.data();
  p.slot_out = indices.slot_out.empty() ? nullptr : indices.slot_out.data();
  p.token_state_slots = indices.token_state_slots.empty() ? nullptr : indices.token_state_slots.data();
  p.state = state.data();
  p.state_stride_p = s.N;
  p.state_stride_head = s.P * s.N;
  p.state_stride_slot = s.H * s.P * s.N;
  p.x = x.data();
  p.x_stride_head = s.P;
  p.x_stride_token = s.H * s.P;
  p.dt = dt.data();
  p.dt_stride_token = s.H;
  p.A = A.data();
  p.dt_bias = dt_bias.empty() ? nullptr : dt_bias.data();
  p.D = D.empty() ? nullptr : D.data();
  p.D_stride_head = p.d_mode == DMode::per_head_dim ? s.P : 0;
  p.B = B.data();
  p.B_stride_group = s.N;
  p.B_stride_token = s.G * s.N;
  p.C = C.data();
  p.C_stride_group = s.N;
  p.C_stride_token = s.G * s.N;
  p.z = z.empty() ? nullptr : z.data();
  p.z_stride_head = s.P;
  p.z_stride_token = s.H * s.P;
  p.y = y.data();
  p.y_stride_head = s.P;
  p.y_stride_token = s.H * s.P;
  check_params(p);
  check_indices(p, indices);
}

Result decode_result(Format output, const std::vector<uint8_t>& y, Format state, const std::vector<uint8_t>& pool) {
  return Result{decode_bits(output, y), decode_bits(state, pool)};
}

Result HostLaunch::result() const { return decode_result(params_.output_format, y, params_.state_format, state); }

}  // namespace ssmv::ssu
