#!/usr/bin/env python3
"""Measured error budgets of the fp32 transcendentals of mamba_ssm's Triton kernels.

The production kernels (selective_state_update.py, ssd_chunk_state.py, ssd_chunk_scan.py,
ssd_state_passing.py) evaluate in fp32
  * the decay        tl.exp(x)                      (also tl.exp(tl.minimum(d, 0.0)))
  * softplus         tl.where(v <= 20.0, softplus(v), v) with mamba_ssm's
                     softplus = tl.math.log(tl.math.exp(v) + 1)   (TRITON3 branch)
  * the gate         z * tl.sigmoid(z)
This script evaluates each expression exactly as the kernels write it (the softplus
JIT function is imported from mamba_ssm itself) on EVERY fp32 argument of a range (bit
patterns enumerated on the GPU, 2^28 at a time), compares with the exact value (float64
on the GPU: relative error < 2^-50, negligible at the measured ULP levels), and fits a
budget of the form of docs/contracts.md

    |computed - exact| <= (ulp_const + ulp_per_abs_arg*|x|) * ulp_fp32(exact) + abs_error

with ulp_fp32(v) = 2^(max(floor(log2|v|), -126) - 23). Passes over all arguments:
  1. statistics per block of 4096 consecutive patterns (max ULP / absolute error, share
     correctly rounded, i.e. computed == fp32(exact)),
  2. the residual max((err - abs_error), 0) / ulp per block for the chosen abs_error,
  3. (ulp_per_abs_arg from the blocks) the exact max residual ulp_const over every argument,
  4. the check max(err / budget) <= 1 over every argument, in the fit range and the tails.

Outputs (in --out): budgets.json, budgets.md.

Run on the device machine (the exact command used, see scripts/triton/README.md):
  run(command="export PYTHONUNBUFFERED=1; python3 scripts/triton/measure_budgets.py
      --out $OUT 2>&1 | tee $OUT/budgets_log.txt", carry=[".triton_src"])
Local smoke test without a GPU (torch fp32 stand-ins for the Triton expressions, every
2^14-th pattern):  python3 scripts/triton/measure_budgets.py --cpu --stride 16384 --out "$(mktemp -d)"
"""

import json
import math
import os
import struct
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

FLT_MAX = 3.4028234663852886e38
TINY = 2.0 ** -126
LN_TINY = -126 * math.log(2.0)  # -87.3365: exp(x) < 2^-126 below
BS = 4096  # one block: this many consecutive (strided) fp32 patterns
INF = float("inf")


