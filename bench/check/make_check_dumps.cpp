// make_check_dumps: production-shaped, self-describing dumps for timing `ssmv check` on a
// machine without a GPU (bench/check/check_bench.sh), and the plain double-precision
// recurrence over a dump that those timings are set against.
//
//   make_check_dumps KIND OUT.npz [--tokens T] [--batch B] [--heads H] [--P P] [--N N]
//                    [--seed S] [--threads K]
//   make_check_dumps plain DUMP.npz [--repeat R]
//
// KIND: chunk_scan (one sequence, chunk 256, production contract), handoff (chunk_scan over
// T − 64 tokens, then SSU decoding the last 64 from the state it handed over), ssu_batch (B
// requests of T tokens from warmed-up initial states, one launch of its T tokens each), ssu
// (one sequence decoded by SSU from the zero state). Inputs are spec/realistic_problem's
// Mamba2-realistic data (G = 1, bf16 inputs and output, fp32 state, D per head, dt_bias,
// softplus, no z); the outputs are the bundled host twins', bit-identical to the GPU kernels.
// mamba3_prefill (chunk 64, one sequence of T tokens, default 2048, H 8) and mamba3_handoff (the
// prefill over T − 64 tokens, then the step kernel over the last 64): Mamba-3 SISO, inputs drawn
// like upstream's test, outputs mamba_ssm's kernels' host emulations (verify/bound/mamba3/).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "reference/reference.h"
#include "spec/mamba3/random_problem.h"
#include "spec/realistic_problem.h"
#include "verify/bound/mamba3/prefill_contract.h"
#include "verify/bound/mamba3/prefill_emulation.h"
#include "verify/bound/mamba3/step_contract.h"
#include "verify/bound/mamba3/step_emulation.h"
#include "verify/family/mamba3/dump_reading.h"
#include "verify/family/registry.h"
#include "verify/run/kernel_check.h"
#include "verify/tensor_file/dump_metadata.h"
#include "verify/tensor_file/problem_file.h"
#include "verify/tensor_file/tensor_file.h"

namespace {

using namespace ssmv;
namespace tf = ssmv::tensor_file;

constexpr int64_t kChunkSize = 256;
constexpr int64_t kDecodedTokens = 64;   // handoff: tokens SSU decodes after the prefill
constexpr int64_t kWarmupTokens = 256;   // ssu_batch: tokens behind each request's state

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "make_check_dumps: %s\n", message.c_str());
  std::exit(2);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The options of the command line; -1 means "the kind's default".
struct Options {
  std::string kind, path;
  int64_t tokens = -1, batch = -1, heads = -1, P = 64, N = 128, seed = 20261203, threads = 0, repeat = 3;
  std::vector<std::string> given;  // option names, to refuse those the mode does not take
};

Options parse(int argc, char** argv) {
  if (argc < 3) {
    usage_error("usage: make_check_dumps chunk_scan|handoff|ssu_batch|ssu|mamba3_prefill|mamba3_handoff|plain FILE.npz "
                "[options]");
  }
  Options o;
  o.kind = argv[1];
  o.path = argv[2];
  if (o.path.rfind("--", 0) == 0) usage_error("FILE = '" + o.path + "': expected the dump's path after " + o.kind);
  const std::map<std::string, int64_t*> fields = {
      {"--tokens", &o.tokens}, {"--batch", &o.batch}, {"--heads", &o.heads}, {"--P", &o.P},  {"--N", &o.N},
      {"--seed", &o.seed},     {"--threads", &o.threads}, {"--repeat", &o.repeat}};
  for (int i = 3; i < argc; i += 2) {
    const std::string name = argv[i];
    const auto f = fields.find(name);
    if (f == fields.end()) usage_error("unknown option '" + name + "'");
    if (i + 1 >= argc) usage_error("option '" + name + "' needs a value");
    const std::string value = argv[i + 1];
    char* end = nullptr;
    const long long v = std::strtoll(value.c_str(), &end, 10);
    const long long lo = name == "--threads" || name == "--seed" ? 0 : 1;
    if (value.empty() || *end != '\0' || v < lo) {
      usage_error("option '" + name + "' = '" + value + "': expected an integer >= " + std::to_string(lo));
    }
    *f->second = v;
    o.given.push_back(name);
  }
  return o;
}

