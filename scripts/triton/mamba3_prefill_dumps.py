#!/usr/bin/env python3
"""Dumps of mamba_ssm's Mamba-3 SISO prefill, for `ssmv check` (kernel mamba3_prefill).

Runs mamba_ssm's `mamba3_siso_combined` (mamba_ssm/ops/triton/mamba3/mamba3_siso_combined.py:
angle_dt_fwd_kernel, then the chunked mamba3_siso_fwd_kernel) with return_final_states=True on
small problems and saves one .npz per case with ssmv's Mamba-3 tensor names and conventions
(docs/tensor-files.md "Mamba-3 dumps", as scripts/triton/mamba3_step_dumps.py writes them): the
tokens packed by sequence with cu_seqlens [S + 1] (int64), bf16 as int16 bit patterns, plus
__metadata__ with ssmv.kernel = mamba3_prefill, the formats and ssmv.chunk_size (the
chunk_size passed to mamba3_siso_combined). Three call layouts: one sequence (batch 1, no
cu_seqlens), a batch of equal-length sequences, and varlen (batch 1 with cu_seqlens; the kernels
start a sequence's chunks at its first token).

What is stored is what the kernels used and returned:
  * inputs: mamba3_siso_combined casts Q, K, V, Trap, Angles and Z to bf16; the dump holds those
    bf16 values (angles in the bf16 angles format: drawn fp32 as upstream's test draws them, then
    rounded to nearest even as the wrapper's .to(bfloat16) rounds; the other four drawn in bf16,
    so the cast changes nothing). DT, ADT, Q_bias, K_bias, D are fp32 as given.
  * y = Out (bf16); final_states = the fp32 SSM state; final_B_prev = the fp32 K state (the
    kernel's Final_K_State row of each sequence's last token: after bias and rotation);
    final_x_prev = V of the last token (bf16, stored as its fp32 value, the state format).
  * final_angle_state: mamba3_siso_combined returns it in bf16 (angle_dt_fwd allocates it with
    the dtype of the bf16-cast Angles; docs/mamba3-semantics.md §7 question 1). docs/tensor-
    files.md wants fp32 for the angle state, so the dump holds the fp32 values of those bf16
    numbers (exact); the metadata key mamba_ssm.final_angle_state_dtype records the kernel's
    dtype.
Non-ssmv metadata keys (ssmv skips them): mamba_ssm.final_angle_state_dtype, mamba_ssm.layout,
mamba_ssm.<kernel>.config (the autotuner's choice for this call: the dumps' bits can depend on
it) and mamba_ssm.<kernel>.compiled (warps, stages, registers of the launched kernel).

Inputs are drawn as mamba3_step_dumps.py draws them: Q, K, V, Z, Trap bf16 N(0, 1); Angles fp32
N(0, 1), then bf16; DT log-uniform in [1e-3, 0.1]; ADT = -a·DT, a uniform in [1, 16]; Q_bias,
K_bias, D fp32 N(0, 1). An initial four-part state, when a case has one: angle uniform in [0, 2π)
(fp32), SSM and K state fp32 N(0, 1)·0.5, V state bf16 N(0, 1). Without one, Input_States=None
(the layer's prefill) and the dump has no initial_* tensors. Upstream's create_mamba3_siso_inputs
(tests/ops/triton/test_mamba3_siso.py, read at commit 041c087e) draws DT, ADT and Angles the same
way but RMS-normalises Q and K over the head dim, draws Trap uniform in [0, 1), Q_bias and K_bias
in the input dtype, D = 1, and the initial states N(0, 1) in fp32 (the angle unreduced).

The hand-off case writes two dumps from one token stream: `<name>_prefill` (mamba3_prefill over
the first T0 tokens, from zero) and `<name>_step` (kernel mamba3_step: mamba3_siso_step over the
next K tokens, one launch per token as mamba3_step_dumps.py runs it, starting from the prefill's
returned four-part state: the bf16 angle state converted to fp32 as the layer's fp32 angle cache
holds it, the fp32 SSM state, the fp32 K state, the bf16 V state). The step dump's initial_*
tensors are exactly the prefill dump's final_* tensors, so `ssmv check` judges both halves. (The
layer's cache would also round the K state to the model dtype, Mamba3.allocate_inference_cache;
here it is passed in fp32, as the kernel returned it.)

Device run (torch 2.11, Triton 3.6, mamba_ssm's source in .triton_src: scripts/triton/README.md):
  run(command="python3 scripts/triton/mamba3_prefill_dumps.py --out $OUT/prefill", carry=[".triton_src"])
The first call of each new autotune key compiles and times every config of mamba3_siso_fwd_kernel
(27: stages 1-3 x warps 2/4/8 x maxnreg none/128/256) and of angle_dt_fwd_kernel (9), one after
the other; the hand-off also tunes mamba3_siso_step_kernel (9). The fixture cases have 4 keys of
the prefill kernel (the batched case shares the first case's), so expect roughly 1-2 minutes a
key, 4-8 minutes in all on a fresh machine (not measured yet; each case prints its time; split
with --cases if a call's 10 minutes are short). Triton's disk cache (~/.triton/cache) keeps the
compiled kernels for later processes of the same call: a second run re-times but does not
recompile. --large adds the production-shaped case (1 x 2048 tokens, H 32, P 64, N 128, R 32,
chunk 64, D and z; a fifth key): 1-2 minutes more, a 31 MB dump (over the device tool's 16 MiB
per returned file: judge it on the device, or leave it there); --only-large runs that case alone.
--ptx DIR also writes the PTX of the two prefill kernels each case launched, as
<case>.<kernel>.ptx (inspect_mamba3_prefill.py --analyze summarises them).
Local smoke test of everything but the kernels (float32 torch stand-ins, no GPU, no Triton):
  /usr/bin/python3 scripts/triton/mamba3_prefill_dumps.py --fake --out "$(mktemp -d)"
"""

