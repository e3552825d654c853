#!/usr/bin/env python3
"""Measured error of the transcendentals of mamba_ssm's Mamba-3 SISO kernels (issue 31 item 3).

Why: a contract for the Mamba-3 kernels (docs/mamba3-semantics.md §6) needs an error budget for
each transcendental, valid over the arguments the kernels actually feed it. The kernels call
PTX approximations through inline asm (mamba_ssm/ops/triton/mamba3/utils.py: tanh_approx,
cos_approx, sin_approx) and Triton built-ins (tl.math.exp2, tl.sigmoid); the layer's own decode
path (mamba3_mimo_rotary_step.py) uses tl.cos / tl.sin of an angle it never reduces. NVIDIA's
PTX ISA documents (docs.nvidia.com/cuda/parallel-thread-execution, §9.7.3.18-22):
  * sin.approx.f32 / cos.approx.f32: max absolute error 2^-20.5 on [-2pi, 2pi], 2^-14.7 on
    [-100pi, 100pi], "only best effort" outside [-100pi, 100pi];
  * tanh.approx.f32: max relative error 2^-11 over the entire floating point range;
  * ex2.approx.f32: max 2 ulp from the correctly rounded result over the full range.
This script evaluates each primitive exactly as the kernels call it -- the JIT helpers are
imported from mamba_ssm's own utils.py at run time, the built-ins are written as the kernels
write them -- on EVERY fp32 argument of a range (or every bf16 one, where the prefill feeds a
bf16 tensor: a bf16 value is the fp32 value with the low 16 bits zero, so those are the fp32
patterns with stride 2^16), and compares with float64 on the GPU (relative error < 2^-50,
negligible against the figures measured here).

Per case and bin of |x| (and per named range, the union of bins) it reports the max absolute
error, max relative error (|computed - exact| / |exact|), max error in fp32 ULPs of the exact
value (ulp_fp32(v) = 2^(max(floor(log2|v|), -126) - 23)), the max distance in fp32 steps from
the correctly rounded result (the measure of the ex2 documentation), the share correctly
rounded, the results flushed to zero, the argument of each maximum, and how many arguments exceed
the documented bound.

Case `exp2` (function F_EX2_FTZ): the instruction the prefill's exp2 calls compile to,
ex2.approx.ftz.f32, as mamba3_siso_fwd.py writes it (tl.math.exp2 of an fp32 w <= 0; compiled as
its own kernel and its PTX checked for `ex2.approx.ftz.f32`), on every fp32 w in [-127, 0]
(1,123,942,401 arguments): max ULP of the exact 2^w, max relative error and where, per binade and
for [-126, 0] (2^w normal) apart from [-127, -126) (2^w subnormal, flushed to zero by .ftz: the
absolute error there is the flushed value), and its bits compared with an inline-asm
`ex2.approx.ftz.f32` on every argument. (Case `exp2.full`, the same built-in over all w <= 0 and
[0, 128), is the earlier measurement.)

Outputs (in --out): mamba3_transcendentals.json (all figures), mamba3_transcendentals_ptx.json
(PTX of each compiled case: which instructions tl.cos, tl.math.exp2, tl.sigmoid became),
mamba3_transcendentals.md (the tables, also printed).

Run on the device machine (H200; torch 2.11, Triton 3.6), .triton_src as in README.md:
  run(command="export PYTHONUNBUFFERED=1; set -o pipefail; python3
      scripts/triton/measure_mamba3_transcendentals.py --out $OUT 2>&1 | tee $OUT/log.txt",
      carry=[".triton_src"])
--only KEY[,KEY...] measures only those cases (keys: tanh, tanh.bf16, cos, cos.bf16, sin, sin.bf16,
tl.cos, tl.sin, exp2.full, exp, sigmoid, silu, tanh.sigmoid, exp2), e.g. --only exp2. Expected
time: the committed run of the first 13 cases (about 26e9 arguments) took 9 s of GPU work; with
Python, CUDA and Triton start-up and one compilation per case, about 1-2 minutes for all 14
cases, under a minute for --only exp2 (2.2e9 kernel evaluations and the float64 references) —
well inside an 8-minute device call.
Local smoke test without a GPU or Triton (torch fp32 stand-ins for the primitives, a sample of
the arguments):
  python3 scripts/triton/measure_mamba3_transcendentals.py --cpu --stride 65537 --out "$(mktemp -d)"
"""

import json
import math
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import measure_budgets  # noqa: E402
from measure_budgets import f2p, p2f, patterns  # noqa: E402  (fp32 <-> pattern, pattern batches)

FLT_MAX = 3.4028234663852886e38
INF = float("inf")
BF16_STRIDE = 1 << 16  # bf16 values are the fp32 patterns whose low 16 bits are zero
PTX_DOC = "https://docs.nvidia.com/cuda/parallel-thread-execution/#floating-point-instructions-"
LOG2E_KERNEL = 1.44269504089  # the kernels' literal (fp32: 0x3FB8AA3B, as Triton's own log2e)