def f2p(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


def p2f(p):
    return struct.unpack("<f", struct.pack("<I", p))[0]


def seg(sign, mag_lo, mag_hi, lo_open=False):
    """Inclusive pattern range of the fp32 values of one sign with magnitude in
    [mag_lo, mag_hi] ((mag_lo, mag_hi] if lo_open); magnitudes grow with the pattern."""
    p0 = f2p(mag_lo) + (1 if lo_open else 0)
    p1 = f2p(mag_hi)
    s = 0x80000000 if sign < 0 else 0
    return (p0 | s, p1 | s)


# name -> (FUNC id of the Triton kernel, expression text, fit segments, tail segments,
#          fit range (lo, hi), abs_error rule)
FUNCS = {
    "exp": (0, "tl.exp(x)",
            [seg(-1, 0.0, 104.0), seg(+1, 0.0, 0.0)],
            [seg(-1, 104.0, FLT_MAX, lo_open=True)],
            (-104.0, 0.0), "subnormal"),
    "softplus": (2, "tl.where(x <= 20.0, softplus(x), x), softplus = mamba_ssm.ops.triton.softplus."
                    "softplus = tl.math.log(tl.math.exp(x) + 1)",
                 [seg(-1, 0.0, 104.0), seg(+1, 0.0, 20.0)],
                 [seg(-1, 104.0, FLT_MAX, lo_open=True), seg(+1, 20.0, FLT_MAX, lo_open=True)],
                 (-104.0, 20.0), "nonpositive"),
    "sigmoid": (3, "tl.sigmoid(x)",
                [seg(-1, 0.0, 104.0), seg(+1, 0.0, 104.0)],
                [seg(-1, 104.0, FLT_MAX, lo_open=True), seg(+1, 104.0, FLT_MAX, lo_open=True)],
                (-104.0, 104.0), "subnormal"),
    "silu_gate": (4, "x * tl.sigmoid(x)",
                  [seg(-1, 0.0, 104.0), seg(+1, 0.0, 104.0)],
                  [seg(-1, 104.0, FLT_MAX, lo_open=True), seg(+1, 104.0, FLT_MAX, lo_open=True)],
                  (-104.0, 104.0), "subnormal"),
}
EXP_MIN_FUNC = 1  # tl.exp(tl.minimum(x, 0.0)), checked bit for bit against tl.exp on [-104, 0]


def ref64(name, x):
    """The exact value in float64 (relative error below 2^-50)."""
    if name == "exp":
        return torch.exp(x)
    if name == "softplus":
        return torch.where(x > 0, x + torch.log1p(torch.exp(-x)), torch.log1p(torch.exp(x)))
    s = 1.0 / (1.0 + torch.exp(-x))
    return s if name == "sigmoid" else x * s


class Evaluator:
    """The fp32 expressions: the Triton kernel on the GPU, torch stand-ins with --cpu."""

    def __init__(self, cpu, mamba_src):
        self.cpu = cpu
        self.compiled = {}
        if cpu:
            return
        import triton
        import triton.language as tl
        softplus = common.load_mamba_triton(mamba_src, ("softplus",))["softplus"].softplus

        @triton.jit
        def _eval_kernel(x_ptr, y_ptr, n, FUNC: tl.constexpr, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            m = offs < n
            x = tl.load(x_ptr + offs, mask=m, other=0.0)
            if FUNC == 0:
                y = tl.exp(x)
            elif FUNC == 1:
                y = tl.exp(tl.minimum(x, 0.0))
            elif FUNC == 2:
                y = tl.where(x <= 20.0, softplus(x), x)
            elif FUNC == 3:
                y = tl.sigmoid(x)
            else:
                y = x * tl.sigmoid(x)
            tl.store(y_ptr + offs, y, mask=m)

        self.kernel = _eval_kernel
        self.triton = triton

    def __call__(self, fid, x):
        if self.cpu:
            if fid in (0, 1):
                return torch.exp(torch.minimum(x, torch.zeros_like(x)) if fid == 1 else x)
            if fid == 2:
                return torch.where(x <= 20.0, torch.log(torch.exp(x) + 1), x)
            return torch.sigmoid(x) if fid == 3 else x * torch.sigmoid(x)
        y = torch.empty_like(x)
        n = x.numel()
        h = self.kernel[(self.triton.cdiv(n, 1024),)](x, y, n, FUNC=fid, BLOCK=1024)
        if fid not in self.compiled:
            self.compiled[fid] = (h, len(self.compiled))  # handle, compilation order
        return y

    def ptx_summary(self, fid):
        """The distinct arithmetic instructions of the compiled kernel (registers elided)."""
        import re
        if fid not in self.compiled:
            return ["(not compiled)"]
        h, order = self.compiled[fid]
        ptx = common.ptx_of(h, self.kernel, order)
        if ptx is None:
            return ["(PTX not available)"]
        keep = re.compile(r"^\s*(ex2|lg2|rcp|div|fma|mul|add|sub|neg|setp|selp|max|min|abs|sqrt|cvt)\.")
        seen, out = set(), []
        for line in ptx.splitlines():
            if not keep.match(line):
                continue
            if re.match(r"^\s*(add|mul|setp|selp|min|max|sub|cvt)\.(s|u|b)(32|64)", line):
                continue  # index arithmetic
            norm = re.sub(r"%[a-z]+\d+", "%r", line.strip().rstrip(";"))
            if norm not in seen:
                seen.add(norm)
                out.append(norm)
        return out


def patterns(start, n, stride, device):
    p = torch.arange(n, dtype=torch.int64, device=device) * stride + start
    p = torch.where(p >= 2 ** 31, p - 2 ** 32, p).to(torch.int32)
    return p.view(torch.float32)


def exact_and_errors(name, x, y):
    x64 = x.double()
    ex = ref64(name, x64)
    err = (y.double() - ex).abs()
    err = torch.nan_to_num(err, nan=INF, posinf=INF)
    e = ((ex.view(torch.int64) >> 52) & 0x7FF) - 1023
    ulp = ((e.clamp(min=-126) - 23 + 1023) << 52).view(torch.float64)
    return x64, ex, err, ulp


def pad_blocks(t, fill):
    n = t.numel()
    nb = -(-n // BS)
    if nb * BS != n:
        t = torch.cat([t, t.new_full((nb * BS - n,), fill)])
    return t.view(nb, BS)


class Runner:
    def __init__(self, ev, device, stride, batch):
        self.ev, self.device, self.stride, self.batch = ev, device, stride, batch
        self.elapsed = 0.0

    def count(self, s):
        return (s[1] - s[0]) // self.stride + 1

    def batches(self, s):
        n = self.count(s)
        for i0 in range(0, n, self.batch):
            yield s[0] + i0 * self.stride, min(self.batch, n - i0)

    def block_x(self, s):
        """Per block of segment s: the smallest and largest |x| and the signed x of its first
        pattern (magnitudes grow with the pattern inside a segment)."""
        n = self.count(s)
        nb = -(-n // BS)
        first = np.arange(nb, dtype=np.uint64) * (BS * self.stride) + s[0]
        last = np.minimum(first + (BS - 1) * self.stride, s[0] + (n - 1) * self.stride)
        x = first.astype(np.uint32).view(np.float32).astype(np.float64)
        xl = last.astype(np.uint32).view(np.float32).astype(np.float64)
        return np.abs(x), np.abs(xl), x

    def x_at(self, s, index):
        return p2f(s[0] + index * self.stride)

    def run(self, name, segs, fn):
        """fn(x, x64, y, ex, err, ulp, seg, offset_index) per batch; results per segment."""
        fid = FUNCS[name][0]
        out = []
        t0 = time.time()
        for s in segs:
            res = []
            for start, n in self.batches(s):
                x = patterns(start, n, self.stride, self.device)
                y = self.ev(fid, x)
                x64, ex, err, ulp = exact_and_errors(name, x, y)
                res.append(fn(x, x64, y, ex, err, ulp, (start - s[0]) // self.stride))
                del x, y, x64, ex, err, ulp
            out.append(res)
        if self.device != "cpu":
            torch.cuda.synchronize()
        self.elapsed += time.time() - t0
        return out


def pass1(runner, name, segs):
    def fn(x, x64, y, ex, err, ulp, off):
        eu = err / ulp
        v, i = pad_blocks(eu, 0.0).max(dim=1)
        r = {
            "ulp_max": v.cpu().numpy(), "ulp_arg": i.cpu().numpy(),
            "abs_max": pad_blocks(err, 0.0).amax(dim=1).cpu().numpy(),
            "exmin": pad_blocks(ex.abs(), INF).amin(dim=1).cpu().numpy(),
            "correct": pad_blocks((y == ex.float()).to(torch.int32), 0).sum(dim=1).cpu().numpy(),
            "n": x.numel(),
            "n_zero": int((y == 0).sum()),
            "n_sub": int(((y != 0) & (y.abs() < TINY)).sum()),
            "n_nonfinite": int((~torch.isfinite(y)).sum()),
            "n_exact_sub": int(((ex != 0) & (ex.abs() < TINY)).sum()),
        }
        if name == "exp":
            y2 = runner.ev(EXP_MIN_FUNC, x)
            r["exp_min_mismatch"] = int((y2.view(torch.int32) != y.view(torch.int32)).sum())
        return r

    res = runner.run(name, segs, fn)
    merged = []
    for s, rs in zip(segs, res):
        m = {k: np.concatenate([r[k] for r in rs]) for k in ("ulp_max", "ulp_arg", "abs_max", "exmin", "correct")}
        for k in ("n", "n_zero", "n_sub", "n_nonfinite", "n_exact_sub", "exp_min_mismatch"):
            if k in rs[0]:
                m[k] = sum(r[k] for r in rs)
        m["lo"], m["hi"], m["x0"] = runner.block_x(s)
        m["seg"] = s
        merged.append(m)
    return merged


def pass2(runner, name, segs, a):
    def fn(x, x64, y, ex, err, ulp, off):
        return pad_blocks(torch.clamp(err - a, min=0.0) / ulp, 0.0).amax(dim=1).cpu().numpy()
    return [np.concatenate(rs) for rs in runner.run(name, segs, fn)]


def pass_max(runner, name, segs, value):
    """Max and argmax (as x) of value(x64, err, ulp) over every argument, per segment."""
    def fn(x, x64, y, ex, err, ulp, off):
        v = value(x64, err, ulp)
        i = int(torch.argmax(v))
        return float(v[i]), off + i, float(y[i]), float(ex[i])
    out = []
    for s, rs in zip(segs, runner.run(name, segs, fn)):
        best = max(rs, key=lambda r: r[0])
        out.append({"max": best[0], "x": runner.x_at(s, best[1]), "computed": best[2], "exact": best[3]})
    return out


def upper_hull(lo, m):
    """Points of the upper convex hull of (lo, m) that matter for max(m - k*lo), k >= 0."""
    order = np.lexsort((-m, lo))
    lo, m = lo[order], m[order]
    run = np.maximum.accumulate(m)
    keep = np.r_[True, m[1:] > run[:-1]]
    lo, m = lo[keep], m[keep]
    hull = []
    for p in zip(lo.tolist(), m.tolist()):
        while len(hull) >= 2:
            (x1, y1), (x2, y2) = hull[-2], hull[-1]
            if (x2 - x1) * (p[1] - y1) - (y2 - y1) * (p[0] - x1) >= 0:
                hull.pop()
            else:
                break
        hull.append(p)
    return np.array(hull)


BIN_EDGES = [0.0, 1.0] + [2.0 ** j for j in range(1, 8)]


def fit_line(lo, hi, neg, m, kmax=8.0, kstep=1000):
    """(k, c, G, F): the line c + k*|x| above every block's (smallest |x|, max residual)
    point, k on a 0.001 grid, chosen to minimise G = the geometric mean, over the |x| bins
    [0,1), [1,2), [2,4), ... of each sign (bins of at least 4096 arguments), of the ratio of
    the budget at the bin's largest |x| to the bin's largest residual (floored at 1 ULP).
    F is the largest such ratio at the chosen k."""
    m = np.where(np.isfinite(m), m, 1e300)  # a non-finite result: the check below reports it
    h = upper_hull(lo, m)
    ks = np.arange(0, int(kmax * kstep) + 1) / kstep
    c = np.maximum((h[None, :, 1] - ks[:, None] * h[None, :, 0]).max(axis=1), 0.0)
    logs, F = [], np.zeros_like(ks)
    for sign in (True, False):
        for b0, b1 in zip(BIN_EDGES[:-1], BIN_EDGES[1:]):
            sel = (neg == sign) & (lo >= b0) & (lo < b1)
            if sel.sum() >= 1 and (sel.sum() > 1 or hi[sel].max() > lo[sel].min()):
                r = (c + ks * hi[sel].max()) / max(float(m[sel].max()), 1.0)
                logs.append(np.log(np.maximum(r, 1e-300)))
                F = np.maximum(F, r)
    G = np.exp(np.mean(logs, axis=0))
    best = int(np.argmin(G))
    return float(ks[best]), float(c[best]), float(G[best]), float(F[best])


def ceil3(v):
    c = math.ceil(v * 1000.0) / 1000.0
    return c + 0.001 if c < v else c


def bins_table(p1):
    """Rows per sign and |x| bin [0,1), [1,2), [2,4), ... from the pass-1 blocks."""
    rows = []
    for m in p1:
        sign = -1 if m["seg"][0] & 0x80000000 else 1
        lo = m["lo"]
        edges = [0.0, 1.0] + [2.0 ** j for j in range(1, 8)]
        for b0, b1 in zip(edges[:-1], edges[1:]):
            sel = (lo >= b0) & (lo < b1)
            if not sel.any():
                continue
            idx = np.nonzero(sel)[0]
            w = idx[np.argmax(m["ulp_max"][idx])]
            cnt = int(sel.sum()) * BS
            if idx[-1] == len(lo) - 1:  # the segment's last, possibly partial block
                cnt -= len(lo) * BS - m["n"]
            rows.append({
                "sign": sign, "bin": (b0, b1), "count": cnt,
                "max_ulp": float(m["ulp_max"][idx].max()),
                "max_abs": float(m["abs_max"][idx].max()),
                "correct": int(m["correct"][idx].sum()),
                "worst_block": int(w),
                "worst_index": int(w) * BS + int(m["ulp_arg"][w]),
            })
    return rows


def fmt(v, d=3):
    if v == INF:
        return "inf"
    if v != 0 and (abs(v) < 1e-3 or abs(v) >= 1e6):
        return f"{v:.{d}e}"
    return f"{v:.{d}f}"


def measure(runner, name, log):
    fid, expr, fit_segs, tail_segs, (lo_r, hi_r), rule = FUNCS[name]
    n_fit = sum(runner.count(s) for s in fit_segs)
    n_tail = sum(runner.count(s) for s in tail_segs)
    log(f"== {name}: {expr}; fit range [{lo_r}, {hi_r}] ({n_fit} args), tails ({n_tail} args)")

    p1 = pass1(runner, name, fit_segs)
    t1 = pass1(runner, name, tail_segs)
    log(f"   pass 1 done ({runner.elapsed:.1f} s so far)")
    lo = np.concatenate([m["lo"] for m in p1])
    hi = np.concatenate([m["hi"] for m in p1])
    x0 = np.concatenate([m["x0"] for m in p1])
    neg = np.concatenate([np.full(len(m["lo"]), bool(m["seg"][0] & 0x80000000)) for m in p1])
    um = np.concatenate([m["ulp_max"] for m in p1])
    am = np.concatenate([m["abs_max"] for m in p1])

    # abs_error: needed where the result underflows (region R)
    if rule == "subnormal":
        in_r = neg & (hi > -LN_TINY)
        r_text = "x < ln 2^-126 = -87.3365, where exp(x) (sigmoid(x)) is subnormal or 0 in fp32"
    else:
        in_r = x0 <= 0
        r_text = "x <= 0, where exp(x) + 1 is rounded in [1, 2] and relative accuracy is lost for x << 0"
    k0, c0, _g0, _f0 = fit_line(lo[~in_r], hi[~in_r], neg[~in_r], um[~in_r])
    if in_r.any() and (um[in_r] - k0 * lo[in_r]).max() > c0:
        a = float(am[in_r].max())
        a_why = f"the largest absolute error over {r_text} (the ULP fit of the other arguments fails there)"
    else:
        a = 0.0
        a_why = f"0: the ULP fit of the other arguments also holds for {r_text}"
    log(f"   abs_error = {a!r} ({a_why})")

    resid = um if a == 0.0 else np.concatenate(pass2(runner, name, fit_segs, a))
    k, c_cons, G, F = fit_line(lo, hi, neg, resid)
    log(f"   blocks: ulp_per_abs_arg = {k}, ulp_const <= {c_cons:.4f} (block-conservative), "
        f"looseness: geometric mean {G:.3f}, max {F:.3f}")
    exact_c = pass_max(runner, name, fit_segs,
                       lambda x64, err, ulp: torch.clamp(err - a, min=0.0) / ulp - k * x64.abs())
    c_star = max(r["max"] for r in exact_c)
    c = max(ceil3(c_star), 0.0)
    log(f"   exact max residual {c_star:.6f} -> ulp_const = {c}")

    def ratio(x64, err, ulp):
        return torch.where(err == 0, torch.zeros_like(err), err / ((c + k * x64.abs()) * ulp + a))
    r_fit = pass_max(runner, name, fit_segs, ratio)
    r_tail = pass_max(runner, name, tail_segs, ratio)
    max_fit = max(r["max"] for r in r_fit)
    max_tail = max((r["max"] for r in r_tail), default=0.0)
    log(f"   max error/budget: fit range {max_fit:.6f}, tails {max_tail:.6f} ({runner.elapsed:.1f} s)")

    arg_lo, arg_hi = lo_r, hi_r
    tails_hold = max_tail <= 1.0
    if tails_hold:
        for s in tail_segs:
            if s[0] & 0x80000000:
                arg_lo = "-inf"
            else:
                arg_hi = "inf"

    tot = lambda ms, k_: sum(m[k_] for m in ms)  # noqa: E731
    n_correct = int(sum(m["correct"].sum() for m in p1))
    worst_i = int(np.argmax(um))
    # locate the worst argument
    off = 0
    for m in p1:
        if worst_i < off + len(m["lo"]):
            b = worst_i - off
            worst_x = runner.x_at(m["seg"], b * BS + int(m["ulp_arg"][b]))
            break
        off += len(m["lo"])
    rec = {
        "function": name, "expression": expr,
        "fit_range": [lo_r, hi_r], "arguments": n_fit,
        "max_ulp": float(um.max()), "worst_x": worst_x,
        "max_abs": float(am.max()), "correctly_rounded": n_correct,
        "share_correctly_rounded": n_correct / n_fit,
        "results_zero": tot(p1, "n_zero"), "results_subnormal": tot(p1, "n_sub"),
        "results_nonfinite": tot(p1, "n_nonfinite"), "exact_subnormal": tot(p1, "n_exact_sub"),
        "bins": bins_table(p1),
        "tails": [{"segment": [p2f(s[0]), p2f(s[1])], "arguments": runner.count(s),
                   "max_ulp": float(m["ulp_max"].max()), "max_abs": float(m["abs_max"].max()),
                   "correct": int(m["correct"].sum()), "results_zero": m["n_zero"],
                   "results_subnormal": m["n_sub"], "results_nonfinite": m["n_nonfinite"],
                   "max_ratio": r["max"], "worst_ratio_x": r["x"]}
                  for s, m, r in zip(tail_segs, t1, r_tail)],
        "fit": {"abs_error": a, "abs_error_rule": a_why, "ulp_per_abs_arg": k,
                "ulp_const_block_conservative": c_cons, "ulp_const_exact": c_star,
                "ulp_const": c, "looseness_geomean": G, "looseness_max": F,
                "objective": "min over ulp_per_abs_arg of the geometric mean, over the |x| bins of each sign, of "
                             "the ratio budget at the bin's largest |x| / the bin's largest residual (floor 1 ULP)",
                "max_ratio_fit": max_fit, "worst_ratio_fit_x": max(r_fit, key=lambda r: r["max"])["x"],
                "max_ratio_tails": max_tail, "tails_hold": tails_hold,
                "worst_residual_x": max(exact_c, key=lambda r: r["max"])["x"]},
        "arg_lo": arg_lo, "arg_hi": arg_hi,
    }
    if name == "exp":
        rec["exp_min_mismatch"] = tot(p1, "exp_min_mismatch")
        rec["exp_min_arguments"] = n_fit
    return rec


def how_measured(rec, env, stride, script="scripts/triton/measure_budgets.py", toolchain=None):
    """The budget's how_measured text; `toolchain` says what compiled the expression (default:
    the Triton, torch and mamba_ssm versions of env)."""
    f = rec["fit"]
    every = "every" if stride == 1 else f"every {stride}-th"
    lo, hi = rec["fit_range"]
    if toolchain is None:
        toolchain = f"Triton {env['triton']}, torch {env['torch']}, mamba_ssm {env['mamba_ssm_commit'][:12]}"
    s = (f"{env['gpu']}, {env['date_utc']}, {script}: {every} fp32 argument in "
         f"[{lo:g}, {hi:g}] ({rec['arguments']}) through {rec['expression']}, {toolchain}: max {rec['max_ulp']:.4g} ULP "
         f"(at x = {rec['worst_x']!r}), max abs error {rec['max_abs']:.4g}, "
         f"{100 * rec['share_correctly_rounded']:.2f}% correctly rounded; "
         f"fit ({f['ulp_const']} + {f['ulp_per_abs_arg']}*|x|)*ulp_fp32(exact) + {f['abs_error']!r} "
         f"holds for all (max error/budget {f['max_ratio_fit']:.6f}; ulp_const is the exact max "
         f"residual {f['ulp_const_exact']:.6f} rounded up to 0.001)")
    if f["tails_hold"] and rec["tails"]:
        s += ("; it also holds for every finite fp32 argument beyond the range ("
              + ", ".join(f"{t['arguments']} in [{min(t['segment']):g}, {max(t['segment']):g}]" for t in rec["tails"])
              + f", max error/budget {f['max_ratio_tails']:.6f}), hence the infinite bound(s)")
    s += "; exact values in float64 (relative error < 2^-50, negligible)"
    return s


def write_outputs(out, recs, env, ptx, stride, elapsed):
    budgets = []
    for name in ("exp", "softplus", "sigmoid"):
        r = recs[name]
        f = r["fit"]
        budgets.append({"function": name, "ulp_const": f["ulp_const"],
                        "ulp_per_abs_arg": f["ulp_per_abs_arg"], "abs_error": f["abs_error"],
                        "arg_lo": r["arg_lo"], "arg_hi": r["arg_hi"],
                        "how_measured": how_measured(r, env, stride)})
    doc = {"environment": env, "stride": stride, "transcendentals": budgets,
           "silu_gate": {"ulp_const": recs["silu_gate"]["fit"]["ulp_const"],
                         "ulp_per_abs_arg": recs["silu_gate"]["fit"]["ulp_per_abs_arg"],
                         "abs_error": recs["silu_gate"]["fit"]["abs_error"],
                         "arg_lo": recs["silu_gate"]["arg_lo"], "arg_hi": recs["silu_gate"]["arg_hi"],
                         "how_measured": how_measured(recs["silu_gate"], env, stride),
                         "note": "z * tl.sigmoid(z) against the exact z*sigmoid(z): the gate factor as "
                                 "the kernels multiply it into y (not a function ssmv names)"},
           "measurements": recs, "ptx": ptx}
    with open(os.path.join(out, "budgets.json"), "w") as fh:
        json.dump(doc, fh, indent=1, default=float)
        fh.write("\n")

    L = []
    L.append("# Measured transcendental budgets of mamba_ssm's Triton kernels (fp32)\n")
    L.append(f"{common.env_line(env)}. Made by `scripts/triton/measure_budgets.py` "
             f"({'every' if stride == 1 else f'every {stride}-th'} fp32 argument; {elapsed:.0f} s of GPU work). "
             "Exact values in float64 on the GPU (relative error < 2^-50: negligible at these ULP levels). "
             "ULP = ulp_fp32(exact) = 2^(max(floor(log2|exact|), -126) - 23). Correctly rounded: "
             "computed == fp32(exact) (round to nearest even).\n")
    L.append("Budget form (docs/contracts.md): |computed − exact| ≤ (ulp_const + ulp_per_abs_arg·|x|)·ulp_fp32(exact) + abs_error. "
             "Fit: abs_error only where results underflow (the rule named per function); ulp_per_abs_arg on a "
             "0.001 grid, ulp_const from the upper hull of the per-block (4096 consecutive patterns) maxima of "
             "max(err − abs_error, 0)/ulp, choosing the slope that minimises the geometric mean over the binades "
             "of |x| (of each sign) of budget ÷ measured maximum (a maximum below 1 ULP counts as 1 ULP); ulp_const = the exact max over every argument of "
             "max(err − abs_error, 0)/ulp − ulp_per_abs_arg·|x|, rounded up to 0.001 (the only margin). "
             "Then error/budget is evaluated for every argument again (must be ≤ 1).\n")
    L.append("| function | ulp_const | ulp_per_abs_arg | abs_error | arg_lo | arg_hi | max error/budget (fit range / tails) |")
    L.append("|---|---|---|---|---|---|---|")
    for name in ("exp", "softplus", "sigmoid", "silu_gate"):
        r, f = recs[name], recs[name]["fit"]
        L.append(f"| {name} | {f['ulp_const']} | {f['ulp_per_abs_arg']} | {f['abs_error']!r} | {r['arg_lo']} | "
                 f"{r['arg_hi']} | {f['max_ratio_fit']:.6f} / {f['max_ratio_tails']:.6f} |")
    L.append("")
    for name in ("exp", "softplus", "sigmoid", "silu_gate"):
        r, f = recs[name], recs[name]["fit"]
        L.append(f"## {name}: `{r['expression']}`\n")
        L.append(f"PTX of the expression (distinct arithmetic instructions, registers elided): "
                 + "; ".join(f"`{p}`" for p in ptx.get(name, [])) + "\n")
        L.append(f"Fit range [{r['fit_range'][0]:g}, {r['fit_range'][1]:g}]: {r['arguments']} arguments, "
                 f"max {r['max_ulp']:.4g} ULP (x = {r['worst_x']!r}), max abs error {r['max_abs']:.4g}, "
                 f"{100 * r['share_correctly_rounded']:.3f}% correctly rounded; results: "
                 f"{r['results_zero']} zero, {r['results_subnormal']} subnormal, {r['results_nonfinite']} "
                 f"non-finite (exact value subnormal for {r['exact_subnormal']}).\n")
        L.append("| x | arguments | max ULP | max abs error | correctly rounded | worst x |")
        L.append("|---|---|---|---|---|---|")
        for b in r["bins"]:
            b0, b1 = b["bin"]
            xs = f"[{b0:g}, {b1:g})" if b["sign"] > 0 else f"(−{b1:g}, −{b0:g}]"
            seg_ = next(m for m in FUNCS[name][2] if (m[0] & 0x80000000 != 0) == (b["sign"] < 0))
            wx = p2f(seg_[0] + b["worst_index"] * stride)
            L.append(f"| {xs} | {b['count']} | {fmt(b['max_ulp'])} | {fmt(b['max_abs'])} | "
                     f"{100 * b['correct'] / max(b['count'], 1):.3f}% | {wx!r} |")
        L.append("")
        for t in r["tails"]:
            L.append(f"Tail [{min(t['segment']):g}, {max(t['segment']):g}] ({t['arguments']} arguments): max "
                     f"{fmt(t['max_ulp'])} ULP, max abs error {fmt(t['max_abs'])}, "
                     f"{100 * t['correct'] / t['arguments']:.3f}% correctly rounded; results {t['results_zero']} zero, "
                     f"{t['results_subnormal']} subnormal, {t['results_nonfinite']} non-finite; "
                     f"max error/budget {t['max_ratio']:.6f} (x = {t['worst_ratio_x']!r}).\n")
        L.append(f"Fit: abs_error = {f['abs_error']!r} ({f['abs_error_rule']}); ulp_per_abs_arg = "
                 f"{f['ulp_per_abs_arg']}; ulp_const = {f['ulp_const']} (exact max residual "
                 f"{f['ulp_const_exact']:.6f} at x = {f['worst_residual_x']!r}; from the blocks alone "
                 f"{f['ulp_const_block_conservative']:.4f}); budget ÷ binade maximum: geometric mean {f['looseness_geomean']:.3f}, "
                 f"largest {f['looseness_max']:.3f} ({f['objective']}). Max error/budget "
                 f"{f['max_ratio_fit']:.6f} (x = {f['worst_ratio_fit_x']!r}) on the fit range, "
                 f"{f['max_ratio_tails']:.6f} on the tails → arg range [{r['arg_lo']}, {r['arg_hi']}].\n")
        if name == "exp":
            L.append(f"`tl.exp(tl.minimum(x, 0.0))` (chunk_state, chunk_scan) gives the same bits as "
                     f"`tl.exp(x)` on {r['exp_min_arguments'] - r['exp_min_mismatch']} of "
                     f"{r['exp_min_arguments']} arguments of [-104, 0].\n")
            sub = r["results_subnormal"]
            L.append("Below 2^-126 (x < -87.34): " + (
                f"{sub} results are subnormal: no flush to zero." if sub else
                "no subnormal result: results below 2^-126 are flushed to zero.") + "\n")
    common.write_lines(os.path.join(out, "budgets.md"), L)


def main():
    ap = common.base_parser(__doc__)
    ap.add_argument("--batch-log2", type=int, default=28)
    ap.add_argument("--stride", type=int, default=1, help="every stride-th pattern (1: all)")
    ap.add_argument("--cpu", action="store_true", help="torch stand-ins, for a smoke test without a GPU")
    ap.add_argument("--functions", default="exp,softplus,sigmoid,silu_gate")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    device = "cpu" if args.cpu else "cuda"
    env = common.environment(args.mamba_src)
    print("environment:", json.dumps(env), flush=True)
    ev = Evaluator(args.cpu, args.mamba_src)
    runner = Runner(ev, device, args.stride, 1 << args.batch_log2)
    recs = {}
    for name in args.functions.split(","):
        recs[name] = measure(runner, name, lambda s: print(s, flush=True))
    ptx = {}
    for name, (fid, *_rest) in FUNCS.items():
        ptx[name] = ev.ptx_summary(fid) if not args.cpu else ["(cpu smoke test)"]
    ptx["exp_min"] = ev.ptx_summary(EXP_MIN_FUNC) if not args.cpu else ["(cpu smoke test)"]
    for name in FUNCS:
        if name not in recs:
            raise SystemExit("all four functions are needed for the outputs")
    write_outputs(args.out, recs, env, ptx, args.stride, runner.elapsed)
    print(open(os.path.join(args.out, "budgets.md")).read())


if __name__ == "__main__":
    main()
