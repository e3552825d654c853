// Self-describing dumps: the options that change the mathematics of a check, stored in the
// dump itself so that `ssmv check FILE` needs no flags.
//
// Where they live: a string -> string map, the safetensors header's "__metadata__" object,
// or in an .npz the entry "__metadata__.npy", a 1-D uint8 array holding the UTF-8 bytes of
// a JSON object whose values are strings (tensor_file.h reads and writes both). ssmv reads
// the keys that start with "ssmv." and ignores the others (safetensors writers add their
// own, e.g. "format": "pt"); an unknown "ssmv." key is an error, so a misspelt option is
// never silently ignored. Keys (docs/tensor-files.md):
//   ssmv.kernel          a registered kernel (verify/family/registry.h): ssu | chunk_scan | handoff, ...
//   ssmv.input_format, ssmv.state_format, ssmv.output_format   fp32 | bf16 | fp16
//   ssmv.dt_softplus     true | false
//   ssmv.dt_limit        "LO,HI": fp32 values (decimal, C99 hex float, inf, -inf)
//   ssmv.chunk_size      decimal integer >= 1
//   ssmv.chunk_layout    sequence | global
//   ssmv.prefill_tokens  decimal integer >= 0 (every sequence; or the tensor prefill_tokens [S])
//   ssmv.tokens_per_launch  decimal integer >= 1 (ssu: tokens of every sequence per launch)
//   ssmv.contract, ssmv.decode_contract   a preset name or a contract file path
//   ssmv.source          free text: which kernel, versions, machine, date
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "spec/format.h"

namespace ssmv::tensor_file {

// Every field is optional: absent means "the dump does not say".
struct DumpOptions {
  std::optional<std::string> kernel;
  std::optional<Format> input_format, state_format, output_format;
  std::optional<bool> dt_softplus;
  std::optional<std::pair<float, float>> dt_limit;
  std::optional<int64_t> chunk_size;
  std::optional<std::string> chunk_layout;
  std::optional<int64_t> prefill_tokens;
  std::optional<int64_t> tokens_per_launch;
  std::optional<std::string> contract, decode_contract;
  std::optional<std::string> source;
};

// Reads the "ssmv." keys of `metadata`; every value is validated (TensorFileError naming
// the file, "metadata 'ssmv.<key>'", the value and what was expected). `kernels`: the kernel
// names ssmv.kernel may take (the registered ones, verify/family/registry.h; this library
// sits below the families).
DumpOptions dump_options_from_metadata(const std::map<std::string, std::string>& metadata, const std::string& file,
                                       const std::vector<std::string>& kernels);
// "ssu, chunk_scan or handoff": a list of kernel names as messages print it.
std::string kernel_choices(const std::vector<std::string>& kernels);
// The inverse: the "ssmv." keys of the fields that are set (dt limits as hex floats).
std::map<std::string, std::string> metadata_from_dump_options(const DumpOptions& options);

// dt_limit as text "LO,HI". Each part is a decimal or C99 hex float, "inf" or "-inf", and
// must be an fp32 value exactly — kernels receive their limits as fp32, so a limit such as
// 0.1 is not the one the kernel used. With allow_rounding the part is rounded to the nearest
// fp32 instead and *rounded (when given) is set. On failure returns false with *why set.
bool parse_dt_limit(const std::string& text, bool allow_rounding, std::pair<float, float>& out,
                    std::string* why, bool* rounded = nullptr);
// "LO,HI" with each part a hex float ("0x1.99999ap-4") or inf / -inf: reads back exactly.
std::string dt_limit_text(std::pair<float, float> limit);

}  // namespace ssmv::tensor_file
