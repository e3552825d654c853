// Host model of the H200's tensor-core accumulation (docs/design.md §4), exact for every
// bf16 or fp16 operand pair with normal or zero values and a finite fp32 accumulator:
// the host twin reproduces mma.sync.m16n8k16 f32.{bf16,f16} outputs bit for bit with it,
// and wgmma.mma_async.m64nNk16 f32.{bf16,f16} follows it too (below).
//
// One step of m16n8k16 computes, per output element, d = c + Σ_{k<16} a_k·b_k as:
//   * the 16 products a_k·b_k exactly;
//   * reference exponents: e(a)+e(b)+1 for a product, e(c)+1 for c (e = floor(log2|v|));
//     E is the largest over the non-zero terms, and at least −132;
//   * every term truncated toward zero to a multiple of 2^(E−26) (so never finer than 2^-158);
//   * the truncated terms summed exactly; the sum rounded toward zero to fp32 (in the
//     subnormal range: toward zero to a multiple of 2^-149).
// A step whose products are all zero returns c unchanged (c keeps its 24 bits: its lowest
// bit is 2^(e(c)−23), above the truncation grid 2^(e(c)−25)), so skipping such a step, as
// the kernel does above the causal diagonal, changes nothing — except for the sign of zero:
// every zero result is +0, also c = −0 passed through and a negative sum below the
// subnormal range (measured on the H200, 2026-11-30, tests/gpu_test.cpp
// MmaModelSignedZerosAndUnderflow; found by the GPU = twin property on an adversarial case).
//
// Subnormal operands (not covered by docs/design.md §4's measurement): the reference exponent
// of a subnormal operand is taken as the format's emin (−14 for fp16, −126 for bf16), as
// its exponent field reads, rather than floor(log2|v|) — SubnormalRule::exponent_field.
// The alternatives are kept for the device probe that decides between them
// (tests/gpu_test.cpp; result in bench/NOTES.md). A subnormal fp32 c reads its exponent
// field too (e(c) = −126).
//
// Tiny sums (measured on the H200, 2026-11-30, tests/mma_dump.cpp: 7.2 M bf16 outputs in
// seven operand regimes, 0 differ): E is clamped to −132 from below. Without the clamp,
// 1 to 13 in 10^4 results in the subnormal range were one 2^-149 step off (terms with bits
// below 2^-158 were kept, and their sum crossed a multiple of 2^-149), and without
// e(c) ≥ −126 one in eight sums with a subnormal c differed.
//
// wgmma (measured on the H200, 2026-12-02, tests/wgmma_dump.cpp: 11,624,448 outputs of
// wgmma.mma_async m64nNk16 f32.{bf16,f16} in 26 operand regimes, 0 differ; bench/NOTES.md):
// the same model. Each k16 instruction is one mma_step — for N = 8 and 64, A from shared
// memory or registers, B K-major or MN-major (imm-trans-b) — and K/16 instructions chained
// on one accumulator are mma_chain;
// scale-d = 0 is mma_step with c = +0; every zero result is +0. Read as two k8 halves per
// instruction, 0.5–78 % of the outputs of each non-integer regime would differ.
//
// Inf or NaN among the operands or c (not measured; docs/design.md §4): the step returns the
// IEEE sum of c and the products, rounded to fp32 (±Inf or NaN).
#pragma once

#include <cstddef>

#include "spec/format.h"

namespace ssmv::chunk_scan {

enum class SubnormalRule : unsigned char {
  exponent_field,  // e(v) = max(floor(log2|v|), emin): the default
  true_exponent,   // e(v) = floor(log2|v|) for subnormals too
  flush,           // subnormal operands count as zero
};

// Operand format of the tensor-core steps: fp16 or bf16 (emin −14 or −126).
struct MmaOperands {
  Format format = Format::bf16;
  SubnormalRule rule = SubnormalRule::exponent_field;
};

// One 16-wide step for one output element: a and b hold `count` ≤ 16 operand values
// (exact bf16 or fp16 values held in float); the missing ones are zero.
float mma_step(const float* a, const float* b, int count, float c, MmaOperands ops = {});

// A chained reduction as the kernel issues it: acc = mma_step over k-steps
// [16j, 16j+16) ∩ [0, len) for j = 0, 1, ... in increasing order. a and b are read with
// strides (elements) a_stride and b_stride.
float mma_chain(const float* a, std::ptrdiff_t a_stride, const float* b, std::ptrdiff_t b_stride,
                int len, float acc, MmaOperands ops = {});

// The SIMT reduction of the fp32 paths: acc = fmaf(a_k, b_k, acc) for k = 0..len-1.
float fma_chain(const float* a, std::ptrdiff_t a_stride, const float* b, std::ptrdiff_t b_stride,
                int len, float acc, MmaOperands ops = {});  // ops unused: one signature for both

}  // namespace ssmv::chunk_scan
