#include "fast/mamba3/pack.h"

#include <algorithm>
#include <cstring>

#include "fast/mamba3/arithmetic.h"

namespace ssmv::mamba3_step {
namespace {

// Values exact in `f` (validate checked it) as that format's bits.
std::vector<uint8_t> bits(Format f, const std::vector<float>& v) {
  std::vector<uint8_t> out(v.size() * (f == Format::bf16 ? 2 : 4));
  for (size_t i = 0; i < v.size(); ++i) store(f, out.data(), int64_t(i), v[i]);
  return out;
}

std::vector<float> values(Format f, const std::vector<uint8_t>& b) {
  const size_t n = b.size() / (f == Format::bf16 ? 2 : 4);
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = load(f, b.data(), int64_t(i));
  return out;
}

}  // namespace

HostLaunch::HostLaunch(const ssmv::mamba3::Problem& pr) {
  mamba3_step::validate(pr);
  const auto& sh = pr.shape;
  const int64_t S_ = sh.num_sequences();
  for (int64_t s = 0; s < S_; ++s) launches_ = std::max(launches_, sh.seq_len(s));
  tokens.assign(size_t(launches_ * S_), -1);
  for (int64_t k = 0; k < launches_; ++k) {
    for (int64_t s = 0; s < S_; ++s) {
      if (k < sh.seq_len(s)) tokens[size_t(k * S_ + s)] = sh.cu_seqlens[size_t(s)] + k;
    }
  }
  const Format in = pr.formats.input;
  x = bits(in, pr.x);
  B = bits(in, pr.B);
  C = bits(in, pr.C);
  trap = bits(in, pr.trap);
  angles = bits(pr.formats.angles, pr.angles);
  z = bits(in, pr.z);
  y.assign(size_t(sh.num_tokens() * sh.H * sh.P) * (pr.formats.output == Format::bf16 ? 2 : 4), 0);
  dt = pr.dt;
  adt = pr.adt;
  B_bias = pr.B_bias;
  C_bias = pr.C_bias;
  D = pr.D;
  if (pr.has_initial_state()) {
    angle_state = pr.initial.angle;
    S = pr.initial.S;
    B_prev = pr.initial.B_prev;
    x_prev = pr.initial.x_prev;
  } else {
    angle_state.assign(size_t(S_ * sh.H * sh.R), 0.0f);
    S.assign(size_t(S_ * sh.H * sh.P * sh.N), 0.0f);
    B_prev.assign(size_t(S_ * sh.H * sh.N), 0.0f);
    x_prev.assign(size_t(S_ * sh.H * sh.P), 0.0f);
  }
  base_.batch = S_;
  base_.H = sh.H;
  base_.P = sh.P;
  base_.N = sh.N;
  base_.G = sh.G;
  base_.R = sh.R;
  base_.input = in;
  base_.angles_format = pr.formats.angles;
  base_.output = pr.formats.output;
  base_.x = x.data();
  base_.B = B.data();
  base_.C = C.data();
  base_.dt = dt.data();
  base_.adt = adt.data();
  base_.trap = trap.data();
  base_.angles = angles.data();
  base_.B_bias = B_bias.data();
  base_.C_bias = C_bias.data();
  base_.D = pr.has_D() ? D.data() : nullptr;
  base_.z = pr.has_z() ? z.data() : nullptr;
  base_.y = y.data();
  base_.angle_state = angle_state.data();
  base_.S = S.data();
  base_.B_prev = B_prev.data();
  base_.x_prev = x_prev.data();
}

Params HostLaunch::params(int64_t k) const {
  Params p = base_;
  p.token = tokens.data() + k * base_.batch;
  return p;
}

Result HostLaunch::result() const {
  Result r;
  r.y = values(base_.output, y);
  r.state.angle = angle_state;
  r.state.S = S;
  r.state.B_prev = B_prev;
  r.state.x_prev = x_prev;
  return r;
}

}  // namespace ssmv::mamba3_step