void refuse_options(const Options& o, const std::vector<std::string>& refused) {
  for (const std::string& name : o.given) {
    if (std::find(refused.begin(), refused.end(), name) != refused.end()) {
      usage_error("option '" + name + "' does not apply to '" + o.kind + "'");
    }
  }
}

// ---- making a dump ----

// Each request's state as a few hundred tokens of the recurrence would leave it: per head,
// Σ_{k<W} a^k·δ0·B_k·x_k with B, x ~ N(0, 1) and a = exp(δ0·A) has variance
// δ0²·(1 − a^{2W})/(1 − a²) (δ0 = softplus(dt_bias), the head's typical step). The realistic
// generator's N(0, 0.1²) draws are rescaled to that spread, head by head.
void warm_up_initial_states(Problem& p) {
  const Shape& s = p.shape;
  const int64_t PN = s.P * s.N;
  for (int64_t h = 0; h < s.H; ++h) {
    const double delta = std::log1p(std::exp(double(p.dt_bias[h]))), a = std::exp(delta * p.A[h]);
    const double sd = delta * std::sqrt((1.0 - std::pow(a, 2.0 * kWarmupTokens)) / (1.0 - a * a));
    for (int64_t q = 0; q < s.num_sequences(); ++q) {
      float* row = p.initial_state.data() + p.state_index(q, h, 0, 0);
      for (int64_t i = 0; i < PN; ++i) row[i] = float(double(row[i]) * (sd / 0.1));
    }
  }
}

Problem make_problem(const Options& o, int64_t sequences, int64_t tokens, int64_t heads, bool initial_state) {
  Shape shape{{0}, heads, o.P, o.N, /*G=*/1};
  for (int64_t q = 0; q < sequences; ++q) shape.cu_seqlens.push_back(shape.cu_seqlens.back() + tokens);
  RealisticOptions ro;
  ro.z = false;  // Mamba2 gates y by z in its RMSNorm, outside the scan
  ro.initial_state = initial_state;
  Problem p = realistic_problem(shape, Formats{Format::bf16, Format::fp32, Format::bf16}, uint64_t(o.seed), ro);
  if (initial_state) warm_up_initial_states(p);
  return p;
}

FormatValues values_of(Format f, const std::vector<Bits>& bits) {
  if (format_info(f).total_bits == 16) return FormatValues::of_bits(f, std::vector<uint16_t>(bits.begin(), bits.end()));
  std::vector<float> v(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) v[i] = float(decode(f, bits[i]));
  FormatValues values(std::move(v));
  values.narrow(f);
  return values;
}

