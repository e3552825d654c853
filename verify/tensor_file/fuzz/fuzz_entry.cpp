#include "verify/tensor_file/fuzz/fuzz_entry.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "verify/json/json.h"
#include "verify/tensor_file/dump_metadata.h"
#include "verify/tensor_file/npy.h"
#include "verify/tensor_file/problem_file.h"
#include "verify/tensor_file/safetensors.h"
#include "verify/tensor_file/tensor_file.h"
#include "verify/tensor_file/zip.h"

namespace ssmv::tensor_file {
namespace {

[[noreturn]] void finding(const char* what, const std::string& name) {
  std::fprintf(stderr, "fuzz finding: %s (tensor '%s')\n", what, name.c_str());
  std::abort();
}

bool same(const Tensor& a, const Tensor& b) {
  return a.dtype == b.dtype && a.shape == b.shape && std::ranges::equal(a.bytes(), b.bytes());
}

// Equal values, NaN equal to NaN (writers may canonicalise NaN payloads), zeros by sign. Values:
// std::vector<float> or FormatValues.
template <class Values>
bool same_values(const Values& a, const Values& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const bool na = a[i] != a[i], nb = b[i] != b[i];
    if (na != nb || (!na && (a[i] != b[i] || std::signbit(a[i]) != std::signbit(b[i])))) return false;
  }
  return true;
}

bool same_problem(const Problem& a, const Problem& b) {
  return a.shape.cu_seqlens == b.shape.cu_seqlens && a.shape.H == b.shape.H && a.shape.P == b.shape.P &&
         a.shape.G == b.shape.G && a.shape.N == b.shape.N && same_values(a.x, b.x) && same_values(a.dt, b.dt) &&
         same_values(a.A, b.A) && same_values(a.B, b.B) && same_values(a.C, b.C) && same_values(a.z, b.z) &&
         same_values(a.D, b.D) && same_values(a.dt_bias, b.dt_bias) && same_values(a.initial_state, b.initial_state);
}

// The accessors and the problem mapping on a parsed map: each may refuse, none may crash.
void exercise(const TensorMap& m) {
  for (const auto& [name, t] : m) {
    try { (void)to_double(t); } catch (const TensorFileError&) {}
    try { (void)to_float(t); } catch (const TensorFileError&) {}
    try { (void)to_int64(t); } catch (const TensorFileError&) {}
    for (Format f : {Format::fp32, Format::bf16, Format::fp16}) {
      try { (void)as_format_values(t, f); } catch (const TensorFileError&) {}
    }
  }
  ProblemFileOptions scaled;  // codes with row scales (as_scaled_values): may refuse, must not crash
  scaled.formats.state = Format::int16_scaled;
  try { (void)problem_from_tensors(m, "fuzz", scaled); } catch (const TensorFileError&) {}
  Problem p;
  try {
    p = problem_from_tensors(m, "fuzz", ProblemFileOptions{});
  } catch (const TensorFileError&) {
    return;
  }
  // The inverse mappings give the same problem and outputs back.
  if (!same_problem(problem_from_tensors(problem_tensors(p), "fuzz-rt", ProblemFileOptions{}), p)) {
    finding("problem_tensors round trip changed the problem", "");
  }
  KernelOutputs out;
  try {
    out = outputs_from_tensors(m, "fuzz", p);
  } catch (const TensorFileError&) {
    return;
  }
  const KernelOutputs back = outputs_from_tensors(output_tensors(out, p), "fuzz-rt", p);
  if (!same_values(back.y, out.y) || !same_values(back.final_states, out.final_states)) {
    finding("output_tensors round trip changed the outputs", "");
  }
}

// The dump options in a file's metadata (dump_metadata.h): each "ssmv." key may be
// refused, none may crash; options that read are written back as the same keys.
void exercise_metadata(const std::map<std::string, std::string>& metadata) {
  DumpOptions o;
  try {
    o = dump_options_from_metadata(metadata, "fuzz", kFuzzKernels);
  } catch (const TensorFileError&) {
    return;
  }
  const std::map<std::string, std::string> keys = metadata_from_dump_options(o);
  if (metadata_from_dump_options(dump_options_from_metadata(keys, "fuzz-rt", kFuzzKernels)) != keys) {
    finding("dump options round trip changed the metadata", "");
  }
}

// Writers then readers give back what was parsed (bf16 goes through npy as u16 bits).
void round_trip(const TensorMap& m, const std::map<std::string, std::string>& metadata) {
  // The writer may refuse a map (a name or metadata that is not UTF-8, or a tensor named
  // "__metadata__"), with a TensorFileError; what it writes must read back.
  std::vector<uint8_t> st;
  bool wrote = true;
  try {
    st = write_safetensors(m, metadata);
  } catch (const TensorFileError&) {
    wrote = false;
  }
  if (wrote) {
    TensorMap back;
    std::map<std::string, std::string> metadata_back;
    try {
      back = parse_safetensors(st, Where{"fuzz-rt.safetensors", ""}, &metadata_back);
    } catch (const TensorFileError& e) {
      std::fprintf(stderr, "%s\n", e.what());
      finding("safetensors writer wrote a file its reader rejects", "");
    }
    if (metadata_back != metadata) finding("safetensors round trip changed the metadata", "");
    if (back.size() != m.size()) finding("safetensors round trip changed the tensor count", "");
    for (const auto& [name, t] : m) {
      const auto it = back.find(name);
      if (it == back.end() || !same(t, it->second)) finding("safetensors round trip changed a tensor", name);
    }
  }
  // npz of stored entries, as save_npz writes it (which refuses empty names).
  std::vector<ZipEntry> entries;
  for (const auto& [name, t] : m) entries.push_back(ZipEntry{name + ".npy", write_npy(t)});
  if (!m.count("")) {
    const TensorMap back = parse_tensor_bytes(write_zip_stored(entries, Where{"fuzz-rt.npz", ""}), FileKind::npz, "fuzz-rt.npz");
    if (back.size() != m.size()) finding("npz round trip changed the tensor count", "");
    for (const auto& [name, t] : m) {
      Tensor expect = t;
      if (expect.dtype == DType::bf16) expect.dtype = DType::u16;
      const auto it = back.find(name);
      if (it == back.end() || !same(it->second, expect)) finding("npz round trip changed a tensor", name);
    }
  }
  for (const auto& [name, t] : m) {
    const TensorMap one = parse_tensor_bytes(write_npy(t), FileKind::npy, name + ".npy");
    Tensor expect = t;
    if (expect.dtype == DType::bf16) expect.dtype = DType::u16;
    if (one.size() != 1 || !same(one.begin()->second, expect)) finding("npy round trip changed a tensor", name);
  }
}

void try_kind(std::span<const uint8_t> bytes, FileKind kind, const char* label) {
  TensorMap m;
  std::map<std::string, std::string> metadata;
  try {
    m = parse_tensor_bytes(bytes, kind, label, &metadata);
  } catch (const TensorFileError&) {
    return;
  }
  exercise(m);
  exercise_metadata(metadata);
  round_trip(m, metadata);
}

}  // namespace

void fuzz_tensor_parsers(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  try_kind(bytes, FileKind::npy, "fuzz.npy");
  try_kind(bytes, FileKind::npz, "fuzz.npz");
  try_kind(bytes, FileKind::safetensors, "fuzz.safetensors");
  try {
    const json::Value v = json::parse(std::string_view(reinterpret_cast<const char*>(data), size));
    // dump() of a parsed value parses back to the same dump.
    if (json::dump(json::parse(json::dump(v))) != json::dump(v)) finding("JSON dump/parse round trip differs", "");
  } catch (const json::ParseError&) {
  }
}

}  // namespace ssmv::tensor_file