def f32_floor(v):
    """The largest fp32 value <= v (v >= 0): the edge of a documented range like 2pi."""
    p = f2p(v)
    return p2f(p - 1) if p2f(p) > v else p2f(p)


TWO_PI_LO = f32_floor(2 * math.pi)           # 6.2831850: the last fp32 value inside [0, 2pi]
HUNDRED_PI_LO = f32_floor(100 * math.pi)     # 314.15924: the last one inside [0, 100pi]


def mag(lo, hi, lo_open=False, hi_open=False):
    """Inclusive pattern range (of the magnitude) of the fp32 values in the interval; lo, hi must
    be fp32 values."""
    for v in (lo, hi):
        if p2f(f2p(v)) != v:
            raise ValueError(f"{v!r} is not an fp32 value")
    return f2p(lo) + (1 if lo_open else 0), f2p(hi) - (1 if hi_open else 0)


def signed_bins(spec, signs=(-1, 1)):
    """[(label, sign, p0, p1)] for each (label_fmt, lo, hi, lo_open, hi_open) of spec and sign."""
    out = []
    for sign in signs:
        for fmt_, lo, hi, lo_open, hi_open in spec:
            p0, p1 = mag(lo, hi, lo_open, hi_open)
            out.append((fmt_.format(s="-" if sign < 0 else "+"), sign, p0, p1))
    return out


# |x| bins. tanh: subnormal inputs, then ranges of the result's behaviour (tanh x ~ x, curved,
# saturated: fp32 tanh(x) rounds to 1 for |x| > 9.01).
TANH_BINS = signed_bins([
    ("{s}[0, 2^-126)", 0.0, 2.0 ** -126, False, True),
    ("{s}[2^-126, 2^-12)", 2.0 ** -126, 2.0 ** -12, False, True),
    ("{s}[2^-12, 0.25)", 2.0 ** -12, 0.25, False, True),
    ("{s}[0.25, 1)", 0.25, 1.0, False, True),
    ("{s}[1, 4)", 1.0, 4.0, False, True),
    ("{s}[4, 16)", 4.0, 16.0, False, True),
    ("{s}[16, max]", 16.0, FLT_MAX, False, False),
])
# cos/sin: the documented ranges [-2pi, 2pi] and [-100pi, 100pi], and the unreduced angles of
# the layer's decode path (|theta| grows by up to pi*dt per token; 1e4 is ~1e4-1e5 tokens).
# "2pi" is TWO_PI_LO; fp32(2pi) = 6.2831855 itself (which the kernels' reduction can return)
# lies in the second bin.
TRIG_BINS = signed_bins([
    ("{s}[0, 2pi]", 0.0, TWO_PI_LO, False, False),
    ("{s}(2pi, 8]", TWO_PI_LO, 8.0, True, False),
    ("{s}(8, 100]", 8.0, 100.0, True, False),
    ("{s}(100, 100pi]", 100.0, HUNDRED_PI_LO, True, False),
    ("{s}(100pi, 1000]", HUNDRED_PI_LO, 1000.0, True, False),
    ("{s}(1000, 1e4]", 1000.0, 10000.0, True, False),
])
TRIG_RANGES = [  # (label, the bins it unites, documented abs bound of the PTX approx or None)
    ("[0, 2pi] (Triton step/prefill: theta reduced)", ["+[0, 2pi]"], 2.0 ** -20.5),
    ("[-2pi, 2pi] (PTX doc range 1)", ["-[0, 2pi]", "+[0, 2pi]"], 2.0 ** -20.5),
    ("[-100, 100]", [b + s for s in ("[0, 2pi]", "(2pi, 8]", "(8, 100]") for b in "-+"], 2.0 ** -14.7),
    ("[-100pi, 100pi] (PTX doc range 2)",
     [b + s for s in ("[0, 2pi]", "(2pi, 8]", "(8, 100]", "(100, 100pi]") for b in "-+"], 2.0 ** -14.7),
    ("[-1000, 1000] (no documented bound)",
     [b + s for s in ("[0, 2pi]", "(2pi, 8]", "(8, 100]", "(100, 100pi]", "(100pi, 1000]") for b in "-+"], None),
    ("[-1e4, 1e4] (no documented bound)", [b for b, *_ in TRIG_BINS], None),
]


def trig_doc_bound(label):
    """The documented absolute bound of sin/cos.approx for the arguments of one bin."""
    inner = label[1:]
    if inner == "[0, 2pi]":
        return 2.0 ** -20.5
    if inner in ("(2pi, 8]", "(8, 100]", "(100, 100pi]"):
        return 2.0 ** -14.7
    return None


# ex2 / exp: the kernels feed x <= 0 (adt = A*dt < 0, cumulative sums of it, min(., 0)); the
# positive side is measured only to check the documentation's "full range".
EX2_BINS = signed_bins([("{s}[0, 1)", 0.0, 1.0, False, True)] + [
    ("{s}[2^%d, 2^%d)" % (j, j + 1), 2.0 ** j, 2.0 ** (j + 1), False, True) for j in range(7)
] + [("{s}[128, 150]", 128.0, 150.0, False, False), ("{s}(150, max]", 150.0, FLT_MAX, True, False)],
    signs=(-1,)) + signed_bins([("{s}[0, 128)", 0.0, 128.0, False, True)], signs=(1,))