import json
import math
import os
import sys
import time
import traceback

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import mamba3_step_dumps  # noqa: E402  (its float32 stand-in of the step kernel)

# name: sequence lengths, layout (single: batch 1; batched: batch S of equal lengths; varlen:
# batch 1 with cu_seqlens), heads H, B/C heads G, head dim P, state dim N, rotary angles R (even,
# <= N/2, as mamba3_siso_fwd asserts; P and N powers of two for its TMA blocks), chunk size, D, z,
# an initial four-part state; `decode`: a hand-off's decode tokens after the prefill.
CASES = {
    # hand-off: prefill of 100 tokens from zero (as the layer prefills), then 8 decode steps;
    # the production head dims (P 64, N 128, R 32)
    "mamba3_handoff_T100_K8_H2_P64_N128_R32_D_z": dict(
        lengths=[100], layout="single", H=2, G=1, P=64, N=128, R=32, chunk=64, D=True, z=True, initial=False,
        decode=8, seed=25),
    # 2 chunks of 64, the last partial (final K state from row 35 of the last chunk)
    "mamba3_prefill_T100_H2_P32_N64_R16_D_z_init": dict(
        lengths=[100], layout="single", H=2, G=1, P=32, N=64, R=16, chunk=64, D=True, z=True, initial=True,
        seed=21),
    # same autotune key as the case above; sequences as rows of the batch
    "mamba3_prefill_batch2_T50_H2_P32_N64_R16_D_z_init": dict(
        lengths=[50, 50], layout="batched", H=2, G=1, P=32, N=64, R=16, chunk=64, D=True, z=True, initial=True,
        seed=22),
    # varlen: the second sequence starts at packed token 70, mid-chunk (the kernels chunk each
    # sequence from its own first token); two B/C heads; R = N/2
    "mamba3_prefill_varlen_70_33_H4_G2_P32_N64_R32_plain": dict(
        lengths=[70, 33], layout="varlen", H=4, G=2, P=32, N=64, R=32, chunk=64, D=False, z=False,
        initial=False, seed=23),
    # chunk 16: 3 chunks, the last partial; R = 8 < N/4 (most pairs unturned)
    "mamba3_prefill_T40_chunk16_H2_P32_N64_R8_D_z_init": dict(
        lengths=[40], layout="single", H=2, G=1, P=32, N=64, R=8, chunk=16, D=True, z=True, initial=True,
        seed=24),
}
LARGE = {
    "mamba3_prefill_large_T2048_H32_P64_N128_R32_D_z": dict(
        lengths=[2048], layout="single", H=32, G=1, P=64, N=128, R=32, chunk=64, D=True, z=True, initial=False,
        seed=26),
}