int make_dump(const Options& o) {
  const bool batch = o.kind == "ssu_batch", chunked = o.kind == "chunk_scan" || o.kind == "handoff";
  if (!batch && o.kind != "ssu" && !chunked) {
    usage_error("kind '" + o.kind + "': expected chunk_scan, handoff, ssu_batch, ssu, mamba3_prefill, mamba3_handoff "
                "or plain");
  }
  refuse_options(o, batch ? std::vector<std::string>{"--repeat"} : std::vector<std::string>{"--repeat", "--batch"});
  const int64_t B = batch ? (o.batch > 0 ? o.batch : 256) : 1;
  const int64_t T = o.tokens > 0 ? o.tokens : batch ? 4 : o.kind == "ssu" ? 1024 : 8192;
  const int64_t H = o.heads > 0 ? o.heads : o.kind == "ssu" ? 8 : 32;
  if (o.kind == "handoff" && T <= kDecodedTokens) {
    usage_error("option '--tokens' = '" + std::to_string(T) + "': handoff decodes the last " +
                std::to_string(kDecodedTokens) + " tokens, so it needs more");
  }
  ref::set_default_threads(int(o.threads));  // the twins run on the reference's threads

  const auto start = std::chrono::steady_clock::now();
  const Problem p = make_problem(o, B, T, H, batch);
  const double inputs_s = seconds_since(start);
  // chunk_scan alone is the hand-off split at the end; SSU alone is the split at 0.
  const int64_t split = o.kind == "chunk_scan" ? T : o.kind == "handoff" ? T - kDecodedTokens : 0;
  const auto kind = chunk_scan::ContractKind::production;
  const verify::HandoffOutputs got = verify::run_handoff(p, split, kind, kChunkSize, Device::twin);
  const double twin_s = seconds_since(start) - inputs_s;

  tf::KernelOutputs outputs{values_of(p.formats.output, got.y), values_of(p.formats.state, got.final_state)};
  tf::TensorMap tensors = tf::problem_tensors(p);
  tensors.merge(tf::output_tensors(outputs, p));
  tf::DumpOptions m;
  m.kernel = o.kind == "ssu_batch" ? "ssu" : o.kind;
  m.input_format = p.formats.input;
  m.state_format = p.formats.state;
  m.output_format = p.formats.output;
  m.dt_softplus = p.dt_softplus;
  const std::string chunked_contract = chunk_scan::contract(kind, kChunkSize).name, decode_contract = "ssu";
  m.contract = chunked ? chunked_contract : decode_contract;
  if (chunked) m.chunk_size = kChunkSize;
  if (o.kind == "handoff") {
    m.prefill_tokens = split;
    m.decode_contract = decode_contract;
  }
  // One launch per request of its T tokens, the state kept in fp32 within it. (kind ssu: one
  // launch too, and the fp32 state stored after every token would be the same bits.)
  if (batch) m.tokens_per_launch = T;
  const std::string shape = std::to_string(B) + "x" + std::to_string(T) + " H=" + std::to_string(H) +
                            " P=" + std::to_string(o.P) + " N=" + std::to_string(o.N);
  m.source = "bench/check/make_check_dumps " + o.kind + " " + shape + " seed " + std::to_string(o.seed) +
             ": spec/realistic_problem inputs, host twin outputs";
  tf::save_npz(o.path, tensors, tf::metadata_from_dump_options(m));

  const double total_s = seconds_since(start);
  const double work = double(B) * double(T) * double(H) * double(o.P) * double(o.N);
  const double mb = double(std::filesystem::file_size(o.path)) / 1e6;
  std::printf("%s %s: %.4g state updates, %.1f MB, %.2f s (inputs %.2f s, twin %.2f s, write %.2f s)\n",
              o.kind.c_str(), shape.c_str(), work, mb, total_s, inputs_s, twin_s, total_s - inputs_s - twin_s);
  return 0;
}

// ---- Mamba-3 ----

// Tokens [first, first + count) of a one-sequence Mamba-3 problem, every head, from `initial`.
mamba3::Problem mamba3_tokens(const mamba3::Problem& p, int64_t first, int64_t count, mamba3::FourPartState initial) {
  mamba3::Problem q = p;
  q.shape.cu_seqlens = {0, count};
  const auto rows = [&](const std::vector<float>& v, int64_t width) {
    return v.empty() ? v : std::vector<float>(v.begin() + first * width, v.begin() + (first + count) * width);
  };
  const mamba3::Shape& s = p.shape;
  q.x = rows(p.x, s.H * s.P);
  q.z = rows(p.z, s.H * s.P);
  q.B = rows(p.B, s.G * s.N);
  q.C = rows(p.C, s.G * s.N);
  q.dt = rows(p.dt, s.H);
  q.adt = rows(p.adt, s.H);
  q.trap = rows(p.trap, s.H);
  q.angles = rows(p.angles, s.H * s.R);
  q.initial = std::move(initial);
  return q;
}

