#include "verify/tensor_file/fuzz/fuzz_outcome.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <span>
#include <stdexcept>
#include <string_view>

#include "verify/json/json.h"
#include "verify/tensor_file/dump_metadata.h"
#include "verify/tensor_file/fuzz/fuzz_entry.h"
#include "verify/tensor_file/problem_file.h"
#include "verify/tensor_file/tensor_file.h"

namespace ssmv::tensor_file {
namespace {

// Printable ASCII stays, the backslash and every other byte become \\ and \xNN.
std::string escaped(std::string_view s) {
  std::string out;
  for (const char c : s) {
    const auto b = static_cast<unsigned char>(c);
    if (b == '\\') {
      out += "\\\\";
    } else if (b >= 0x20 && b < 0x7f) {
      out += c;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", b);
      out += buf;
    }
  }
  return out;
}

// 32-bit FNV-1a, as 8 hex digits: enough to tell changed data apart in an expectation.
std::string fnv1a(std::span<const uint8_t> bytes) {
  uint32_t h = 2166136261u;
  for (const uint8_t b : bytes) h = (h ^ b) * 16777619u;
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", h);
  return buf;
}

std::string problem_summary(const Problem& p) {
  const Shape& s = p.shape;
  std::string out = "problem T=" + std::to_string(s.num_tokens()) + " H=" + std::to_string(s.H) +
                    " P=" + std::to_string(s.P) + " G=" + std::to_string(s.G) + " N=" + std::to_string(s.N) +
                    " cu_seqlens=" + shape_string(s.cu_seqlens);
  if (p.has_z()) out += " z";
  if (p.has_dt_bias()) out += " dt_bias";
  if (!p.D.empty()) out += " D[" + std::to_string(p.D.size()) + "]";
  if (p.has_initial_state()) out += " initial_states";
  return out;
}

// Everything a caller does with a parsed map, as fuzz_entry.cpp's exercise() does it.
std::string map_summary(const TensorMap& m, const std::map<std::string, std::string>& metadata) {
  std::string out = "ok:";
  for (const auto& [name, t] : m) {
    out += " " + name + " " + std::string(dtype_name(t.dtype)) + shape_string(t.shape) + " #" + fnv1a(t.bytes()) + ";";
  }
  if (!metadata.empty()) {
    out += " | metadata {";
    for (const auto& [k, v] : metadata) out += (out.back() == '{' ? "" : ", ") + k + "=" + v;
    out += "}";
    try {
      (void)dump_options_from_metadata(metadata, "fuzz", kFuzzKernels);
      out += " | options ok";
    } catch (const TensorFileError& e) {
      out += std::string(" | options error: ") + e.what();
    }
  }
  Problem p;
  try {
    p = problem_from_tensors(m, "fuzz", ProblemFileOptions{});
  } catch (const TensorFileError& e) {
    return out + " | problem error: " + e.what();
  }
  out += " | " + problem_summary(p);
  try {
    const KernelOutputs o = outputs_from_tensors(m, "fuzz", p);
    out += " | outputs y[" + std::to_string(o.y.size()) + "] final_states[" + std::to_string(o.final_states.size()) + "]";
  } catch (const TensorFileError& e) {
    out += std::string(" | outputs error: ") + e.what();
  }
  return out;
}

std::string tensor_outcome(std::span<const uint8_t> bytes, FileKind kind, const char* label) {
  std::map<std::string, std::string> metadata;
  try {
    const TensorMap m = parse_tensor_bytes(bytes, kind, label, &metadata);
    return map_summary(m, metadata);
  } catch (const TensorFileError& e) {
    return std::string("error: ") + e.what();
  }
}

std::string json_outcome(std::string_view text) {
  constexpr size_t kShown = 160;
  try {
    const std::string dump = json::dump(json::parse(text));
    if (dump.size() <= kShown) return "ok: " + dump;
    return "ok: " + dump.substr(0, kShown) + "... (" + std::to_string(dump.size()) + " bytes, #" +
           fnv1a(std::span(reinterpret_cast<const uint8_t*>(dump.data()), dump.size())) + ")";
  } catch (const json::ParseError& e) {
    return std::string("error: ") + e.what();
  }
}

}  // namespace

std::vector<ReaderOutcome> fuzz_outcomes(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  // The labels are fuzz_entry.cpp's, so messages read as the fuzzer's runs print them.
  std::vector<ReaderOutcome> out = {
      {"npy", tensor_outcome(bytes, FileKind::npy, "fuzz.npy")},
      {"npz", tensor_outcome(bytes, FileKind::npz, "fuzz.npz")},
      {"safetensors", tensor_outcome(bytes, FileKind::safetensors, "fuzz.safetensors")},
      {"json", json_outcome(std::string_view(reinterpret_cast<const char*>(data), size))},
  };
  for (ReaderOutcome& r : out) r.outcome = escaped(r.outcome);
  return out;
}

std::vector<std::string> replayed_inputs(const std::filesystem::path& fuzz_dir) {
  std::vector<std::string> out;
  for (const char* folder : {"corpus", "regressions"}) {
    for (const auto& entry : std::filesystem::directory_iterator(fuzz_dir / folder)) {
      if (!entry.is_regular_file() || entry.path().filename() == "README.md") continue;
      out.push_back(std::string(folder) + "/" + entry.path().filename().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<uint8_t> read_input(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<std::string> expectation_lines(const std::filesystem::path& fuzz_dir) {
  std::vector<std::string> out;
  for (const std::string& input : replayed_inputs(fuzz_dir)) {
    const std::vector<uint8_t> bytes = read_input(fuzz_dir / input);
    for (const ReaderOutcome& r : fuzz_outcomes(bytes.data(), bytes.size())) {
      out.push_back(input + "\t" + r.reader + "\t" + r.outcome);
    }
  }
  return out;
}

}  // namespace ssmv::tensor_file
