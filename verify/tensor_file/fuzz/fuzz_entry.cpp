#include "verify/tensor_file/fuzz/fuzz_entry.h"

#include <cstdio>
#include <cstdlib>
#include <span>
#include <string_view>

#include "verify/json/json.h"
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
  return a.dtype == b.dtype && a.shape == b.shape && a.data == b.data;
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
  try {
    const Problem p = problem_from_tensors(m, "fuzz", ProblemFileOptions{});
    try { (void)outputs_from_tensors(m, "fuzz", p); } catch (const TensorFileError&) {}
  } catch (const TensorFileError&) {
  }
}

// Writers then readers give back what was parsed (bf16 goes through npy as u16 bits).
void round_trip(const TensorMap& m) {
  // The writer may refuse a map (a name that is not UTF-8, or "__metadata__"), with a
  // TensorFileError; what it writes must read back.
  std::vector<uint8_t> st;
  bool wrote = true;
  try {
    st = write_safetensors(m);
  } catch (const TensorFileError&) {
    wrote = false;
  }
  if (wrote) {
    TensorMap back;
    try {
      back = parse_safetensors(st, Where{"fuzz-rt.safetensors", ""});
    } catch (const TensorFileError& e) {
      std::fprintf(stderr, "%s\n", e.what());
      finding("safetensors writer wrote a file its reader rejects", "");
    }
    if (back.size() != m.size()) finding("safetensors round trip changed the tensor count", "");
    for (const auto& [name, t] : m) {
      const auto it = back.find(name);
      if (it == back.end() || !same(t, it->second)) finding("safetensors round trip changed a tensor", name);
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
  try {
    m = parse_tensor_bytes(bytes, kind, label);
  } catch (const TensorFileError&) {
    return;
  }
  exercise(m);
  round_trip(m);
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