# The same tokens through both of mamba_ssm's paths (--paths): the prefill, and the step kernel one
# launch per token from the same (zero) start — what an engine that moves a recompute from one path to
# the other compares. Two dumps: NAME (mamba3_prefill) and NAME_steps (mamba3_step).
PATHS = {
    "mamba3_paths_T256_H4_P64_N128_R32_D_z": dict(
        lengths=[256], layout="single", H=4, G=1, P=64, N=128, R=32, chunk=64, D=True, z=True, initial=False,
        steps=True, seed=27),
}

# The kernels whose launches are recorded (module, kernel object name).
KERNELS = (("mamba3.angle_dt", "angle_dt_fwd_kernel"), ("mamba3.mamba3_siso_fwd", "mamba3_siso_fwd_kernel"))


def draw(case):
    """The case's tokens (packed by sequence, ssmv's layout: C [T, G, N], x [T, H, P], dt
    [T, H], ...), the per-head parameters and the initial state (or None), on the CPU."""
    g = torch.Generator(device="cpu").manual_seed(case["seed"])
    H, G, P, N, R = (case[k] for k in ("H", "G", "P", "N", "R"))
    S = len(case["lengths"])
    T = sum(case["lengths"]) + case.get("decode", 0)

    def normal(*shape, dtype=torch.bfloat16, scale=1.0):
        return (torch.randn(*shape, generator=g) * scale).to(dtype)

    dt = torch.exp(math.log(1e-3) + torch.rand(T, H, generator=g) * (math.log(0.1) - math.log(1e-3)))
    tok = dict(C=normal(T, G, N), B=normal(T, G, N), x=normal(T, H, P), dt=dt.float(),
               adt=(-(1.0 + 15.0 * torch.rand(T, H, generator=g)) * dt).float(), trap=normal(T, H),
               angles=normal(T, H, R, dtype=torch.float32).to(torch.bfloat16),  # the wrapper's cast
               z=normal(T, H, P) if case["z"] else None)
    par = dict(C_bias=normal(H, N, dtype=torch.float32), B_bias=normal(H, N, dtype=torch.float32),
               D=normal(H, dtype=torch.float32) if case["D"] else None)
    init = None
    if case["initial"]:
        init = ((torch.rand(S, H, R, generator=g) * (2 * math.pi)).float(),
                normal(S, H, P, N, dtype=torch.float32, scale=0.5), normal(S, H, N, dtype=torch.float32, scale=0.5),
                normal(S, H, P))
    return tok, par, init


def tokens(tok, lo, hi):
    """Tokens [lo, hi) of the packed stream."""
    return {k: (v[lo:hi] if v is not None else None) for k, v in tok.items()}


def to_device(d, device):
    return {k: (v.to(device) if v is not None else None) for k, v in d.items()}


