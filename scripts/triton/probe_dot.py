#!/usr/bin/env python3
"""How Triton's tl.dot accumulates (bf16/fp16 inputs, fp32 accumulator) on this GPU.

ssmv bounds tensor-core sums by a rule measured for mma.sync m16n8k16 (one 16-wide k-step):
the products a_k*b_k are exact; each term gets a reference exponent (product:
e(a)+e(b)+1, accumulator c: e(c)+1, e(v) = floor(log2|v|)), E = the max over the non-zero
terms; every term is truncated toward zero to a multiple of 2^(E-26); the truncated terms
are summed exactly and the sum is rounded toward zero to fp32; steps chained in
increasing k.

A Triton kernel computes [64, 64] outputs with K in {16, 32, 64, 256} (acc = tl.zeros fp32;
acc += tl.dot(a, b) over BLOCK_K = 16/32/64 chunks) from random normal inputs with spread
exponents (normal * 2^randint(-8, 8)), bf16 and fp16, with num_warps 4 (sm_90: wgmma) and
2 (too few warps for a warpgroup: mma.sync, what mamba_ssm's deterministic-mode configs
use) and 8. Every output is compared bit for bit with an exact emulation of the rule
(torch float64/int arithmetic, exact for these magnitudes), and with the variants: step
width 8/16/32, alignment 2^(E-25)/2^(E-26)/2^(E-27), final rounding toward zero or to
nearest, and "unfused" (each BLOCK_K dot chained from zero, then acc + dot rounded to
nearest in fp32).

Output: --out/dot_model.md (and dot_model.json).

Run on the device machine (the exact command used, see scripts/triton/README.md):
  run(command="export PYTHONUNBUFFERED=1; python3 scripts/triton/probe_dot.py --out $OUT
      2>&1 | tee $OUT/dot_log.txt")
Local smoke test of the emulation (no GPU: the "kernel" is the primary model itself):
  python3 scripts/triton/probe_dot.py --cpu --trials 2 --out "$(mktemp -d)"
"""

import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

M = N = 64
BIG = 10000


def exponent(v):
    """floor(log2|v|) of float64 values (normal in float64); -BIG for zero."""
    e = ((v.view(torch.int64) >> 52) & 0x7FF) - 1023
    return torch.where(v == 0, torch.full_like(e, -BIG), e)


def pow2(e):
    """2^e as float64 for integer tensors e in [-1022, 1023]."""
    return ((e.clamp(-1022, 1023) + 1023) << 52).view(torch.float64)


