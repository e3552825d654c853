#include "fast/ssu/twin.h"

#include <array>
#include <cstring>
#include <vector>

#include "fast/common/parallel.h"
#include "fast/ssu/arithmetic.h"
#include "spec/format.h"

namespace ssmv::ssu {

// The kernel's butterfly over the L lanes of a row: at each level lane u adds the value of
// lane u ^ offset (offsets L/2, ..., 1); every lane ends with the same sum.
float butterfly_sum(std::array<float, kWarp> v, int L) {
  for (int offset = L / 2; offset >= 1; offset /= 2) {
    std::array<float, kWarp> next;
    for (int u = 0; u < L; ++u) next[u] = v[u] + v[u ^ offset];
    v = next;
  }
  return v[0];
}

namespace {

// Element i of a tensor of format f, as the fp32 the kernel computes with (exact).
float load(Format f, const void* base, int64_t i) {
  if (f == Format::fp32) {
    float v;
    std::memcpy(&v, static_cast<const float*>(base) + i, sizeof v);
    return v;
  }
  const uint16_t b = static_cast<const uint16_t*>(base)[i];
  return static_cast<float>(decode(f, b));
}

// Stores v rounded to nearest even in format f (the kernel's cvt.rn).
void store(Format f, void* base, int64_t i, float v) {
  if (f == Format::fp32) {
    std::memcpy(static_cast<float*>(base) + i, &v, sizeof v);
    return;
  }
  static_cast<uint16_t*>(base)[i] = static_cast<uint16_t>(round_nearest_even(f, static_cast<double>(v)));
}

IndexArrays copy_indices(const Params& p) {
  IndexArrays idx;
  idx.cu_seqlens.assign(p.cu_seqlens, p.cu_seqlens + p.num_requests + 1);
  idx.slot_in.assign(p.slot_in, p.slot_in + p.num_requests);
  if (p.has_slot_out()) idx.slot_out.assign(p.slot_out, p.slot_out + p.num_requests);
  if (p.has_token_states()) idx.token_state_slots.assign(p.token_state_slots, p.token_state_slots + p.num_tokens);
  return idx;
}

// One (request, head): what the warps of the kernel's blocks for that pair compute, row
// by row (a warp's rows are independent); B and C are decoded once per token, as each
// lane of the kernel loads them once per token for all its rows.
void run_head(const Params& p, int r, int h, const LaneLayout& lay) {
  const int32_t t0 = p.cu_seqlens[r], t1 = p.cu_seqlens[r + 1];
  const int32_t slot_in = p.slot_in[r];
  const bool pad = slot_in == p.pad_slot_id;
  const int g = h / (p.H / p.G);
  // The elements (u, n) of one row, n < N, u < L the lane among the row's L lanes, in
  // lane order: the kernel's per-lane fma order is this order restricted to one lane.
  struct Element {
    int u, n;
  };
  std::vector<Element> elements;
  for (int u = 0; u < lay.L; ++u)
    for (int j = 0; j < lay.J; ++j)
      for (int v = 0; v < lay.V; ++v) {
        const int n = lane_element(lay, u, j, v);
        if (n < p.N) elements.push_back({u, n});
      }
  // s[row·N + n]: the state as the lanes hold it, fp32 across tokens.
  std::vector<float> s(size_t(p.P) * p.N, 0.0f);
  auto state_index = [&](int32_t slot, int row, int n) {
    return int64_t(slot) * p.state_stride_slot + int64_t(h) * p.state_stride_head + int64_t(row) * p.state_stride_p + n;
  };
  auto store_all = [&](int32_t slot) {
    for (int row = 0; row < p.P; ++row)
      for (int n = 0; n < p.N; ++n) store(p.state_format, p.state, state_index(slot, row, n), s[size_t(row) * p.N + n]);
  };
  if (!pad) {
    for (int row = 0; row < p.P; ++row)
      for (int n = 0; n < p.N; ++n) s[size_t(row) * p.N + n] = load(p.state_format, p.state, state_index(slot_in, row, n));
  }
  const float dt_bias = p.has_dt_bias() ? p.dt_bias[h] : 0.0f;
  std::vector<float> dB(p.N), c(p.N);
  for (int32_t t = t0; t < t1; ++t) {
    const float dt = load(p.input_format, p.dt, int64_t(t) * p.dt_stride_token + h);
    const TokenScalars ts = token_scalars(dt, p.has_dt_bias(), dt_bias, p.dt_softplus, p.dt_limit_lo,
                                          p.dt_limit_hi, p.A[h]);
    for (int n = 0; n < p.N; ++n) {
      dB[n] = scaled_B(ts.delta, load(p.input_format, p.B, int64_t(t) * p.B_stride_token + int64_t(g) * p.B_stride_group + n));
      c[n] = load(p.input_format, p.C, int64_t(t) * p.C_stride_token + int64_t(g) * p.C_stride_group + n);
    }
    for (int row = 0; row < p.P; ++row) {
      const float x = load(p.input_format, p.x, int64_t(t) * p.x_stride_token + int64_t(h) * p.x_stride_head + row);
      float* srow = &s[size_t(row) * p.N];
      std::array<float, kWarp> acc{};
      for (const Element& e : elements) {
        srow[e.n] = update_state(srow[e.n], ts.decay, dB[e.n], x);
        acc[e.u] = accumulate(acc[e.u], c[e.n], srow[e.n]);
      }
      const float D = p.d_mode == DMode::per_head ? p.D[h]
                      : p.d_mode == DMode::per_head_dim ? p.D[int64_t(h) * p.D_stride_head + row]
                                                        : 0.0f;
      const float z = p.has_z() ? load(p.input_format, p.z, int64_t(t) * p.z_stride_token + int64_t(h) * p.z_stride_head + row)
                          : 0.0f;
      const float y = fm::output_epilogue(butterfly_sum(acc, lay.L), p.has_D(), D, x, p.has_z(), z);
      store(p.output_format, p.y, int64_t(t) * p.y_stride_token + int64_t(h) * p.y_stride_head + row, y);
    }
    if (!pad && p.has_token_states() && p.token_state_slots[t] != p.pad_slot_id) store_all(p.token_state_slots[t]);
  }
  if (!pad) store_all(p.has_slot_out() ? p.slot_out[r] : slot_in);
}

}  // namespace

void run_twin(const Params& p, int threads) {
  check_params(p);
  if (p.num_requests == 0) return;
  check_indices(p, copy_indices(p));
  const LaneLayout lay = lane_layout(p.N, storage_bytes(p.state_format));
  // Items (request, head) are independent: check_indices lets no request read a slot another
  // writes, and no slot be written twice; heads own disjoint parts of every slot and of y.
  const int64_t items = int64_t(p.num_requests) * p.H;
  const int workers = fast::worker_count(threads, items, int64_t(p.num_tokens) * p.H * p.P * p.N);
  ssmv::for_each_task(items, workers, [&](int64_t item, int) { run_head(p, int(item / p.H), int(item % p.H), lay); });
}

}  // namespace ssmv::ssu
