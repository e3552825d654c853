// What `ssmv check` and `ssmv compare` need to judge a dump: the options that change the
// mathematics, from the command line and from the dump's own metadata
// (verify/tensor_file/dump_metadata.h), merged — a flag that contradicts a file, or two
// files that contradict each other, is a usage error naming both values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "verify/cli/command_line.h"
#include "verify/family/family.h"
#include "verify/tensor_file/dump_metadata.h"
#include "verify/tensor_file/tensor.h"

namespace ssmv::cli {

// Options from the command line; `round_dt_limit` lets --dt-limit values that are not fp32
// be rounded to the nearest fp32 (the default refuses them).
struct DeclaredOptions {
  tensor_file::DumpOptions dump;        // everything but dt_limit
  std::optional<std::string> dt_limit_text;
  bool round_dt_limit = false;
};
// The options with dt_limit parsed (refused unless fp32, or rounded with a note on stderr).
tensor_file::DumpOptions resolve_declared(const DeclaredOptions& o);

// The problem options, read into `o`: --input-format, --state-format, --output-format,
// --dt-softplus / --no-dt-softplus, --dt-limit, --round-dt-limit.
void add_problem_options(CommandLine& line, DeclaredOptions& o);
// The kernel options --<prefix>kernel, --<prefix>contract, --<prefix>decode-contract,
// --<prefix>chunk-size, --<prefix>chunk-layout, --<prefix>prefill-tokens (prefix "" for
// check, "a-" / "b-" for compare's two sides), read into `o`.
void add_kernel_options(CommandLine& line, const std::string& prefix, tensor_file::DumpOptions& o);

// A file's tensors and metadata, loaded once; ssmv.kernel must name a registered kernel
// (verify/family/registry.h).
struct LoadedFile {
  std::string path;
  tensor_file::TensorMap tensors;
  tensor_file::DumpOptions declared;  // from its metadata
};
LoadedFile load_dump_file(const std::string& path);

// A contract given on the command line re-judges a self-describing dump under another
// contract: --<prefix>contract / --<prefix>decode-contract replace the file's ssmv.contract /
// ssmv.decode_contract (removed from `file`), with a one-line note on stderr.
void contracts_override(const tensor_file::DumpOptions& flags, LoadedFile& file, const std::string& prefix);

// `declared` with every option of `file` added; an option both set differently is a
// UsageError: "<what> = '<a>' contradicts <file> metadata 'ssmv.<key>' = '<b>'".
tensor_file::DumpOptions merge_declared(const tensor_file::DumpOptions& declared, const std::string& what,
                                        const LoadedFile& file);

// A dump as `ssmv check` reads it: the problem file and an optional separate outputs file,
// their metadata merged with the flags. Its family reads the problem, kernel and outputs from
// files(); drop it then (the tensors' bytes are as large as the dump).
struct DumpOnDisk {
  LoadedFile problem_file;
  std::optional<LoadedFile> outputs_file;  // none: the outputs are in the problem file
  tensor_file::DumpOptions options;
  family::DumpFiles files() const;
};
// outputs_path "" or the problem's path: the outputs are in the problem file.
DumpOnDisk read_dump(const std::string& problem_path, const std::string& outputs_path, const DeclaredOptions& declared);

// The family of the dump's kernel (verify/family/registry.h); a UsageError when the options
// name no kernel. `flag_prefix` names the flag in the message ("" or "a-"/"b-").
const family::Family& family_of(const tensor_file::DumpOptions& options, const std::string& problem_path,
                                const std::string& flag_prefix);

}  // namespace ssmv::cli
