// Maps tensor files onto ssmv's problem (spec/problem.h) and a kernel's outputs.
//
// Problem tensors (names as in ../../docs/tensor-files.md):
//   packed layout                 batched layout (equal lengths L)
//   x      [T, H, P]              [batch, L, H, P]     input format
//   dt     [T, H]                 [batch, L, H]        input format
//   A      [H]                    [H]                  fp32
//   B, C   [T, G, N]              [batch, L, G, N]     input format
//   z      [T, H, P]  optional    [batch, L, H, P]     input format
//   D      [H] or [H, P] optional                      fp32
//   dt_bias [H] optional                               fp32
//   initial_states [S, H, P, N] optional (S = batch)   state format
//   initial_states_scale [S, H, P] or [S, H, P, 1]     fp32, with an int16_scaled state only:
//                                                       the decode scale of each row (its codes, i16,
//                                                       in initial_states)
//   cu_seqlens [S + 1] integer, packed only; absent means one sequence of all T tokens.
//   (x [1, T, H, P] with cu_seqlens is the packed layout with a batch axis of 1, as
//   varlen Triton kernels take it.)
// Output tensors: y [T, H, P] or [batch, L, H, P] (output format), optional final_states
// [S, H, P, N] (state format; int16_scaled: i16 codes with final_states_scale as above). A file may hold problem and outputs together; any other
// name is an error (a misspelt optional tensor must not be silently ignored).
//
// Values go through as_format_values with the declared formats (bf16 as int16/uint16 bit
// patterns included): the input-format tensors, y and the final states come narrowed to their
// formats (bf16 and fp16 held as bits, 2 bytes an element); A, D, dt_bias and the initial
// states as floats. Then validate() checks the problem (finite, exact, consistent).
// Errors are TensorFileErrors naming the file, the tensor and the field, e.g.
//   "problem.npz: tensor 'B': shape: [4, 2, 16] disagrees with [tokens=5, G, N] (tokens from x [5, 8, 64])".
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "spec/problem.h"
#include "verify/tensor_file/tensor.h"

namespace ssmv::tensor_file {

enum class Layout : uint8_t { packed, batched };

// What the caller declares: the tensors' number formats and the options no file holds.
struct ProblemFileOptions {
  Formats formats;  // input (x, dt, B, C, z), state (initial/final states), output (y)
  bool dt_softplus = false;
  float dt_limit_lo = -std::numeric_limits<float>::infinity();
  float dt_limit_hi = std::numeric_limits<float>::infinity();
};

// The problem in `tensors` (read from `file`, named in messages); validated. *layout,
// when given, receives the layout x was found in.
Problem problem_from_tensors(const TensorMap& tensors, const std::string& file,
                             const ProblemFileOptions& options, Layout* layout = nullptr);
Problem load_problem_file(const std::string& path, const ProblemFileOptions& options);

// A kernel's outputs in the packed order of the problem. Read from a file they are narrowed to
// their formats (bf16 and fp16 held as bits, spec/format_values.h); built by a caller they may
// be loose floats.
struct KernelOutputs {
  FormatValues y;             // [T, H, P] output format; NaN and Inf kept (judged later)
  FormatValues final_states;  // [S, H, P, N] state format, or empty when absent
};

// The outputs in `tensors`, their shapes checked against `problem` (y packed [T, H, P], or
// batched [S, L, H, P] when every sequence has length L). Values must be exact in the
// problem's output / state formats; NaN and Inf are accepted (INVALID is a verdict).
KernelOutputs outputs_from_tensors(const TensorMap& tensors, const std::string& file, const Problem& problem);
KernelOutputs load_outputs_file(const std::string& path, const Problem& problem);

// The hand-off prefix of each sequence, the optional integer tensor prefill_tokens [S]
// (tokens of sequence s done by the chunked kernel; the rest by the decode kernel), checked
// against the sequences' lengths; nullopt when the file has none.
std::optional<std::vector<int64_t>> prefill_tokens_from_tensors(const TensorMap& tensors, const std::string& file,
                                                                const Problem& problem);

// The inverse mappings, for counterexample and report files: the packed layout, each tensor
// in its format's dtype (F32, BF16 or F16; .npz stores bf16 as uint16 bit patterns, which
// problem_from_tensors reads back with the same declared formats), cu_seqlens as i64.
// problem_from_tensors(problem_tensors(p), ...) with p's formats and options gives p back.
// An int16_scaled state throws std::invalid_argument (its codes and scales are the kernel's).
TensorMap problem_tensors(const Problem& problem);
TensorMap output_tensors(const KernelOutputs& outputs, const Problem& problem);

}  // namespace ssmv::tensor_file