EXP_BINS = signed_bins([("{s}[0, 1)", 0.0, 1.0, False, True)] + [
    ("{s}[2^%d, 2^%d)" % (j, j + 1), 2.0 ** j, 2.0 ** (j + 1), False, True) for j in range(6)
] + [("{s}[64, 104]", 64.0, 104.0, False, False)], signs=(-1,))
# ex2.approx.ftz.f32 where the prefill feeds it: w in [-127, 0], and [0, 1) because
# da_cs_rev = fl(da_cs_last − da_cs) (mamba3_siso_fwd.py:439) may round above 0; 2^w is normal for
# w >= -126 and subnormal (flushed to zero by .ftz) in [-127, -126).
EX2_FTZ_BINS = signed_bins([("{s}[0, 1)", 0.0, 1.0, False, True)] + [
    ("{s}[2^%d, 2^%d)" % (j, j + 1), 2.0 ** j, 2.0 ** (j + 1), False, True) for j in range(6)
] + [("{s}[64, 126]", 64.0, 126.0, False, False), ("{s}(126, 127]", 126.0, 127.0, True, False)], signs=(-1,)) + \
    signed_bins([("{s}[0, 1)", 0.0, 1.0, False, True)], signs=(1,))  # last − cs_j may round above 0
EX2_FTZ_NORMAL = [b for b, *_ in EX2_FTZ_BINS if b != "-(126, 127]"]
EX2_FTZ_RANGES = [  # (label, the bins it unites, documented abs bound: none)
    ("[-126, 1) (2^w normal)", EX2_FTZ_NORMAL, None),
    ("[-127, -126) (2^w subnormal: flushed by .ftz)", ["-(126, 127]"], None),
    ("[-127, 1)", [b for b, *_ in EX2_FTZ_BINS], None),
]
ALL_BINS = signed_bins([("{s}[0, 1)", 0.0, 1.0, False, True), ("{s}[1, 4)", 1.0, 4.0, False, True),
                        ("{s}[4, 16)", 4.0, 16.0, False, True), ("{s}[16, 104)", 16.0, 104.0, False, True),
                        ("{s}[104, max]", 104.0, FLT_MAX, False, False)])

# The evaluated expressions (FUNC ids of the Triton kernel below).
(F_TANH, F_COS, F_SIN, F_TLCOS, F_TLSIN, F_EXP2, F_EXP2_LOG2E, F_SIGMOID, F_SILU, F_TANH_SIG, F_TLEXP, F_EX2_FTZ,
 F_EX2_FTZ_ASM) = range(13)
EXPRESSIONS = {
    F_TANH: "tanh_approx(x) (utils.py: inline asm tanh.approx.f32)",
    F_COS: "cos_approx(x) (utils.py: inline asm cos.approx.f32)",
    F_SIN: "sin_approx(x) (utils.py: inline asm sin.approx.f32)",
    F_TLCOS: "tl.cos(x)",
    F_TLSIN: "tl.sin(x)",
    F_EXP2: "tl.math.exp2(x)",
    F_EXP2_LOG2E: "tl.math.exp2(x * 1.44269504089)",
    F_SIGMOID: "sigmoid_approx(x) (utils.py: returns tl.sigmoid(x))",
    F_SILU: "silu(x) (utils.py: x * tl.sigmoid(x))",
    F_TANH_SIG: "tl.sigmoid(2.0 * x) * 2.0 - 1.0",
    F_TLEXP: "tl.exp(x)",
    F_EX2_FTZ: "tl.math.exp2(x) (as mamba3_siso_fwd.py calls it; expected PTX: ex2.approx.ftz.f32)",
    F_EX2_FTZ_ASM: "inline asm ex2.approx.ftz.f32",
}


def math_fn(fid, x):
    """The mathematical function that expression fid approximates, in x's own precision."""
    if fid in (F_TANH, F_TANH_SIG):
        return torch.tanh(x)
    if fid in (F_COS, F_TLCOS):
        return torch.cos(x)
    if fid in (F_SIN, F_TLSIN):
        return torch.sin(x)
    if fid in (F_EXP2, F_EX2_FTZ, F_EX2_FTZ_ASM):
        return torch.exp2(x)
    if fid in (F_EXP2_LOG2E, F_TLEXP):
        return torch.exp(x)
    s = 1.0 / (1.0 + torch.exp(-x))
    return s if fid == F_SIGMOID else x * s


def ref64(fid, x):
    """The exact value in float64 (x: the fp32 arguments)."""
    return math_fn(fid, x.double())