def prefill_call(combined, tok, par, init, case, device):
    """mamba3_siso_combined in the case's layout: (y [T, H, P], final four-part state, the
    kernel's dtype of the returned angle state)."""
    lengths, layout = case["lengths"], case["layout"]
    S, T = len(lengths), sum(lengths)
    rows, L = (S, lengths[0]) if layout == "batched" else (1, T)
    if layout == "batched" and len(set(lengths)) != 1:
        raise ValueError("a batched case needs sequences of one length")
    if layout == "single" and S != 1:
        raise ValueError("layout 'single' is one sequence")
    t, p = to_device(tok, device), to_device(par, device)

    def seq(v):  # [T, ...] -> [rows, L, ...]
        return v.reshape(rows, L, *v.shape[1:])

    def per_head(v):  # [T, H] -> [rows, H, L]
        return seq(v).transpose(1, 2).contiguous()

    cu = None
    if layout == "varlen":
        cu = torch.tensor(np.concatenate([[0], np.cumsum(lengths)]), dtype=torch.int32, device=device)
    state = tuple(s.to(device) for s in init) if init is not None else None
    out, angle, ssm, k, v = combined(
        seq(t["C"]), seq(t["B"]), seq(t["x"]), per_head(t["adt"]), per_head(t["dt"]), per_head(t["trap"]),
        p["C_bias"], p["B_bias"], seq(t["angles"]), D=p["D"], Z=seq(t["z"]) if t["z"] is not None else None,
        Input_States=state, chunk_size=case["chunk"], return_final_states=True, cu_seqlens=cu)
    return out.reshape(T, *out.shape[2:]), (angle.float(), ssm, k.contiguous(), v), str(angle.dtype)


def decode_call(step, tok, par, state, device):
    """One mamba3_siso_step launch per token of one sequence, from `state`: (y [K, H, P], the
    last launch's four-part state)."""
    t, p = to_device(tok, device), to_device(par, device)
    ys = []
    for i in range(t["x"].shape[0]):
        one = {k: (v[i:i + 1] if v is not None else None) for k, v in t.items()}
        y, state = step(one["C"], one["B"], one["x"], one["adt"], one["dt"], one["trap"], p["C_bias"], p["B_bias"],
                        one["angles"], D=p["D"], Z=one["z"], Input_States=tuple(state))
        ys.append(y)
    return torch.cat(ys), state


def dump_tensors(tok, par, lengths, y, initial, final):
    """ssmv's tensors (docs/tensor-files.md "Mamba-3 dumps") of one dump."""
    a = common.np_array
    out = dict(x=a(tok["x"]), B=a(tok["B"]), C=a(tok["C"]), dt=a(tok["dt"]), adt=a(tok["adt"]),
               trap=a(tok["trap"]), angles=a(tok["angles"]), B_bias=a(par["B_bias"]), C_bias=a(par["C_bias"]),
               cu_seqlens=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64), y=a(y))
    if par["D"] is not None:
        out["D"] = a(par["D"])
    if tok["z"] is not None:
        out["z"] = a(tok["z"])
    for prefix, st in (("initial", initial), ("final", final)):
        if st is not None:
            angle, ssm, k, v = st
            out.update({f"{prefix}_angle_state": a(angle.float()), f"{prefix}_states": a(ssm.float()),
                        f"{prefix}_B_prev": a(k.float()), f"{prefix}_x_prev": a(v.float())})
    return out


