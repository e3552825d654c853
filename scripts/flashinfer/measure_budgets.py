#!/usr/bin/env python3
"""Measured error budgets of the fp32 transcendentals of FlashInfer's CUDA selective_state_update.

FlashInfer compiles every module with -use_fast_math (flashinfer/jit/core.py, gen_jit_spec) and
writes (include/flashinfer/mamba/common.cuh, kernel_selective_state_update_stp.cuh,
kernel_selective_state_update_mtp_simple.cuh):
  * softplus   thresholded_softplus(v) = v <= 20.f ? __logf(1.f + __expf(v)) : v
  * the decay  __expf(A_value * dt_value)
  * the gate   sig_z = __fdividef(1.f, 1.f + __expf(0.f - z)); silu_z = z * sig_z
fast_math_eval.cu holds these expressions, compiled with nvcc -use_fast_math -arch=sm_90 into
libfi_fast_math.so; this script calls it through ctypes on EVERY fp32 argument of each range and
reuses the measurement and fit of scripts/triton/measure_budgets.py (passes over all arguments,
exact values in float64 on the GPU, budget form of docs/contracts.md):

    |computed - exact| <= (ulp_const + ulp_per_abs_arg*|x|) * ulp_fp32(exact) + abs_error

Why float64 is exact enough: torch's float64 exp/log1p on CUDA are within 2 double ULPs
(CUDA Math API documentation: exp, log1p 1 ULP; the composed softplus/sigmoid add at most 3
more roundings of 2^-53), so the reference errs by < 2^-50 relative, i.e. < 2^-26 of an fp32
ULP of the result: at most 1.5e-8 ULP against the 2-ULP-and-above levels measured, absorbed by
the 0.001 rounding up of ulp_const. Flushed results (0 where the exact value is below 2^-126)
and the range where __fdividef returns 0 (denominator above 2^126, z < -87.34) are measured
like every other argument: they land in abs_error.

Outputs (in --out): budgets.json (contract-shaped budgets + statistics), budgets.md.
Device: python3 scripts/flashinfer/measure_budgets.py --lib .dev-flashinfer/libfi_fast_math.so --out $OUT
Smoke test without a GPU: python3 scripts/flashinfer/measure_budgets.py --cpu --stride 16384 --out "$(mktemp -d)"
"""

import argparse
import ctypes
import datetime
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "triton"))
import measure_budgets as mb  # noqa: E402  (scripts/triton/measure_budgets.py: passes and fit)

# name -> (fid of fast_math_eval.cu, expression, then the Triton script's fit segments, tail
# segments, fit range and abs_error rule: the same arguments are measured)
EXPRESSIONS = {
    "exp": (0, "__expf(x) (nvcc -use_fast_math: ex2.approx.ftz(x*log2e))"),
    "softplus": (2, "x <= 20.f ? __logf(1.f + __expf(x)) : x (thresholded_softplus, common.cuh)"),
    "sigmoid": (3, "__fdividef(1.f, 1.f + __expf(0.f - x)) (sig_z)"),
    "silu_gate": (4, "x * __fdividef(1.f, 1.f + __expf(0.f - x)) (silu_z)"),
}
mb.FUNCS = {name: (fid, expr) + mb.FUNCS[name][2:] for name, (fid, expr) in EXPRESSIONS.items()}
mb.EXP_MIN_FUNC = 1


class Evaluator:
    """The fast-math expressions: libfi_fast_math.so on the GPU, torch stand-ins with --cpu."""

    def __init__(self, cpu, lib):
        # --cpu: the Triton script's torch stand-ins (same function ids)
        self.stand_in = mb.Evaluator(True, None) if cpu else None
        if not cpu:
            self.lib = ctypes.CDLL(lib)
            self.lib.fi_eval.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]

    def __call__(self, fid, x):
        if self.stand_in is not None:
            return self.stand_in(fid, x)
        x = x.contiguous()
        y = torch.empty_like(x)
        rc = self.lib.fi_eval(fid, x.data_ptr(), y.data_ptr(), x.numel())
        if rc != 0:
            raise SystemExit(f"fi_eval({fid}) failed: {rc}")
        return y


def environment(lib):
    env = {"date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "torch": torch.__version__,
           "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none (CPU)",
           "cuda": str(torch.version.cuda), "lib": os.path.basename(lib) if lib else "none"}
    return env


def how_measured(rec, env, stride):
    return mb.how_measured(rec, env, stride, "scripts/flashinfer/measure_budgets.py",
                           "compiled by nvcc -use_fast_math -arch=sm_90 (fast_math_eval.cu)")