// kind mamba3_prefill: mamba_ssm's chunked prefill (chunk 64) over one sequence of T tokens;
// mamba3_handoff: the prefill over T − 64 tokens, then the step kernel over the last 64 from the
// state it returned. Inputs drawn like upstream's test (spec/mamba3/random_problem.h: G 1,
// R = N/4, D and z), outputs the host emulations' under their host_emulation contracts.
int make_mamba3_dump(const Options& o) {
  refuse_options(o, {"--repeat", "--batch"});
  constexpr int64_t kMamba3Chunk = 64;
  const bool handoff = o.kind == "mamba3_handoff";
  const int64_t T = o.tokens > 0 ? o.tokens : 2048, H = o.heads > 0 ? o.heads : 8;
  if (handoff && T <= kDecodedTokens) {
    usage_error("option '--tokens' = '" + std::to_string(T) + "': mamba3_handoff decodes the last " +
                std::to_string(kDecodedTokens) + " tokens, so it needs more");
  }
  if (o.N % 4 != 0) usage_error("option '--N' = '" + std::to_string(o.N) + "': Mamba-3 needs N divisible by 4 (R = N/4)");
  const auto start = std::chrono::steady_clock::now();
  const mamba3::Problem p = mamba3::random_problem({0, T}, H, o.P, o.N, 1, o.N / 4, uint64_t(o.seed), false);
  const int64_t K = handoff ? T - kDecodedTokens : T;
  bound::mamba3::PrefillEmulationOptions po;
  po.chunk_size = kMamba3Chunk;
  const bound::mamba3::EmulatedSteps pre = bound::mamba3::emulate_prefill(mamba3_tokens(p, 0, K, {}), po);
  family::mamba3::Outputs out{pre.y, {pre.angle, pre.S, pre.B_prev, pre.x_prev}};
  if (handoff) {
    const bound::mamba3::EmulatedSteps dec =
        bound::mamba3::emulate_steps(mamba3_tokens(p, K, T - K, out.final_state), {});
    out.y.insert(out.y.end(), dec.y.begin(), dec.y.end());
    out.final_state = {dec.angle, dec.S, dec.B_prev, dec.x_prev};
  }
  const double emulation_s = seconds_since(start);
  tf::DumpOptions m;
  m.kernel = handoff ? family::mamba3::kHandoffKernel : family::mamba3::kPrefillKernel;
  m.input_format = p.formats.input;
  m.state_format = p.formats.state;
  m.output_format = p.formats.output;
  m.contract = bound::mamba3::prefill_host_emulation().name;
  m.chunk_size = kMamba3Chunk;
  if (handoff) {
    m.prefill_tokens = K;
    m.decode_contract = bound::mamba3::host_emulation().name;
  }
  const std::string shape = "1x" + std::to_string(T) + " H=" + std::to_string(H) + " P=" + std::to_string(o.P) +
                            " N=" + std::to_string(o.N);
  m.source = "bench/check/make_check_dumps " + o.kind + " " + shape + " seed " + std::to_string(o.seed) +
             ": spec/mamba3/random_problem inputs, host emulation outputs";
  tf::save_npz(o.path, family::mamba3::dump_tensors(p, out), tf::metadata_from_dump_options(m));
  const double work = double(T) * double(H) * double(o.P) * double(o.N);
  std::printf("%s %s: %.4g state updates, %.1f MB, %.2f s (emulation %.2f s)\n", o.kind.c_str(), shape.c_str(), work,
              double(std::filesystem::file_size(o.path)) / 1e6, seconds_since(start), emulation_s);
  return 0;
}

// ---- the plain double-precision baseline ----