# Cases: what is measured, where the kernels use it, on which arguments.
CASES = [
    {"name": "tanh.approx fp32", "func": F_TANH, "format": "fp32", "bins": TANH_BINS, "doc": ("rel", 2.0 ** -11),
     "doc_text": "max relative error 2^-11 over the entire floating point range",
     "doc_url": PTX_DOC + "tanh", "used": "mamba3_siso_step.py:150 (tanh_approx(angle.to(fp32)), Angles as given), "
     "angle_dt.py:94 and :320 when angle_dt_fwd/bwd get fp32 angles"},
    {"name": "tanh.approx bf16", "func": F_TANH, "format": "bf16", "bins": TANH_BINS, "doc": ("rel", 2.0 ** -11),
     "doc_text": "max relative error 2^-11 over the entire floating point range",
     "doc_url": PTX_DOC + "tanh", "used": "angle_dt.py:94 via mamba3_siso_combined.py:397 (Angles cast to bf16)"},
    {"name": "cos.approx fp32", "func": F_COS, "format": "fp32", "bins": TRIG_BINS, "doc": ("abs", trig_doc_bound),
     "ranges": TRIG_RANGES, "doc_text": "max absolute error 2^-20.5 on [-2pi, 2pi], 2^-14.7 on [-100pi, 100pi]; "
     "no guarantee outside", "doc_url": PTX_DOC + "cos",
     "used": "mamba3_siso_step.py:162 (fp32 theta reduced at :156)"},
    {"name": "cos.approx bf16", "func": F_COS, "format": "bf16", "bins": TRIG_BINS, "doc": ("abs", trig_doc_bound),
     "ranges": TRIG_RANGES, "doc_text": "as cos.approx fp32", "doc_url": PTX_DOC + "cos",
     "used": "mamba3_siso_fwd.py:328 (Angles_Cumsum, bf16: angle_dt.py:165 empty_like of the bf16 angles)"},
    {"name": "sin.approx fp32", "func": F_SIN, "format": "fp32", "bins": TRIG_BINS, "doc": ("abs", trig_doc_bound),
     "ranges": TRIG_RANGES, "doc_text": "max absolute error 2^-20.5 on [-2pi, 2pi], 2^-14.7 on [-100pi, 100pi]; "
     "no guarantee outside", "doc_url": PTX_DOC + "sin", "used": "mamba3_siso_step.py:163"},
    {"name": "sin.approx bf16", "func": F_SIN, "format": "bf16", "bins": TRIG_BINS, "doc": ("abs", trig_doc_bound),
     "ranges": TRIG_RANGES, "doc_text": "as sin.approx fp32", "doc_url": PTX_DOC + "sin",
     "used": "mamba3_siso_fwd.py:329"},
    {"name": "tl.cos fp32", "func": F_TLCOS, "format": "fp32", "bins": TRIG_BINS, "doc": None, "ranges": TRIG_RANGES,
     "doc_text": "Triton built-in (see the PTX record for what it lowers to)", "doc_url": "",
     "used": "mamba3_mimo_rotary_step.py:83 (the layer's decode path, Mamba3.step; theta unreduced, :77)"},
    {"name": "tl.sin fp32", "func": F_TLSIN, "format": "fp32", "bins": TRIG_BINS, "doc": None, "ranges": TRIG_RANGES,
     "doc_text": "Triton built-in (see the PTX record)", "doc_url": "",
     "used": "mamba3_mimo_rotary_step.py:84"},
    {"name": "ex2 fp32 (tl.math.exp2)", "func": F_EXP2, "format": "fp32", "bins": EX2_BINS, "doc": ("crd", 2.0),
     "doc_text": "max 2 ulp from the correctly rounded result across the full range (ex2.approx.f32)",
     "doc_url": PTX_DOC + "ex2",
     "used": "mamba3_siso_fwd.py:407, :412, :440, :442 (cumulative sums of adt*log2e, <= 0); "
     "mamba3_siso_step.py:189"},
    {"name": "exp via exp2(x*1.44269504089) fp32", "func": F_EXP2_LOG2E, "format": "fp32", "bins": EXP_BINS,
     "doc": None, "same_bits_as": F_TLEXP,
     "doc_text": "composite: one fp32 rounding of x*log2e, then ex2 (see triton-budgets.md 'exp')", "doc_url": "",
     "used": "alpha = exp(adt): mamba3_siso_step.py:185+189 (and mamba3_siso_fwd.py:386 before the cumsum)"},
    {"name": "sigmoid bf16 (tl.sigmoid)", "func": F_SIGMOID, "format": "bf16", "bins": ALL_BINS, "doc": None,
     "doc_text": "Triton built-in (fp32 budget in triton-budgets.md 'sigmoid')", "doc_url": "",
     "used": "mamba3_siso_fwd.py:298, :302, :369 via mamba3_siso_combined.py:396 (Trap cast to bf16); "
     "mamba3_siso_step.py:187 (Trap as given)"},
    {"name": "silu bf16 (x*tl.sigmoid(x))", "func": F_SILU, "format": "bf16", "bins": ALL_BINS, "doc": None,
     "doc_text": "Triton built-ins (fp32 budget in triton-budgets.md 'silu_gate')", "doc_url": "",
     "used": "mamba3_siso_fwd.py:431 via mamba3_siso_combined.py:399 (Z cast to bf16); mamba3_siso_step.py:219"},
    {"name": "tanh as 2*sigmoid(2x)-1 fp32", "func": F_TANH_SIG, "format": "fp32", "bins": TANH_BINS, "doc": None,
     "doc_text": "Triton built-ins", "doc_url": "",
     "used": "mamba3_mimo_rotary_step.py:76 (the layer's decode path)"},
    {"key": "exp2", "name": "ex2.approx.ftz.f32 (tl.math.exp2) on [-127, 0]", "func": F_EX2_FTZ, "format": "fp32",
     "bins": EX2_FTZ_BINS, "ranges": EX2_FTZ_RANGES, "doc": ("crd", 2.0), "same_bits_as": F_EX2_FTZ_ASM,
     "ptx_expect": "ex2.approx.ftz.f32", "summary": True,
     "doc_text": "ex2.approx.f32: max 2 ulp from the correctly rounded result across the full range; .ftz flushes "
     "subnormal arguments and results to sign-preserving zero", "doc_url": PTX_DOC + "ex2",
     "used": "mamba3_siso_fwd.py:407, :412, :440, :442 (exp2 of da_cs, min(da_cs_i - da_cs_j, 0), da_cs_rev, "
     "da_cs_last: cumulative sums of adt*1.44269504089, <= 0); mamba3_siso_step.py:189"},
]
CASE_KEYS = {  # --only's names of the cases above (the last one has its key)
    "tanh.approx fp32": "tanh",
    "tanh.approx bf16": "tanh.bf16",
    "cos.approx fp32": "cos",
    "cos.approx bf16": "cos.bf16",
    "sin.approx fp32": "sin",
    "sin.approx bf16": "sin.bf16",
    "tl.cos fp32": "tl.cos",
    "tl.sin fp32": "tl.sin",
    "ex2 fp32 (tl.math.exp2)": "exp2.full",
    "exp via exp2(x*1.44269504089) fp32": "exp",
    "sigmoid bf16 (tl.sigmoid)": "sigmoid",
    "silu bf16 (x*tl.sigmoid(x))": "silu",
    "tanh as 2*sigmoid(2x)-1 fp32": "tanh.sigmoid",
}
for _c in CASES:
    _c.setdefault("key", CASE_KEYS.get(_c["name"], _c["name"]))