def fake_combined(Q, K, V, ADT, DT, Trap, Q_bias, K_bias, Angles, D=None, Z=None, Input_States=None,
                  chunk_size=64, return_final_states=False, cu_seqlens=None):
    """A float32 stand-in of mamba3_siso_combined with its signature and outputs (smoke test
    only): mamba3_step_dumps.fake_step token by token; the angle state returned in Angles'
    dtype as the kernel returns it."""
    rows, L, G, N = Q.shape
    H, P, R = V.shape[2], V.shape[3], Angles.shape[-1]
    if cu_seqlens is not None:
        cu = cu_seqlens.tolist()
        spans = [(0, lo, hi) for lo, hi in zip(cu[:-1], cu[1:])]
    else:
        spans = [(b, 0, L) for b in range(rows)]
    out = torch.zeros_like(V)
    finals = []
    zero = (torch.zeros(1, H, R), torch.zeros(1, H, P, N), torch.zeros(1, H, N), torch.zeros(1, H, P, dtype=V.dtype))
    for s, (b, lo, hi) in enumerate(spans):
        st = tuple(x[s:s + 1] for x in Input_States) if Input_States is not None else zero
        for t in range(lo, hi):
            y, st = mamba3_step_dumps.fake_step(
                Q[b, t:t + 1], K[b, t:t + 1], V[b, t:t + 1], ADT[b, :, t][None], DT[b, :, t][None], Trap[b, :, t][None],
                Q_bias, K_bias, Angles[b, t:t + 1], D=D, Z=Z[b, t:t + 1] if Z is not None else None, Input_States=st)
            out[b, t] = y[0]
        finals.append(st)
    angle, ssm, k, v = (torch.cat([f[i] for f in finals]) for i in range(4))
    return out, angle.to(Angles.dtype), ssm, k, v


def kernels(fake, src):
    """(combined, step, recorders): mamba_ssm's functions, or the stand-ins with --fake."""
    if fake:
        return fake_combined, mamba3_step_dumps.fake_step, []
    if common.stub_if_missing("einops", ("rearrange", "repeat")):
        print("einops is not installed: a stub stands in (the Mamba-3 kernel files import it, never call it)")
    mods = common.load_mamba_triton(src, modules=("mamba3.mamba3_siso_combined", "mamba3.mamba3_siso_step")
                                    + tuple(m for m, _ in KERNELS))
    recorders = [common.LaunchRecorder(mods[m], name) for m, name in KERNELS]
    return (mods["mamba3.mamba3_siso_combined"].mamba3_siso_combined,
            mods["mamba3.mamba3_siso_step"].mamba3_siso_step, recorders)


def kernel_metadata(recorders, ptx_dir, name):
    """The non-ssmv metadata of the kernels a prefill launched (and their PTX into ptx_dir)."""
    meta = {}
    for r in recorders:
        ptx, facts = r.last()
        meta[f"mamba_ssm.{r.name}.config"] = r.best_config()
        meta[f"mamba_ssm.{r.name}.compiled"] = json.dumps(facts, sort_keys=True, default=str)
        if ptx_dir and ptx:
            with open(os.path.join(ptx_dir, f"{name}.{r.name}.ptx"), "w") as fh:
                fh.write(ptx)
    return meta