// The recurrence as a plain loop in double on one thread, the initial states when present;
// returns a checksum of y and the final states so that no part of it can be optimised away.
// Written as a careful author would: the row update a loop of independent lanes (it
// vectorises), y's sum over n in four interleaved partial sums (a single chain would make the
// baseline latency-bound and flatter ssmv's ratio 3-fold).
double plain_recurrence(const Problem& p) {
  const Shape& s = p.shape;
  const int64_t P = s.P, N = s.N;
  std::vector<double> S(P * N), dB(N), C(N);
  double checksum = 0.0;
  for (int64_t q = 0; q < s.num_sequences(); ++q) {
    for (int64_t h = 0; h < s.H; ++h) {
      const int64_t g = s.group_of(h);
      for (int64_t i = 0; i < P * N; ++i) S[i] = p.has_initial_state() ? p.initial_state[p.state_index(q, h, 0, 0) + i] : 0.0;
      for (int64_t t = s.cu_seqlens[q]; t < s.cu_seqlens[q + 1]; ++t) {
        double delta = double(p.dt[p.dt_index(t, h)]) + (p.has_dt_bias() ? p.dt_bias[h] : 0.0);
        if (p.dt_softplus) delta = delta > 20.0 ? delta : std::log1p(std::exp(delta));
        delta = std::clamp(delta, double(p.dt_limit_lo), double(p.dt_limit_hi));
        const double a = std::exp(delta * p.A[h]);
        for (int64_t n = 0; n < N; ++n) {
          dB[n] = delta * p.B[p.bc_index(t, g, n)];
          C[n] = p.C[p.bc_index(t, g, n)];
        }
        for (int64_t i = 0; i < P; ++i) {
          const double x = p.x[p.x_index(t, h, i)];
          double* row = S.data() + i * N;
          for (int64_t n = 0; n < N; ++n) row[n] = a * row[n] + dB[n] * x;
          double y4[4] = {0, 0, 0, 0};
          int64_t n = 0;
          for (; n + 4 <= N; n += 4) {
            for (int k = 0; k < 4; ++k) y4[k] += row[n + k] * C[n + k];
          }
          for (; n < N; ++n) y4[0] += row[n] * C[n];
          checksum += (y4[0] + y4[1]) + (y4[2] + y4[3]) + p.d_value(h, i) * x;
        }
      }
      for (const double v : S) checksum += v;
    }
  }
  return checksum;
}

int plain(const Options& o) {
  refuse_options(o, {"--tokens", "--batch", "--heads", "--P", "--N", "--seed", "--threads"});
  std::map<std::string, std::string> metadata;
  const tf::TensorMap tensors = tf::load_tensor_file(o.path, &metadata);
  const tf::DumpOptions d = tf::dump_options_from_metadata(metadata, o.path, ssmv::family::kernel_names());
  tf::ProblemFileOptions po;
  po.formats = Formats{d.input_format.value_or(Format::bf16), d.state_format.value_or(Format::fp32),
                       d.output_format.value_or(Format::bf16)};
  po.dt_softplus = d.dt_softplus.value_or(false);
  if (d.dt_limit) std::tie(po.dt_limit_lo, po.dt_limit_hi) = *d.dt_limit;
  const Problem p = tf::problem_from_tensors(tensors, o.path, po);

  std::vector<double> seconds;
  double checksum = 0.0;
  for (int64_t r = 0; r < o.repeat; ++r) {
    const auto start = std::chrono::steady_clock::now();
    checksum = plain_recurrence(p);
    seconds.push_back(seconds_since(start));
  }
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[seconds.size() / 2];
  const Shape& s = p.shape;
  const double work = double(s.num_tokens()) * double(s.H) * double(s.P) * double(s.N);
  std::printf("plain double, 1 thread, %s: %.4g state updates, median %.4f s of %lld repeats, %.4g updates/s "
              "(checksum %.17g)\n",
              o.path.c_str(), work, median, (long long)o.repeat, work / median, checksum);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  try {
    if (o.kind == "plain") return plain(o);
    return o.kind.rfind("mamba3_", 0) == 0 ? make_mamba3_dump(o) : make_dump(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_check_dumps: %s\n", e.what());
    return 2;
  }
}