class Evaluator(measure_budgets.Evaluator):
    """The expressions: one Triton kernel on the GPU (launched by measure_budgets.Evaluator's
    __call__, which also keeps the compiled handles); torch fp32 stand-ins with --cpu."""

    def __init__(self, cpu, mamba_src):  # not the parent's: this kernel instead of its one
        self.cpu = cpu
        self.compiled = {}
        if cpu:
            return
        import triton
        import triton.language as tl
        utils = common.load_mamba_triton(mamba_src, ("mamba3.utils",))["mamba3.utils"]
        tanh_approx, cos_approx, sin_approx = utils.tanh_approx, utils.cos_approx, utils.sin_approx
        sigmoid_approx, silu = utils.sigmoid_approx, utils.silu

        @triton.jit
        def _eval_kernel(x_ptr, y_ptr, n, FUNC: tl.constexpr, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            m = offs < n
            x = tl.load(x_ptr + offs, mask=m, other=0.0)
            if FUNC == 0:
                y = tanh_approx(x)
            elif FUNC == 1:
                y = cos_approx(x)
            elif FUNC == 2:
                y = sin_approx(x)
            elif FUNC == 3:
                y = tl.cos(x)
            elif FUNC == 4:
                y = tl.sin(x)
            elif FUNC == 5:
                y = tl.math.exp2(x)
            elif FUNC == 6:
                y = tl.math.exp2(x * 1.44269504089)
            elif FUNC == 7:
                y = sigmoid_approx(x)
            elif FUNC == 8:
                y = silu(x)
            elif FUNC == 9:
                y = tl.sigmoid(2.0 * x) * 2.0 - 1.0
            elif FUNC == 10:
                y = tl.exp(x)
            elif FUNC == 11:
                y = tl.math.exp2(x)
            else:
                y = tl.inline_asm_elementwise("ex2.approx.ftz.f32 $0, $1;", constraints="=f,f", args=[x],
                                              dtype=tl.float32, is_pure=True, pack=1)
            tl.store(y_ptr + offs, y, mask=m)

        self.kernel = _eval_kernel
        self.triton = triton

    def __call__(self, fid, x):
        return self._stand_in(fid, x) if self.cpu else super().__call__(fid, x)

    @staticmethod
    def _stand_in(fid, x):
        """torch fp32 versions, for a smoke test of the bookkeeping only (not the GPU's values):
        the composites as written, the rest as the plain function in fp32."""
        if fid == F_EXP2_LOG2E:
            return torch.exp2(x * np.float32(LOG2E_KERNEL).item())
        if fid == F_TLEXP:
            return torch.exp2(x * np.float32(math.log2(math.e)).item())
        if fid == F_TANH_SIG:
            return torch.sigmoid(2.0 * x) * 2.0 - 1.0
        if fid in (F_EX2_FTZ, F_EX2_FTZ_ASM):  # .ftz: subnormal arguments and results are zeros
            y = torch.exp2(torch.where(x.abs() < 2.0 ** -126, torch.zeros_like(x), x))
            return torch.where(y.abs() < 2.0 ** -126, torch.zeros_like(y), y)
        return math_fn(fid, x)

    def ptx(self, fid):
        """(full PTX, opcode counts of the arithmetic part) of the compiled case, or (None, {})."""
        if self.cpu or fid not in self.compiled:
            return None, {}
        h, order = self.compiled[fid]
        text = common.ptx_of(h, self.kernel, order)
        if text is None:
            return None, {}
        return text, common.ptx_opcodes(text, skip=("ld.", "st.", "mov.", "ret", "bra", "cvta"))


def ulp_fp32(ex):
    """2^(max(floor(log2|ex|), -126) - 23), from the float64 exponent field."""
    e = ((ex.view(torch.int64) >> 52) & 0x7FF) - 1023
    return ((e.clamp(min=-126) - 23 + 1023) << 52).view(torch.float64)


def ordered(y):
    """fp32 values on the ordered integer line (int64): adjacent floats differ by 1, -0 == +0."""
    b = y.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    return torch.where(b >= 0x80000000, -(b & 0x7FFFFFFF), b)


STAT_KEYS = ("abs", "rel", "ulp", "crd")


class BinStats:
    """Running statistics of one bin: maxima with their arguments, counts."""

    def __init__(self, label, sign, n):
        self.label, self.sign, self.n = label, sign, n
        self.correct = self.nonfinite = self.flushed = self.over_doc = self.bits_differ = 0
        self.max = {k: {"value": -1.0, "x": None, "computed": None, "exact": None} for k in STAT_KEYS}

    def add(self, x, y, ex, doc_mask, y_other):
        y64 = y.double()
        err = torch.nan_to_num((y64 - ex).abs(), nan=INF, posinf=INF)
        rel = torch.where(ex != 0, err / ex.abs(), torch.where(err == 0, torch.zeros_like(err), torch.full_like(err, INF)))
        ulp = err / ulp_fp32(ex)
        rn = ex.float()  # the correctly rounded result (round to nearest even)
        finite = torch.isfinite(y)
        crd = torch.where(finite, (ordered(y) - ordered(rn)).abs().double(), torch.full_like(err, INF))
        vals = {"abs": err, "rel": rel, "ulp": ulp, "crd": crd}
        idx = torch.stack([torch.argmax(vals[k]) for k in STAT_KEYS])
        x64 = x.double()
        picked = torch.stack([torch.stack([vals[k][i], x64[i], y64[i], ex[i]])
                              for k, i in zip(STAT_KEYS, idx)]).cpu().tolist()
        for k, (v, xv, yv, ev) in zip(STAT_KEYS, picked):
            if v > self.max[k]["value"]:
                self.max[k] = {"value": v, "x": xv, "computed": yv, "exact": ev}
        counts = [(y == rn).sum(), (~finite).sum(), ((y == 0) & (ex != 0)).sum()]
        if doc_mask is not None:
            counts.append(doc_mask(vals).sum())
        if y_other is not None:
            counts.append((y_other.view(torch.int32) != y.view(torch.int32)).sum())
        counts = [int(c) for c in torch.stack(counts).cpu().tolist()]
        self.correct += counts[0]
        self.nonfinite += counts[1]
        self.flushed += counts[2]
        if doc_mask is not None:
            self.over_doc += counts[3]
        if y_other is not None:
            self.bits_differ += counts[-1]

    def record(self):
        return {"bin": self.label, "arguments": self.n, "correctly_rounded": self.correct,
                "nonfinite": self.nonfinite, "flushed_to_zero": self.flushed, "over_doc_bound": self.over_doc,
                "bits_differ": self.bits_differ,
                "max": self.max}


def merge(records, label):
    """Union statistics of several bin records."""
    out = {"range": label, "arguments": sum(r["arguments"] for r in records),
           "correctly_rounded": sum(r["correctly_rounded"] for r in records),
           "nonfinite": sum(r["nonfinite"] for r in records),
           "flushed_to_zero": sum(r["flushed_to_zero"] for r in records),
           "over_doc_bound": sum(r["over_doc_bound"] for r in records),
           "bits_differ": sum(r["bits_differ"] for r in records), "max": {}}
    for k in STAT_KEYS:
        out["max"][k] = max((r["max"][k] for r in records), key=lambda m: m["value"])
    return out


def measure_case(case, ev, device, stride, batch, log):
    """Every argument of the case's bins through the expression; one BinStats record per bin."""
    step = BF16_STRIDE * max(1, stride // BF16_STRIDE) if case["format"] == "bf16" else stride
    doc = case.get("doc")
    recs = []
    for label, sign, p0, p1 in case["bins"]:
        if case["format"] == "bf16":  # round the pattern range inward to multiples of 2^16
            p0 = -(-p0 // BF16_STRIDE) * BF16_STRIDE
            p1 = (p1 // BF16_STRIDE) * BF16_STRIDE
        n = (p1 - p0) // step + 1 if p1 >= p0 else 0
        st = BinStats(label, sign, n)
        base = p0 | (0x80000000 if sign < 0 else 0)
        doc_mask = None
        if doc is not None:
            kind, bound = doc
            b = bound(label) if callable(bound) else bound
            if b is not None:
                doc_mask = lambda vals, kind=kind, b=b: vals[kind] > b  # noqa: E731
        for off in range(0, n, batch):
            m = min(batch, n - off)
            x = patterns(base + off * step, m, step, device)
            y = ev(case["func"], x)
            ex = ref64(case["func"], x)
            y_other = ev(case["same_bits_as"], x) if "same_bits_as" in case else None
            st.add(x, y, ex, doc_mask, y_other)
            del x, y, ex, y_other
        recs.append(st.record())
        if n:
            r = recs[-1]
            log(f"   {case['name']:<34} {label:<18} n={n:<11d} max abs {r['max']['abs']['value']:.3e} "
                f"ulp {r['max']['ulp']['value']:.4g} crd {r['max']['crd']['value']:.4g}")
    return recs


def fmt(v, d=3):
    if v is None:
        return "—"
    if v == INF:
        return "inf"
    if v != 0 and (abs(v) < 1e-3 or abs(v) >= 1e5):
        return f"{v:.{d}e}"
    return f"{v:.{d}f}"


def log2_text(v):
    return "—" if not v or v <= 0 or v == INF else f"2^{math.log2(v):.2f}"


def table_rows(rows):
    """Markdown rows: range/bin, arguments, max abs (at x), max rel, max ULP, max steps from RN,
    share correctly rounded, over the documented bound."""
    out = ["| arguments | count | max abs error (at x) | max rel error (at x) | max ULP (at x) | "
           "max steps from RN | correctly rounded | over doc bound |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if not r["arguments"]:
            continue
        m = r["max"]
        out.append(
            f"| {r.get('range', r.get('bin'))} | {r['arguments']} | {fmt(m['abs']['value'])} = "
            f"{log2_text(m['abs']['value'])} ({m['abs']['x']!r}) | {fmt(m['rel']['value'])} ({m['rel']['x']!r}) | "
            f"{fmt(m['ulp']['value'])} ({m['ulp']['x']!r}) | {fmt(m['crd']['value'], 0)} | "
            f"{100.0 * r['correctly_rounded'] / r['arguments']:.3f}% | {r['over_doc_bound']} |")
    return out


def summary_lines(c):
    """The figures a case with "summary" asks for: per range the max ULP / rel / abs error with
    where they occur, the flushed results, the PTX check and the bit comparison."""
    L = ["Summary:"]
    chk = c.get("ptx_check")
    if chk:
        L.append(f"* PTX of the compiled case: `{chk['expected']}` {'found' if chk['found'] else 'NOT FOUND'}; "
                 "its ex2 instructions: " + (", ".join(f"`{k}`×{v}" for k, v in sorted(chk["ex2_opcodes"].items()))
                                             or "none") + ".")
    if c.get("same_bits_as"):
        n, d = sum(b["arguments"] for b in c["bins"]), sum(b["bits_differ"] for b in c["bins"])
        L.append(f"* bits differing from `{c['same_bits_as']}`: {d} of {n} arguments.")
    for r in c["ranges"]:
        m = r["max"]

        def at(k):
            return f"(at x = {m[k]['x']!r}: computed {m[k]['computed']!r}, exact {m[k]['exact']!r})"
        L.append(f"* {r['range']}: {r['arguments']} arguments; max error {fmt(m['ulp']['value'], 4)} ULP of the exact "
                 f"result {at('ulp')}; max relative error {fmt(m['rel']['value'])} = {log2_text(m['rel']['value'])} "
                 f"{at('rel')}; max absolute error {fmt(m['abs']['value'])} = {log2_text(m['abs']['value'])} "
                 f"{at('abs')}; max {fmt(m['crd']['value'], 0)} steps from the correctly rounded result; "
                 f"{r['flushed_to_zero']} results flushed to 0; {r['correctly_rounded']} correctly rounded.")
    return L


def write_outputs(out, env, results, ptx, elapsed, stride, cpu):
    doc = {"environment": env, "stride": stride, "cpu_stand_ins": cpu, "gpu_seconds": elapsed,
           "cases": results,
           "ptx_opcodes": {EXPRESSIONS[f]: c for f, (_t, c) in ptx.items()}}
    with open(os.path.join(out, "mamba3_transcendentals.json"), "w") as fh:
        json.dump(doc, fh, indent=1, default=float)
        fh.write("\n")
    with open(os.path.join(out, "mamba3_transcendentals_ptx.json"), "w") as fh:
        json.dump({EXPRESSIONS[f]: t for f, (t, _c) in ptx.items()}, fh, indent=1)
        fh.write("\n")
    L = [f"# Mamba-3 SISO transcendentals, measured\n",
         f"{common.env_line(env)}; scripts/triton/measure_mamba3_transcendentals.py, "
         f"{'every' if stride == 1 else f'every {stride}-th'} argument, {elapsed:.0f} s of GPU work"
         + ("; CPU STAND-INS (smoke test, not the GPU's values)" if cpu else "") + ".\n",
         "Exact values in float64. ULP = ulp_fp32(exact); steps from RN = distance in fp32 values from the "
         "correctly rounded result; 'over doc bound' counts arguments whose error exceeds NVIDIA's documented "
         "bound for the range.\n"]
    for c in results:
        L.append(f"## {c['name']}: `{c['expression']}`\n")
        L.append(f"Used by: {c['used']}. Documented: {c['doc_text']}"
                 + (f" ({c['doc_url']})" if c["doc_url"] else "") + ".\n")
        if c.get("ptx_opcodes"):
            L.append("PTX opcodes: " + ", ".join(f"`{k}`×{v}" for k, v in sorted(c["ptx_opcodes"].items())) + "\n")
        if c.get("ranges"):
            L.extend(table_rows(c["ranges"]))
            L.append("")
        L.extend(table_rows(c["bins"]))
        if c.get("summary"):
            L.append("")
            L.extend(summary_lines(c))
        elif c.get("same_bits_as"):
            L.append(f"\nBits differing from `{c['same_bits_as']}`: {sum(b['bits_differ'] for b in c['bins'])} "
                     f"of {sum(b['arguments'] for b in c['bins'])}.")
        L.append("")
    common.write_lines(os.path.join(out, "mamba3_transcendentals.md"), L)
    return L


def main():
    ap = common.base_parser(__doc__)
    ap.add_argument("--stride", type=int, default=1, help="every stride-th fp32 pattern (1: all)")
    ap.add_argument("--batch-log2", type=int, default=28)
    ap.add_argument("--cpu", action="store_true", help="torch stand-ins, a smoke test without a GPU")
    ap.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    ap.add_argument("--only", default="", help="comma-separated case keys (default: all): "
                    + ", ".join(c["key"] for c in CASES))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    device = "cpu" if args.cpu else "cuda"
    env = common.environment(args.mamba_src)
    print("environment:", json.dumps(env), flush=True)
    ev = Evaluator(args.cpu, args.mamba_src)
    only = [k for k in args.only.split(",") if k]
    unknown = [k for k in only if k not in {c["key"] for c in CASES}]
    if unknown:
        raise SystemExit(f"--only: unknown keys {unknown}; known: {', '.join(c['key'] for c in CASES)}")
    wanted = [c for c in CASES if (not args.cases or c["name"] in args.cases.split(","))
              and (not only or c["key"] in only)]
    results, t0 = [], time.time()
    for case in wanted:
        print(f"== {case['name']}: {EXPRESSIONS[case['func']]}", flush=True)
        bins = measure_case(case, ev, device, args.stride, 1 << args.batch_log2, lambda s: print(s, flush=True))
        by_label = {b["bin"]: b for b in bins}
        rec = {k: v for k, v in case.items() if k not in ("bins", "ranges", "doc", "func", "same_bits_as")}
        rec["expression"] = EXPRESSIONS[case["func"]]
        if case.get("doc"):
            kind, bound = case["doc"]
            rec["doc_bound"] = {"kind": kind, "value": "per range" if callable(bound) else bound}
        rec["bins"] = bins
        if "same_bits_as" in case:
            rec["same_bits_as"] = EXPRESSIONS[case["same_bits_as"]]
        if case.get("ranges"):
            rec["ranges"] = []
            for label, members, bound in case["ranges"]:
                r = merge([by_label[m] for m in members], label)
                r["doc_abs_bound"] = bound if case.get("doc") else None
                rec["ranges"].append(r)
        else:
            rec["ranges"] = [merge(bins, "all measured")]
        results.append(rec)
    if device == "cuda":
        torch.cuda.synchronize()
    elapsed = time.time() - t0
    ptx = {f: ev.ptx(f) for f in sorted(ev.compiled)} if not args.cpu else {}
    for rec, case in zip(results, wanted):
        rec["ptx_opcodes"] = ptx.get(case["func"], (None, {}))[1]
        if case.get("ptx_expect") and rec["ptx_opcodes"]:
            rec["ptx_check"] = {"expected": case["ptx_expect"], "found": case["ptx_expect"] in rec["ptx_opcodes"],
                                "ex2_opcodes": {k: v for k, v in rec["ptx_opcodes"].items() if k.startswith("ex2.")}}
            print(f"PTX check, {case['name']}: {rec['ptx_check']}", flush=True)
    lines = write_outputs(args.out, env, results, ptx, elapsed, args.stride, args.cpu)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
