#include "verify/tensor_file/dump_metadata.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "verify/tensor_file/tensor.h"

namespace ssmv::tensor_file {
namespace {

const std::string kPrefix = "ssmv.";
const std::set<std::string> kKeys = {"kernel",      "input_format", "state_format",   "output_format",
                                     "dt_softplus", "dt_limit",     "chunk_size",     "chunk_layout",
                                     "prefill_tokens", "tokens_per_launch", "contract",  "decode_contract", "source"};

[[noreturn]] void bad(const std::string& file, const std::string& key, const std::string& value,
                      const std::string& expected) {
  Where{file, ""}.fail("metadata '" + kPrefix + key + "'", "'" + value + "': " + expected);
}

int64_t parse_count(const std::string& file, const std::string& key, const std::string& v, int64_t lo) {
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || end != v.c_str() + v.size() || errno != 0 || n < lo || !std::isdigit((unsigned char)v[0])) {
    bad(file, key, v, "expected a decimal integer >= " + std::to_string(lo));
  }
  return n;
}

// One part of a dt limit: the double the text denotes (decimal, hex float, ±inf).
bool parse_limit_part(const std::string& part, double& out) {
  if (part == "inf" || part == "+inf") { out = HUGE_VAL; return true; }
  if (part == "-inf") { out = -HUGE_VAL; return true; }
  if (part.empty()) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtod(part.c_str(), &end);
  return end == part.c_str() + part.size() && errno != ERANGE && std::isfinite(out);
}

std::string hex_float(float v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%a", double(v));
  return buf;
}

}  // namespace

bool parse_dt_limit(const std::string& text, bool allow_rounding, std::pair<float, float>& out, std::string* why,
                    bool* rounded) {
  const size_t comma = text.find(',');
  if (comma == std::string::npos || text.find(',', comma + 1) != std::string::npos) {
    *why = "expected LO,HI";
    return false;
  }
  float parts[2];
  const std::string texts[2] = {text.substr(0, comma), text.substr(comma + 1)};
  if (rounded) *rounded = false;
  for (int i = 0; i < 2; ++i) {
    double v = 0;
    if (!parse_limit_part(texts[i], v)) {
      *why = "'" + texts[i] + "' is not a number (decimal, hex float, inf or -inf)";
      return false;
    }
    parts[i] = float(v);
    if (double(parts[i]) != v) {
      if (!allow_rounding) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.17g", double(parts[i]));
        *why = "'" + texts[i] + "' is not an fp32 value (kernels receive dt_limit as fp32; the nearest is " +
               hex_float(parts[i]) + " = " + buf + "): give that value, or ask for rounding";
        return false;
      }
      if (rounded) *rounded = true;
    }
  }
  if (!(parts[0] <= parts[1])) {
    *why = "LO " + hex_float(parts[0]) + " > HI " + hex_float(parts[1]);
    return false;
  }
  out = {parts[0], parts[1]};
  return true;
}

std::string dt_limit_text(std::pair<float, float> limit) { return hex_float(limit.first) + "," + hex_float(limit.second); }

std::string kernel_choices(const std::vector<std::string>& kernels) {
  std::string text;
  for (size_t i = 0; i < kernels.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == kernels.size() ? " or " : ", ") + kernels[i];
  }
  return text;
}

DumpOptions dump_options_from_metadata(const std::map<std::string, std::string>& metadata, const std::string& file,
                                       const std::vector<std::string>& kernels) {
  DumpOptions o;
  for (const auto& [full_key, v] : metadata) {
    if (full_key.rfind(kPrefix, 0) != 0) continue;  // another tool's key
    const std::string key = full_key.substr(kPrefix.size());
    if (!kKeys.count(key)) {
      std::string known;
      for (const std::string& k : kKeys) known += (known.empty() ? "" : ", ") + kPrefix + k;
      Where{file, ""}.fail("metadata '" + full_key + "'", "unknown key (known: " + known + ")");
    }
    if (key == "kernel") {
      if (std::find(kernels.begin(), kernels.end(), v) == kernels.end()) {
        bad(file, key, v, "expected " + kernel_choices(kernels));
      }
      o.kernel = v;
    } else if (key == "input_format" || key == "state_format" || key == "output_format") {
      Format f;
      if (!parse_format(v, f)) bad(file, key, v, "expected fp32, bf16 or fp16");
      (key == "input_format" ? o.input_format : key == "state_format" ? o.state_format : o.output_format) = f;
    } else if (key == "dt_softplus") {
      if (v != "true" && v != "false") bad(file, key, v, "expected true or false");
      o.dt_softplus = v == "true";
    } else if (key == "dt_limit") {
      std::pair<float, float> limit;
      std::string why;
      if (!parse_dt_limit(v, /*allow_rounding=*/false, limit, &why)) bad(file, key, v, why);
      o.dt_limit = limit;
    } else if (key == "chunk_size") {
      o.chunk_size = parse_count(file, key, v, 1);
    } else if (key == "chunk_layout") {
      if (v != "sequence" && v != "global") bad(file, key, v, "expected sequence or global");
      o.chunk_layout = v;
    } else if (key == "prefill_tokens") {
      o.prefill_tokens = parse_count(file, key, v, 0);
    } else if (key == "tokens_per_launch") {
      o.tokens_per_launch = parse_count(file, key, v, 1);
    } else if (key == "contract" || key == "decode_contract") {
      if (v.empty()) bad(file, key, v, "expected a preset name or a contract file");
      (key == "contract" ? o.contract : o.decode_contract) = v;
    } else {
      o.source = v;
    }
  }
  return o;
}

std::map<std::string, std::string> metadata_from_dump_options(const DumpOptions& o) {
  std::map<std::string, std::string> m;
  const auto put = [&](const char* key, const std::optional<std::string>& v) {
    if (v) m[kPrefix + key] = *v;
  };
  const auto put_format = [&](const char* key, const std::optional<Format>& f) {
    if (f) m[kPrefix + key] = std::string(format_name(*f));
  };
  put("kernel", o.kernel);
  put_format("input_format", o.input_format);
  put_format("state_format", o.state_format);
  put_format("output_format", o.output_format);
  if (o.dt_softplus) m[kPrefix + "dt_softplus"] = *o.dt_softplus ? "true" : "false";
  if (o.dt_limit) m[kPrefix + "dt_limit"] = dt_limit_text(*o.dt_limit);
  if (o.chunk_size) m[kPrefix + "chunk_size"] = std::to_string(*o.chunk_size);
  put("chunk_layout", o.chunk_layout);
  if (o.prefill_tokens) m[kPrefix + "prefill_tokens"] = std::to_string(*o.prefill_tokens);
  if (o.tokens_per_launch) m[kPrefix + "tokens_per_launch"] = std::to_string(*o.tokens_per_launch);
  put("contract", o.contract);
  put("decode_contract", o.decode_contract);
  put("source", o.source);
  return m;
}

}  // namespace ssmv::tensor_file