def write_outputs(out, recs, env, stride, elapsed):
    budgets = []
    for name in ("exp", "softplus", "sigmoid"):
        r, f = recs[name], recs[name]["fit"]
        budgets.append({"function": name, "ulp_const": f["ulp_const"], "ulp_per_abs_arg": f["ulp_per_abs_arg"],
                        "abs_error": f["abs_error"], "arg_lo": r["arg_lo"], "arg_hi": r["arg_hi"],
                        "how_measured": how_measured(r, env, stride)})
    doc = {"environment": env, "stride": stride, "transcendentals": budgets,
           "silu_gate": {k: recs["silu_gate"]["fit"][k] for k in ("ulp_const", "ulp_per_abs_arg", "abs_error")},
           "measurements": recs}
    with open(os.path.join(out, "budgets.json"), "w") as fh:
        json.dump(doc, fh, indent=1, default=float)
        fh.write("\n")
    L = [f"# Measured transcendental budgets of FlashInfer's selective_state_update (fp32, -use_fast_math)\n",
         f"{env['gpu']}, {env['date_utc']}, torch {env['torch']} (CUDA {env['cuda']}); "
         f"`scripts/flashinfer/measure_budgets.py` ({'every' if stride == 1 else f'every {stride}-th'} fp32 "
         f"argument, {elapsed:.0f} s of GPU work), the fit of scripts/triton/measure_budgets.py.\n",
         "| function | expression | ulp_const | ulp_per_abs_arg | abs_error | arg_lo | arg_hi | max ULP (x) | "
         "max abs error | correctly rounded | max error/budget (fit / tails) |",
         "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name in ("exp", "softplus", "sigmoid", "silu_gate"):
        r, f = recs[name], recs[name]["fit"]
        L.append(f"| {name} | `{r['expression']}` | {f['ulp_const']} | {f['ulp_per_abs_arg']} | {f['abs_error']!r} | "
                 f"{r['arg_lo']} | {r['arg_hi']} | {r['max_ulp']:.4g} ({r['worst_x']!r}) | {r['max_abs']:.4g} | "
                 f"{100 * r['share_correctly_rounded']:.2f}% | {f['max_ratio_fit']:.6f} / {f['max_ratio_tails']:.6f} |")
    L.append("")
    for name in ("exp", "softplus", "sigmoid", "silu_gate"):
        r = recs[name]
        L.append(f"## {name}\n")
        L.append(f"Results: {r['results_zero']} zero, {r['results_subnormal']} subnormal, {r['results_nonfinite']} "
                 f"non-finite (exact value subnormal for {r['exact_subnormal']}).\n")
        L.append("| x | arguments | max ULP | max abs error | correctly rounded |")
        L.append("|---|---|---|---|---|")
        for b in r["bins"]:
            b0, b1 = b["bin"]
            xs = f"[{b0:g}, {b1:g})" if b["sign"] > 0 else f"(−{b1:g}, −{b0:g}]"
            L.append(f"| {xs} | {b['count']} | {mb.fmt(b['max_ulp'])} | {mb.fmt(b['max_abs'])} | "
                     f"{100 * b['correct'] / max(b['count'], 1):.3f}% |")
        L.append("")
        L.append(f"Fit: {json.dumps(r['fit'], default=float)}\n")
        if name == "exp":
            L.append(f"`__expf(fminf(x, 0))` equals `__expf(x)` bit for bit on "
                     f"{r['exp_min_arguments'] - r['exp_min_mismatch']} of {r['exp_min_arguments']} arguments.\n")
    with open(os.path.join(out, "budgets.md"), "w") as fh:
        fh.write("\n".join(L) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--lib", default=os.path.join(HERE, "libfi_fast_math.so"))
    ap.add_argument("--batch-log2", type=int, default=28)
    ap.add_argument("--stride", type=int, default=1, help="every stride-th pattern (1: all)")
    ap.add_argument("--cpu", action="store_true", help="torch stand-ins, for a smoke test without a GPU")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    env = environment(None if args.cpu else args.lib)
    print("environment:", json.dumps(env), flush=True)
    runner = mb.Runner(Evaluator(args.cpu, args.lib), "cpu" if args.cpu else "cuda", args.stride, 1 << args.batch_log2)
    recs = {name: mb.measure(runner, name, lambda s: print(s, flush=True))
            for name in ("exp", "softplus", "sigmoid", "silu_gate")}
    write_outputs(args.out, recs, env, args.stride, runner.elapsed)
    print(open(os.path.join(args.out, "budgets.md")).read())


if __name__ == "__main__":
    main()