def run_case(name, case, combined, step, recorders, device, what, env, args):
    """One case: the prefill (and a hand-off's decode steps), its dumps written."""
    formats = {"ssmv.input_format": "bf16", "ssmv.state_format": "fp32", "ssmv.output_format": "bf16"}
    t0 = time.time()
    tok, par, init = draw(case)
    T0 = sum(case["lengths"])
    pre = tokens(tok, 0, T0)
    y, final, angle_dtype = prefill_call(combined, pre, par, init, case, device)
    if device == "cuda":
        torch.cuda.synchronize()
    seconds = time.time() - t0
    meta = dict(formats)
    meta.update({
        "ssmv.kernel": "mamba3_prefill", "ssmv.chunk_size": str(case["chunk"]),
        "ssmv.source": f"{what} mamba3_siso_combined (chunk_size {case['chunk']}, {case['layout']} layout, "
                       f"return_final_states=True; final_angle_state returned as {angle_dtype}, stored as "
                       f"its fp32 values) | {common.env_line(env)}",
        "mamba_ssm.final_angle_state_dtype": angle_dtype, "mamba_ssm.layout": case["layout"]})
    meta.update(kernel_metadata(recorders, args.ptx, name))
    decode = case.get("decode", 0)
    prefill_name = name + "_prefill" if decode else name
    dumps = {prefill_name: (dump_tensors(pre, par, case["lengths"], y, init, final), meta)}
    if decode:
        dec = tokens(tok, T0, T0 + decode)
        y_dec, last = decode_call(step, dec, par, final, device)
        dumps[name + "_step"] = (dump_tensors(dec, par, [decode], y_dec, final, last), dict(
            formats, **{"ssmv.kernel": "mamba3_step", "ssmv.source":
                        f"{what} mamba3_siso_step, {decode} launches from the final state of "
                        f"{prefill_name} (angle state as fp32, K state fp32, V state bf16) | "
                        f"{common.env_line(env)}"}))
    if case.get("steps"):
        H, P, N, R = case["H"], case["P"], case["N"], case["R"]
        zero = (torch.zeros(1, H, R, device=device), torch.zeros(1, H, P, N, device=device),
                torch.zeros(1, H, N, device=device), torch.zeros(1, H, P, dtype=torch.bfloat16, device=device))
        y_steps, last = decode_call(step, pre, par, init if init is not None else zero, device)
        dumps[name + "_steps"] = (dump_tensors(pre, par, case["lengths"], y_steps, init, last), dict(
            formats, **{"ssmv.kernel": "mamba3_step", "ssmv.source":
                        f"{what} mamba3_siso_step, one launch per token over the tokens of {name} from the same "
                        f"start | {common.env_line(env)}"}))
    for dump_name, (tensors, m) in dumps.items():
        path = os.path.join(args.out, dump_name + ".npz")
        common.save_fixture(path, tensors, m)
        print(f"{dump_name}: {len(tensors)} tensors, {os.path.getsize(path) / 1024:.0f} KiB -> {path}", flush=True)
    print(f"   {name}: {seconds:.1f} s for the prefill call (autotuning included on a new key); "
          f"{', '.join(f'{r.name}: {r.best_config()}' for r in recorders) or 'no kernels'}", flush=True)


def selected_cases(args):
    """The cases the options ask for (by name, else the fixtures and/or the large one)."""
    if args.cases:
        wanted = args.cases.split(",")
        known = {**CASES, **LARGE, **PATHS}
        unknown = [c for c in wanted if c not in known]
        if unknown:
            raise SystemExit(f"unknown cases {unknown}; known: {sorted(known)}")
        return {k: v for k, v in known.items() if k in wanted}
    cases = {} if args.only_large or args.paths else dict(CASES)
    if args.large or args.only_large:
        cases.update(LARGE)
    if args.paths:
        cases.update(PATHS)
    return cases


def main():
    ap = common.base_parser(__doc__)  # --out (the dumps' folder), --mamba-src
    ap.add_argument("--fake", action="store_true", help="float32 torch stand-ins of the kernels, no GPU")
    ap.add_argument("--large", action="store_true", help="also the production-shaped case (not a fixture)")
    ap.add_argument("--only-large", action="store_true", help="only the production-shaped case")
    ap.add_argument("--paths", action="store_true", help="only the same tokens through the prefill and the step kernel")
    ap.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    ap.add_argument("--ptx", default="", help="folder for the PTX of the launched kernels (GPU only)")
    args = ap.parse_args()
    cases = selected_cases(args)
    combined, step, recorders = kernels(args.fake, args.mamba_src)
    device = "cpu" if args.fake else "cuda"
    env = common.environment(args.mamba_src)
    print("environment:", common.env_line(env), flush=True)
    os.makedirs(args.out, exist_ok=True)
    if args.ptx:
        os.makedirs(args.ptx, exist_ok=True)
    what = "float32 torch stand-in (smoke test)" if args.fake else "mamba_ssm"
    failed = []
    for name, case in cases.items():
        try:
            run_case(name, case, combined, step, recorders, device, what, env, args)
        except Exception:  # noqa: BLE001  (the other cases still run; a CUDA fault may end them too)
            traceback.print_exc()
            print(f"   {name}: FAILED", flush=True)
            failed.append(name)
    if failed:
        raise SystemExit(f"{len(failed)} of {len(cases)} cases failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