def mma_step(acc, a, b, width_align, rnd):
    """One k-step: acc [T,M,N] (fp32 values in float64), a [T,M,w], b [T,w,N] (exact)."""
    s = width_align
    p = a[:, :, None, :] * b.transpose(1, 2)[:, None, :, :]           # [T,M,N,w], exact
    ea = exponent(a)[:, :, None, :]
    eb = exponent(b).transpose(1, 2)[:, None, :, :]
    ep = torch.where(p == 0, torch.full_like(ea + eb, -BIG), ea + eb + 1)
    ec = torch.where(acc == 0, torch.full_like(exponent(acc), -BIG), exponent(acc) + 1)
    E = torch.maximum(ep.amax(dim=-1), ec)
    E = torch.where(E <= -BIG // 2, torch.zeros_like(E), E)            # all terms zero
    unit = pow2(E - s)
    tp = torch.trunc(p / unit[..., None])
    tc = torch.trunc(acc / unit)
    S = tp.sum(dim=-1) + tc                                            # exact integers < 2^40
    nb = exponent(S) + 1
    shift = (nb - 24).clamp(min=0)
    q = S / pow2(shift)
    q = torch.trunc(q) if rnd == "rz" else torch.round(q)              # round: half to even
    return q * pow2(shift) * unit


def emulate(A, B, width, align, rnd, block_k=None):
    """A [T,M,K], B [T,K,N] float64. Fused: one chain over K. Unfused (block_k): each
    block_k dot chained from zero, then acc + dot rounded to nearest fp32."""
    T, _, K = A.shape
    acc = torch.zeros(T, A.shape[1], B.shape[2], dtype=torch.float64, device=A.device)
    if block_k is None:
        for k0 in range(0, K, width):
            acc = mma_step(acc, A[:, :, k0:k0 + width], B[:, k0:k0 + width, :], align, rnd)
        return acc.float()
    out = acc.float()
    for b0 in range(0, K, block_k):
        d = torch.zeros_like(acc)
        for k0 in range(b0, b0 + block_k, width):
            d = mma_step(d, A[:, :, k0:k0 + width], B[:, k0:k0 + width, :], align, rnd)
        out = out + d.float()
    return out


MODELS = [("w16_a26_rz", 16, 26, "rz", False)]
for _w in (8, 16, 32):
    for _a in (25, 26, 27):
        for _r in ("rz", "rn"):
            if (_w, _a, _r) != (16, 26, "rz"):
                MODELS.append((f"w{_w}_a{_a}_{_r}", _w, _a, _r, False))
MODELS.append(("unfused_w16_a26_rz", 16, 26, "rz", True))


def make_inputs(T, K, dtype, gen, device):
    def one(shape):
        v = torch.randn(shape, generator=gen, dtype=torch.float64)
        e = torch.randint(-8, 9, shape, generator=gen)
        return (v * torch.pow(2.0, e.double())).to(dtype)
    A = one((T, M, K)).to(device)
    B = one((T, K, N)).to(device)
    return A, B


class Kernel:
    def __init__(self, cpu):
        self.cpu = cpu
        self.ptx = {}
        if cpu:
            return
        import triton
        import triton.language as tl

        @triton.jit
        def _dot_kernel(a_ptr, b_ptr, c_ptr, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                        BLOCK_K: tl.constexpr):
            t = tl.program_id(0)
            offs_m = tl.arange(0, BLOCK_M)
            offs_n = tl.arange(0, BLOCK_N)
            offs_k = tl.arange(0, BLOCK_K)
            a_ptrs = a_ptr + t * BLOCK_M * K + offs_m[:, None] * K + offs_k[None, :]
            b_ptrs = b_ptr + t * K * BLOCK_N + offs_k[:, None] * BLOCK_N + offs_n[None, :]
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for k in range(0, K, BLOCK_K):
                a = tl.load(a_ptrs)
                b = tl.load(b_ptrs)
                acc += tl.dot(a, b)
                a_ptrs += BLOCK_K
                b_ptrs += BLOCK_K * BLOCK_N
            tl.store(c_ptr + t * BLOCK_M * BLOCK_N + offs_m[:, None] * BLOCK_N + offs_n[None, :], acc)

        self.kernel = _dot_kernel

    def __call__(self, A, B, block_k, num_warps):
        if self.cpu:
            return emulate(A.double(), B.double(), 16, 26, "rz")
        T, _, K = A.shape
        C = torch.empty(T, M, N, dtype=torch.float32, device=A.device)
        h = self.kernel[(T,)](A.contiguous(), B.contiguous(), C, K, BLOCK_M=M, BLOCK_N=N,
                              BLOCK_K=block_k, num_warps=num_warps)
        key = (str(A.dtype), block_k, num_warps)
        if key not in self.ptx:
            import re
            ptx = common.ptx_of(h, self.kernel, len(self.ptx))
            self.ptx[key] = (sorted(set(re.findall(r"(wgmma\.mma_async[.\w]*|mma\.sync[.\w]*)", ptx)))
                             if ptx else ["(PTX not available)"])
        return C


def main():
    ap = common.base_parser(__doc__, mamba_src=False)
    ap.add_argument("--trials", type=int, default=16, help="[64, 64] outputs per configuration")
    ap.add_argument("--seed", type=int, default=20261201)
    ap.add_argument("--cpu", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    device = "cpu" if args.cpu else "cuda"
    env = common.environment()
    print("environment:", json.dumps(env), flush=True)
    kern = Kernel(args.cpu)
    gen = torch.Generator().manual_seed(args.seed)
    rows = []
    for dtype in (torch.bfloat16, torch.float16):
        for num_warps in (4, 2, 8):
            for K in (16, 32, 64, 256):
                for bk in (16, 32, 64):
                    if bk > K:
                        continue
                    A, B = make_inputs(args.trials, K, dtype, gen, device)
                    C = kern(A, B, bk, num_warps)
                    A64, B64 = A.double(), B.double()
                    got = C.view(torch.int32)
                    shares = {}
                    examples = []
                    for name, w, al, rnd, unfused in MODELS:
                        if w > K or (unfused and bk % w):
                            continue
                        em = emulate(A64, B64, w, al, rnd, block_k=bk if unfused else None)
                        eq = got == em.view(torch.int32)
                        shares[name] = float(eq.double().mean())
                        if name == MODELS[0][0] and not bool(eq.all()):
                            idx = torch.nonzero(~eq)[:3].tolist()
                            for t, i, j in idx:
                                examples.append({"trial": t, "i": i, "j": j,
                                                 "triton": float(C[t, i, j]), "model": float(em[t, i, j]),
                                                 "ulps": int(got[t, i, j]) - int(em.view(torch.int32)[t, i, j])})
                    best = max(shares.items(), key=lambda kv: kv[1])
                    row = {"dtype": str(dtype).replace("torch.", ""), "num_warps": num_warps, "K": K,
                           "BLOCK_K": bk, "outputs": C.numel(), "primary": shares[MODELS[0][0]],
                           "best": best[0], "best_share": best[1], "shares": shares,
                           "mma": kern.ptx.get((str(dtype), bk, num_warps), ["(cpu)"]),
                           "mismatch_examples": examples}
                    rows.append(row)
                    print(f"{row['dtype']} warps={num_warps} K={K} BK={bk}: primary {row['primary']:.6f}, "
                          f"best {best[0]} {best[1]:.6f}, mma {row['mma']}", flush=True)
    total = sum(r["outputs"] for r in rows)
    matched = sum(r["primary"] * r["outputs"] for r in rows)
    with open(os.path.join(args.out, "dot_model.json"), "w") as fh:
        json.dump({"environment": env, "rows": rows, "models": [m[0] for m in MODELS]}, fh, indent=1)
    L = ["# tl.dot accumulation model (bf16/fp16 inputs, fp32 accumulator)\n",
         f"{common.env_line(env)}. Made by `scripts/triton/probe_dot.py` (seed {args.seed}, "
         f"{args.trials} × [64, 64] outputs per configuration, {total} outputs in all).\n",
         "Kernel: `acc = tl.zeros([64, 64], fp32); for k in range(0, K, BLOCK_K): acc += tl.dot(a, b)`, "
         "inputs normal·2^randint(−8, 8) rounded to the input type. Primary model (`w16_a26_rz`, the "
         "rule ssmv uses): per 16-wide k-step, exact products with reference exponents e(a)+e(b)+1, "
         "accumulator e(c)+1, E = max over non-zero terms, each term truncated toward zero to a multiple "
         "of 2^(E−26), exact sum, rounded toward zero to fp32; steps chained in increasing k. Variants "
         "`wW_aS_R`: step width W, alignment 2^(E−S), final rounding R (rz/rn); `unfused_…`: every "
         "BLOCK_K dot chained from zero and added to acc in fp32 (round to nearest).\n",
         f"**Primary model: {matched:.0f} of {total} outputs bit-identical "
         f"({100 * matched / total:.4f}%).**\n",
         "| input | num_warps | instruction | K | BLOCK_K | outputs | primary match | best model (share) |",
         "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        L.append(f"| {r['dtype']} | {r['num_warps']} | {', '.join(f'`{m}`' for m in r['mma'])} | {r['K']} | "
                 f"{r['BLOCK_K']} | {r['outputs']} | {100 * r['primary']:.4f}% | "
                 f"{r['best']} ({100 * r['best_share']:.4f}%) |")
    L.append("\nMatch share of every model, over all configurations of an input type and num_warps "
             "(models with a step wider than K skipped for that K):\n")
    groups = sorted({(r["dtype"], r["num_warps"]) for r in rows})
    L.append("| model | " + " | ".join(f"{d} w{nw}" for d, nw in groups) + " |")
    L.append("|---|" + "---|" * len(groups))
    for name, *_ in MODELS:
        cells = []
        for d, nw in groups:
            rs = [r for r in rows if r["dtype"] == d and r["num_warps"] == nw and name in r["shares"]]
            n = sum(r["outputs"] for r in rs)
            cells.append(f"{100 * sum(r['shares'][name] * r['outputs'] for r in rs) / n:.4f}%" if n else "—")
        L.append(f"| {name} | " + " | ".join(cells) + " |")
    ex = [(r, e) for r in rows for e in r["mismatch_examples"]][:12]
    if ex:
        L.append("\nPrimary-model mismatches (first few): " + "; ".join(
            f"{r['dtype']} w{r['num_warps']} K={r['K']} BK={r['BLOCK_K']} [{e['trial']},{e['i']},{e['j']}]: "
            f"triton {e['triton']!r}, model {e['model']!r} ({e['ulps']:+d} ULP)" for r, e in ex))
    with open(os.path.join(args.out, "dot_model.md"), "w") as fh:
        fh.write("\n".join(L) + "\n")
    print("\n".join(L))


if __name__ == "__main__":
    main()
