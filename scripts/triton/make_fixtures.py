#!/usr/bin/env python3
"""Fixtures from mamba_ssm's real Triton kernels, for ssmv's C++ side (`ssmv check`).

Runs mamba_ssm's selective_state_update (decode) and mamba_chunk_scan_combined (batched
and varlen prefill) on small Mamba2-realistic problems and saves one .npz per fixture in
the format of docs/tensor-files.md (packed layout, bf16 as int16 bit patterns) plus a
__metadata__ entry (a uint8 array of the UTF-8 bytes of a JSON object of strings: the
ssmv.* keys of scripts/triton/README.md). Every fixture is checked against a float64
evaluation of the recurrence written plainly here (S = exp(dA)*S + dt*B*x, y = C*S + D*x,
gate); the normwise relative errors are printed and listed in the README.

Also the worked example of the prefill/decode hand-off (2 prompts x 300 tokens, H 4, P 32,
N 64, bf16, chunk 64): how many outputs chunk_scan and SSU (fp32 state) disagree on, and
how many decoded outputs differ after a hand-off at token 200; handoff_example.md.

mamba_ssm runs in its deterministic mode (MAMBA_DETERMINISTIC=1): each autotuned kernel
gets one fixed config (the cheapest, see mamba_ssm/utils/determinism.py) instead of a
timed choice, so the fixtures are reproducible and no time goes to autotuning; the
configs used are recorded. --autotune keeps mamba_ssm's autotuning.

Run on the device machine (the recorded run's command: scripts/triton/README.md):
  run(command="export PYTHONUNBUFFERED=1; fix=$(mktemp -d); python3 scripts/triton/make_fixtures.py
      --out $fix && tar -cf $OUT/fixtures.tar -C $fix .", carry=[".triton_src"])
Local smoke test of everything but the kernels (float32 torch stand-ins):
  python3 scripts/triton/make_fixtures.py --fake --out "$(mktemp -d)"
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

FMT = {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float32: "fp32"}
INF = float("inf")


# ---------------------------------------------------------------------------------------
# Kernels: mamba_ssm's, or float32 stand-ins for a smoke test without a GPU (--fake)

class Kernels:
    def __init__(self, fake, src, autotune):
        self.fake = fake
        self.configs = {}
        if fake:
            return
        if not autotune:
            os.environ["MAMBA_DETERMINISTIC"] = "1"
        mods = common.load_mamba_triton(src, ("selective_state_update", "ssd_combined", "ssd_chunk_state",
                                              "ssd_chunk_scan", "ssd_state_passing", "ssd_bmm"))
        self.mods = mods
        self.ssu_mod = mods["selective_state_update"]
        self._ssu = self.ssu_mod.selective_state_update
        self._mcsc = mods["ssd_combined"].mamba_chunk_scan_combined

    def kernel_info(self):
        """Config and MMA instructions of each autotuned kernel (best effort)."""
        if self.fake:
            return {}
        import re
        info = {}
        for mod, name in (("ssd_chunk_state", "_chunk_cumsum_fwd_kernel"), ("ssd_chunk_state", "_chunk_state_fwd_kernel"),
                          ("ssd_chunk_state", "_chunk_state_varlen_kernel"), ("ssd_state_passing", "_state_passing_fwd_kernel"),
                          ("ssd_bmm", "_bmm_chunk_fwd_kernel"), ("ssd_chunk_scan", "_chunk_scan_fwd_kernel"),
                          ("selective_state_update", "_selective_scan_update_kernel")):
            k = getattr(self.mods[mod], name)
            rec = {}
            try:
                rec["configs"] = [str(c) for c in k.configs]
                if getattr(k, "best_config", None) is not None:
                    rec["best_config"] = str(k.best_config)
            except AttributeError:
                pass
            ins = set()
            for ck in common.compiled_kernels(k):
                try:
                    ptx = ck.asm["ptx"]
                except Exception as e:  # noqa: BLE001
                    ins.add(f"(PTX not available: {type(e).__name__})")
                    continue
                ins.update(re.findall(r"(wgmma\.mma_async[.\w]*|mma\.sync[.\w]*)", ptx))
                ins.update(f"{n} x{ptx.count(n)}" for n in ("fma.rn.f32", "ex2.approx", "lg2.approx",
                                                            "div.full.f32", "div.rn.f32", "rcp.approx")
                           if n in ptx)
            rec["compiled_variants"] = len(common.compiled_kernels(k))
            rec["ptx_instructions"] = sorted(ins)
            info[name] = rec
        return info

    def ptx_files(self, out_dir):
        """The PTX of every compiled SSU and chunk_scan kernel variant (for reading)."""
        if self.fake:
            return []
        written = []
        for mod, name in (("selective_state_update", "_selective_scan_update_kernel"),
                          ("ssd_chunk_scan", "_chunk_scan_fwd_kernel"), ("ssd_chunk_state", "_chunk_state_fwd_kernel")):
            for i, ck in enumerate(common.compiled_kernels(getattr(self.mods[mod], name))[:2]):
                try:
                    ptx = ck.asm["ptx"]
                except Exception:  # noqa: BLE001
                    continue
                os.makedirs(os.path.join(out_dir, "ptx"), exist_ok=True)
                p = os.path.join(out_dir, "ptx", f"{name}.{i}.ptx")
                with open(p, "w") as fh:
                    fh.write(ptx)
                written.append(p)
        return written

    # selective_state_update: one call = one token of each request of the batch
    def ssu(self, state, x, dt, A, B, C, D=None, z=None, dt_bias=None, dt_softplus=False, state_batch_indices=None):
        if self.fake:
            return fake_ssu(state, x, dt, A, B, C, D, z, dt_bias, dt_softplus, state_batch_indices)
        if D is not None and dt_bias is not None:
            return self._ssu(state, x, dt, A, B, C, D=D, z=z, dt_bias=dt_bias, dt_softplus=dt_softplus,
                             state_batch_indices=state_batch_indices)
        return self.ssu_launch(state, x, dt, A, B, C, D, z, dt_bias, dt_softplus, state_batch_indices)

    def ssu_launch(self, state, x, dt, A, B, C, D, z, dt_bias, dt_softplus, sbi):
        """mamba_ssm's selective_state_update launch for the (batch, nheads, dim) form, line
        for line, but with None-safe stride arguments: at this commit the wrapper raises
        TypeError for D=None or dt_bias=None (`*(D.stride(0), D.stride(1)) if D is not None
        else 0` unpacks an int) and its tie_hdim test reads dt_bias.stride."""
        import triton
        kern = self.ssu_mod._selective_scan_update_kernel
        _, nheads, dim, dstate = state.shape
        batch = x.shape[0]
        ngroups = B.shape[1]
        out = torch.empty_like(x)
        grid = lambda META: (triton.cdiv(dim, META["BLOCK_SIZE_M"]), batch, nheads)  # noqa: E731
        z_strides = (z.stride(0), z.stride(1), z.stride(2)) if z is not None else (0, 0, 0)
        BLOCK_SIZE_M, num_warps = ((32, 4) if dstate <= 16 else ((16, 4) if dstate <= 32 else
                                   ((8, 4) if dstate <= 64 else ((4, 4) if dstate <= 128 else (4, 8)))))
        tie_hdim = (A.stride(-1) == 0 and A.stride(-2) == 0 and dt.stride(-1) == 0
                    and (dt_bias is None or dt_bias.stride(-1) == 0))
        with torch.cuda.device(x.device.index):
            kern[grid](state, x, dt, dt_bias, A, B, C, D, z, out, sbi,
                       batch, nheads, dim, dstate, nheads // ngroups,
                       state.stride(0), state.stride(1), state.stride(2), state.stride(3),
                       x.stride(0), x.stride(1), x.stride(2),
                       dt.stride(0), dt.stride(1), dt.stride(2),
                       *((dt_bias.stride(0), dt_bias.stride(1)) if dt_bias is not None else (0, 0)),
                       A.stride(0), A.stride(1), A.stride(2),
                       B.stride(0), B.stride(1), B.stride(2),
                       C.stride(0), C.stride(1), C.stride(2),
                       *((D.stride(0), D.stride(1)) if D is not None else (0, 0)),
                       z_strides[0], z_strides[1], z_strides[2],
                       out.stride(0), out.stride(1), out.stride(2),
                       dt_softplus, tie_hdim, BLOCK_SIZE_M, num_warps=num_warps)
        return out

    def chunk_scan(self, x, dt, A, B, C, chunk_size, **kw):
        if self.fake:
            return fake_chunk_scan(x, dt, A, B, C, chunk_size, **kw)
        return self._mcsc(x, dt, A, B, C, chunk_size, **kw)


def softplus64(v):
    return torch.where(v > 20.0, v, torch.log1p(torch.exp(torch.clamp(v, max=20.0))))


def fake_ssu(state, x, dt, A, B, C, D, z, dt_bias, dt_softplus, sbi):
    rows = sbi.long() if sbi is not None else torch.arange(x.shape[0], device=x.device)
    H = x.shape[1]
    G = B.shape[1]
    s = state[rows].float()
    d = dt[:, :, 0].float() + (dt_bias[:, 0] if dt_bias is not None else 0.0)
    if dt_softplus:
        d = torch.where(d <= 20.0, torch.log(torch.exp(d) + 1), d)
    dA = torch.exp(A[:, 0, 0][None] * d)
    Bh = B.float().repeat_interleave(H // G, dim=1)
    Ch = C.float().repeat_interleave(H // G, dim=1)
    s = s * dA[..., None, None] + (Bh[:, :, None, :] * d[..., None, None]) * x.float()[..., None]
    state[rows] = s.to(state.dtype)
    out = (s * Ch[:, :, None, :]).sum(-1)
    if D is not None:
        out = out + x.float() * D
    if z is not None:
        out = out * (z.float() * torch.sigmoid(z.float()))
    return out.to(x.dtype)


def fake_chunk_scan(x, dt, A, B, C, chunk_size, D=None, z=None, dt_bias=None, initial_states=None, seq_idx=None,
                    cu_seqlens=None, dt_softplus=False, dt_limit=(0.0, INF), return_final_states=False,
                    return_varlen_states=False):
    batch, L, H, P = x.shape
    G, N = B.shape[2], B.shape[3]
    y = torch.empty_like(x)
    finals = []
    varlen = []
    for b in range(batch):
        s = initial_states[b].float() if initial_states is not None else torch.zeros(H, P, N)
        for t in range(L):
            if seq_idx is not None and t > 0 and seq_idx[b, t] != seq_idx[b, t - 1]:
                varlen.append(s.clone())
                s = torch.zeros(H, P, N)
            d = dt[b, t].float() + (dt_bias if dt_bias is not None else 0.0)
            if dt_softplus:
                d = torch.where(d <= 20.0, torch.log(torch.exp(d) + 1), d)
            d = torch.clamp(d, dt_limit[0], dt_limit[1])
            Bh = B[b, t].float().repeat_interleave(H // G, dim=0)
            Ch = C[b, t].float().repeat_interleave(H // G, dim=0)
            s = s * torch.exp(d * A)[:, None, None] + (d[:, None] * Bh)[:, None, :] * x[b, t].float()[..., None]
            o = (s * Ch[:, None, :]).sum(-1)
            if D is not None:
                o = o + x[b, t].float() * (D if D.dim() == 2 else D[:, None])
            if z is not None:
                o = o * (z[b, t].float() * torch.sigmoid(z[b, t].float()))
            y[b, t] = o.to(x.dtype)
        finals.append(s)
        varlen.append(s.clone())
    res = [y]
    if return_final_states:
        res.append(torch.stack(finals))
    if return_varlen_states:
        res.append(torch.stack(varlen).to(C.dtype))
    return res[0] if len(res) == 1 else tuple(res)


# ---------------------------------------------------------------------------------------
# Data (Mamba2-realistic)

class Gen:
    def __init__(self, seed, device):
        self.g = torch.Generator().manual_seed(seed)
        self.device = device

    def randn(self, shape, dtype, scale=1.0):
        return (torch.randn(shape, generator=self.g, dtype=torch.float64) * scale).to(dtype).to(self.device)

    def uniform(self, shape, lo, hi):
        return torch.empty(shape, dtype=torch.float64).uniform_(lo, hi, generator=self.g)

    def A(self, H):
        return (-torch.exp(self.uniform((H,), math.log(1.0), math.log(16.0)))).float().to(self.device)

    def dt_bias(self, H):
        dt0 = torch.exp(self.uniform((H,), math.log(1e-3), math.log(0.1)))
        return (dt0 + torch.log(-torch.expm1(-dt0))).float().to(self.device)

    def dt_positive(self, shape, dtype, negative_share=0.0):
        d = torch.exp(self.uniform(shape, math.log(1e-3), math.log(0.1)))
        if negative_share:
            flip = torch.rand(shape, generator=self.g, dtype=torch.float64) < negative_share
            d = torch.where(flip, -d, d)
        return d.to(dtype).to(self.device)


def make_problem(gen, T, H, P, N, G, itype, *, z=True, D="h", dt_bias=True, softplus=True, dt_std=0.5,
                 negative_dt=0.0):
    """Packed inputs of T tokens."""
    p = {"x": gen.randn((T, H, P), itype),
         "dt": gen.randn((T, H), itype, dt_std) if softplus else gen.dt_positive((T, H), itype, negative_dt),
         "A": gen.A(H),
         "B": gen.randn((T, G, N), itype),
         "C": gen.randn((T, G, N), itype)}
    if z:
        p["z"] = gen.randn((T, H, P), itype)
    if D == "h":
        p["D"] = gen.randn((H,), torch.float32)
    elif D == "hp":
        p["D"] = gen.randn((H, P), torch.float32)
    if dt_bias:
        p["dt_bias"] = gen.dt_bias(H)
    return p


# ---------------------------------------------------------------------------------------
# Runs

def ssu_args(p, rows, H, P, N):
    """Per-token SSU arguments: dt [b, H, P] and A [H, P, N], dt_bias and D [H, P] broadcast."""
    b = len(rows)
    a = {"x": p["x"][rows], "dt": p["dt"][rows][:, :, None].expand(b, H, P),
         "B": p["B"][rows], "C": p["C"][rows]}
    a["z"] = p["z"][rows] if "z" in p else None
    return a


def ssu_static(p, H, P, N):
    A = p["A"][:, None, None].expand(H, P, N)
    D = p.get("D")
    if D is not None and D.dim() == 1:
        D = D[:, None].expand(H, P)
    dtb = p["dt_bias"][:, None].expand(H, P) if "dt_bias" in p else None
    return A, D, dtb


def run_ssu(K, p, lengths, init, state_dtype, softplus, slots=None, nslots=None, token_offset=None):
    """Decode: one kernel call per token step, the state kept in the cache dtype between
    calls. lengths[s] tokens of request s (packed: request after request); with slots,
    request s lives in cache slot slots[s] and each call takes only the requests still
    running (state_batch_indices, no pad entries)."""
    T, H, P = p["x"].shape
    N = p["B"].shape[2]
    S = len(lengths)
    starts = np.concatenate([[0], np.cumsum(lengths)])[:-1]
    if token_offset is not None:
        starts = token_offset
    dev = p["x"].device
    if slots is None:
        cache = init.to(state_dtype).clone().contiguous()
    else:
        cache = torch.randn((nslots, H, P, N), generator=torch.Generator().manual_seed(7)).to(state_dtype).to(dev)
        untouched = [i for i in range(nslots) if i not in slots]
        keep = cache[untouched].clone()
        cache[torch.tensor(slots, device=dev)] = init.to(state_dtype)
    A, D, dtb = ssu_static(p, H, P, N)
    y = torch.zeros_like(p["x"])
    for t in range(max(lengths)):
        active = [s for s in range(S) if lengths[s] > t]
        rows = torch.tensor([int(starts[s]) + t for s in active], device=dev)
        a = ssu_args(p, rows, H, P, N)
        if slots is None:
            assert len(active) == S
            sbi = None
        else:
            sbi = torch.tensor([slots[s] for s in active], dtype=torch.int32, device=dev)
        out = K.ssu(cache, a["x"], a["dt"], A, a["B"], a["C"], D=D, z=a["z"], dt_bias=dtb,
                    dt_softplus=softplus, state_batch_indices=sbi)
        y[rows] = out
    if slots is None:
        return y, cache
    assert torch.equal(cache[untouched].view(torch.int8) if cache.dtype != torch.float32 else cache[untouched],
                       keep.view(torch.int8) if keep.dtype != torch.float32 else keep), "an unused slot was written"
    return y, cache[torch.tensor(slots, device=dev)]


def batched(t, S, L):
    return t.reshape(S, L, *t.shape[1:])


def run_chunk_batched(K, p, S, L, chunk, init, softplus, dt_limit, return_final=True):
    H, P = p["x"].shape[1:]
    kw = dict(D=p.get("D"), z=batched(p["z"], S, L) if "z" in p else None, dt_bias=p.get("dt_bias"),
              initial_states=init, dt_softplus=softplus, dt_limit=dt_limit, return_final_states=True)
    y, final = K.chunk_scan(batched(p["x"], S, L), batched(p["dt"], S, L), p["A"], batched(p["B"], S, L),
                            batched(p["C"], S, L), chunk, **kw)
    return y.reshape(S * L, H, P), final


def run_chunk_varlen(K, p, lengths, chunk, softplus, dt_limit):
    dev = p["x"].device
    cu = torch.tensor(np.concatenate([[0], np.cumsum(lengths)]), dtype=torch.int32, device=dev)
    seq_idx = torch.repeat_interleave(torch.arange(len(lengths), dtype=torch.int32, device=dev),
                                      torch.tensor(lengths, device=dev))[None]
    kw = dict(D=p.get("D"), z=p["z"][None] if "z" in p else None, dt_bias=p.get("dt_bias"), seq_idx=seq_idx,
              cu_seqlens=cu, dt_softplus=softplus, dt_limit=dt_limit, return_final_states=True,
              return_varlen_states=True)
    y, _final, varlen = K.chunk_scan(p["x"][None], p["dt"][None], p["A"], p["B"][None], p["C"][None], chunk, **kw)
    return y[0], varlen


def run_handoff(K, p, S, L, prefill, chunk, state_dtype, softplus):
    """chunk_scan over the first `prefill` tokens of each sequence (batched, returning the
    fp32 final states), the states cast to the decode cache dtype, then
    selective_state_update token by token over the rest."""
    H, P = p["x"].shape[1:]
    N = p["B"].shape[2]
    pre = {k: (batched(v, S, L)[:, :prefill].reshape(S * prefill, *v.shape[1:]) if v.dim() >= 2 and v.shape[0] == S * L else v)
           for k, v in p.items()}
    y_pre, fin = run_chunk_batched(K, pre, S, prefill, chunk, None, softplus, (0.0, INF))
    dec_len = L - prefill
    y_dec, final = run_ssu(K, p, [dec_len] * S, fin, state_dtype, softplus,
                           token_offset=np.array([s * L + prefill for s in range(S)]))
    y = y_dec.clone()
    for s in range(S):
        y[s * L:s * L + prefill] = y_pre[s * prefill:(s + 1) * prefill]
    return y, final, fin


# ---------------------------------------------------------------------------------------
# float64 reference of the recurrence, written plainly

def reference(p, cu, init, softplus, dt_limit):
    x, dt, A, B, C = (p[k].double() for k in ("x", "dt", "A", "B", "C"))
    T, H, P = x.shape
    G, N = B.shape[1:]
    z = p["z"].double() if "z" in p else None
    D = p["D"].double() if "D" in p else None
    if D is not None and D.dim() == 1:
        D = D[:, None]
    bias = p["dt_bias"].double() if "dt_bias" in p else 0.0
    y = torch.zeros_like(x)
    finals = []
    for s in range(len(cu) - 1):
        S = init[s].double().clone() if init is not None else torch.zeros(H, P, N, dtype=torch.float64, device=x.device)
        for t in range(int(cu[s]), int(cu[s + 1])):
            d = dt[t] + bias
            if softplus:
                d = softplus64(d)
            d = torch.clamp(d, min=dt_limit[0], max=dt_limit[1])
            Bh = B[t].repeat_interleave(H // G, dim=0)
            Ch = C[t].repeat_interleave(H // G, dim=0)
            S = torch.exp(d * A)[:, None, None] * S + (d[:, None, None] * Bh[:, None, :]) * x[t][:, :, None]
            o = (S * Ch[:, None, :]).sum(-1)
            if D is not None:
                o = o + D * x[t]
            if z is not None:
                o = o * (z[t] * torch.sigmoid(z[t]))
            y[t] = o
        finals.append(S)
    return y, torch.stack(finals)


def rel_err(got, ref):
    got = got.double()
    return float((got - ref).abs().max() / ref.abs().max().clamp(min=1e-300))


# ---------------------------------------------------------------------------------------
# Dumps

def dump(out_dir, name, p, cu, y, final, init, meta, prefill=None):
    t = {k: p[k] for k in ("x", "dt", "A", "B", "C", "z", "D", "dt_bias") if k in p}
    if init is not None:
        t["initial_states"] = init
    t["cu_seqlens"] = torch.as_tensor(np.asarray(cu, dtype=np.int64))
    t["y"] = y
    t["final_states"] = final
    if prefill is not None:
        t["prefill_tokens"] = torch.as_tensor(np.asarray(prefill, dtype=np.int64))
    arrays = {k: common.np_array(v) for k, v in t.items()}
    path = os.path.join(out_dir, name + ".npz")
    common.save_fixture(path, arrays, meta)
    return path, {k: list(v.shape) for k, v in arrays.items()}, os.path.getsize(path)


def metadata(kernel, itype, stype, softplus, dt_limit, contract, source, chunk=None, layout=None):
    m = {"ssmv.kernel": kernel, "ssmv.input_format": FMT[itype], "ssmv.state_format": FMT[stype],
         "ssmv.output_format": FMT[itype], "ssmv.dt_softplus": "true" if softplus else "false",
         "ssmv.dt_limit": f"{common.hex_limit(dt_limit[0])},{common.hex_limit(dt_limit[1])}",
         "ssmv.contract": contract, "ssmv.source": source}
    if chunk is not None:
        m["ssmv.chunk_size"] = str(chunk)
        m["ssmv.chunk_layout"] = layout
    if kernel == "handoff":
        m["ssmv.decode_contract"] = "triton.ssu"
    return m


NO_LIMIT = (-INF, INF)
DEFAULT_LIMIT = (0.0, INF)


def fixture_specs():
    """(name, kind, parameters)."""
    bf, f16, f32 = torch.bfloat16, torch.float16, torch.float32
    return [
        # selective_state_update, decode: lengths = tokens per request
        ("ssu_bf16in_fp32state_z_D_T4", "ssu", dict(lengths=[4, 4, 4], H=4, P=16, N=64, G=2, itype=bf, stype=f32)),
        ("ssu_bf16in_bf16state_z_D_T4", "ssu", dict(lengths=[4, 4, 4], H=4, P=16, N=64, G=2, itype=bf, stype=bf)),
        ("ssu_bf16in_fp16state_z_D_T4", "ssu", dict(lengths=[4, 4, 4], H=4, P=16, N=64, G=2, itype=bf, stype=f16)),
        ("ssu_bf16in_fp32state_noD_nobias_nosoftplus_T4", "ssu",
         dict(lengths=[4, 4, 4], H=4, P=16, N=16, G=4, itype=bf, stype=f32, z=False, D=None, dt_bias=False,
              softplus=False)),
        ("ssu_bf16in_fp32state_Dhp_G1_N128_T3", "ssu", dict(lengths=[3, 3], H=2, P=16, N=128, G=1, itype=bf, stype=f32,
                                                            D="hp")),
        ("ssu_fp16in_fp32state_z_D_T4", "ssu", dict(lengths=[4, 4], H=4, P=16, N=32, G=2, itype=f16, stype=f32)),
        ("ssu_fp32in_fp32state_z_D_T4", "ssu", dict(lengths=[4, 4], H=4, P=16, N=32, G=2, itype=f32, stype=f32)),
        ("ssu_bf16in_bf16state_ragged_slots", "ssu",
         dict(lengths=[5, 3, 1], H=4, P=16, N=32, G=2, itype=bf, stype=bf, slots=[2, 0, 3], nslots=4)),
        # mamba_chunk_scan_combined, batched (2 sequences of L tokens)
        ("chunk_scan_batched_L64_init_Dhp_z", "batched",
         dict(S=2, L=150, chunk=64, H=2, P=16, N=32, G=2, itype=bf, init=True, D="hp")),
        ("chunk_scan_batched_L128_Dh", "batched", dict(S=2, L=200, chunk=128, H=2, P=16, N=32, G=1, itype=bf, z=False)),
        ("chunk_scan_batched_L256_init_z_dtlimit", "batched",
         dict(S=2, L=300, chunk=256, H=2, P=8, N=16, G=1, itype=bf, init=True, dt_limit=(0.0, 0.1), dt_std=1.0)),
        ("chunk_scan_batched_L64_fp16in_z_D", "batched", dict(S=2, L=130, chunk=64, H=2, P=16, N=32, G=2, itype=f16)),
        ("chunk_scan_batched_L64_fp32in_z_D", "batched", dict(S=2, L=100, chunk=64, H=2, P=16, N=32, G=1, itype=f32)),
        ("chunk_scan_batched_L64_nosoftplus_clamp", "batched",
         dict(S=2, L=100, chunk=64, H=2, P=16, N=32, G=1, itype=bf, z=False, dt_bias=False, softplus=False,
              negative_dt=0.1)),
        # varlen (batch 1, cu_seqlens, seq_idx, return_varlen_states)
        ("chunk_scan_varlen_L64_z_D", "varlen", dict(lengths=[37, 91, 13, 159], chunk=64, H=4, P=8, N=32, G=2, itype=bf)),
        ("chunk_scan_varlen_L128_Dhp", "varlen", dict(lengths=[100, 1, 159], chunk=128, H=2, P=16, N=32, G=1, itype=bf,
                                                      z=False, D="hp")),
        # hand-off: chunk_scan over the first `prefill` tokens, then SSU token by token
        ("handoff_L64_K100_fp32state", "handoff",
         dict(S=2, L=140, prefill=100, chunk=64, H=2, P=16, N=32, G=2, itype=bf, stype=f32)),
        ("handoff_L64_K100_bf16state", "handoff",
         dict(S=2, L=140, prefill=100, chunk=64, H=2, P=16, N=32, G=2, itype=bf, stype=bf)),
    ]


def describe(kind, q):
    opts = []
    if q.get("z", True):
        opts.append("z")
    D = q.get("D", "h")
    if D:
        opts.append("D[H]" if D == "h" else "D[H,P]")
    if q.get("dt_bias", True):
        opts.append("dt_bias")
    opts.append("dt_softplus" if q.get("softplus", True) else "no softplus")
    if q.get("dt_limit"):
        opts.append(f"dt_limit={q['dt_limit']}")
    if q.get("negative_dt"):
        opts.append(f"{int(100 * q['negative_dt'])}% of dt negative (clamped to 0 by the default limit)")
    if q.get("init"):
        opts.append("initial_states")
    if q.get("slots"):
        opts.append(f"state_batch_indices (slots {q['slots']} of a {q['nslots']}-slot cache)")
    return opts


def make_one(K, gen, out_dir, name, kind, q, source_base, log, adjust=None):
    """One dump of kind ssu / batched / varlen / handoff with the parameters q. adjust (the
    campaign's adversarial data, scripts/triton/campaign.py), when given, is called as
    adjust(p, init) -> init after the problem and initial states are drawn and before the
    kernels run; it may change p's tensors in place of the drawn ones."""
    H, P, N, G, itype = q["H"], q["P"], q["N"], q["G"], q["itype"]
    softplus = q.get("softplus", True)
    dev = gen.device
    if kind in ("ssu", "varlen"):
        lengths = q["lengths"]
    else:
        lengths = [q["L"]] * q["S"]
    T = int(sum(lengths))
    cu = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    p = make_problem(gen, T, H, P, N, G, itype, z=q.get("z", True), D=q.get("D", "h"),
                     dt_bias=q.get("dt_bias", True), softplus=softplus, dt_std=q.get("dt_std", 0.5),
                     negative_dt=q.get("negative_dt", 0.0))
    init = None
    prefill = None
    if kind == "ssu":
        stype = q["stype"]
        init = gen.randn((len(lengths), H, P, N), stype, 0.5)
        init = adjust(p, init) if adjust else init
        y, final = run_ssu(K, p, lengths, init, stype, softplus, slots=q.get("slots"), nslots=q.get("nslots"))
        limit = NO_LIMIT
        fn = "selective_state_update" if ("D" in p and "dt_bias" in p) else \
            "selective_state_update's kernel _selective_scan_update_kernel (launched as the wrapper does, None-safe strides)"
        meta = metadata("ssu", itype, stype, softplus, limit, "triton.ssu", f"{fn}, one call per token, {source_base}")
    elif kind == "batched":
        stype = torch.float32
        limit = q.get("dt_limit", DEFAULT_LIMIT)
        if q.get("init"):
            init = gen.randn((q["S"], H, P, N), torch.float32, 0.5)
        init = adjust(p, init) if adjust else init
        y, final = run_chunk_batched(K, p, q["S"], q["L"], q["chunk"], init, softplus, limit)
        meta = metadata("chunk_scan", itype, stype, softplus, limit, "triton.chunk_scan",
                        f"mamba_chunk_scan_combined (batched, return_final_states), {source_base}",
                        chunk=q["chunk"], layout="sequence")
    elif kind == "varlen":
        stype = itype
        limit = q.get("dt_limit", DEFAULT_LIMIT)
        if adjust:
            adjust(p, None)
        y, final = run_chunk_varlen(K, p, lengths, q["chunk"], softplus, limit)
        meta = metadata("chunk_scan", itype, stype, softplus, limit, "triton.chunk_scan.varlen",
                        f"mamba_chunk_scan_combined (batch 1, cu_seqlens, seq_idx, return_varlen_states: "
                        f"final_states are the varlen states), {source_base}", chunk=q["chunk"], layout="global")
    else:
        stype = q["stype"]
        limit = DEFAULT_LIMIT
        if adjust:
            adjust(p, None)
        y, final, _fin = run_handoff(K, p, q["S"], q["L"], q["prefill"], q["chunk"], stype, softplus)
        prefill = [q["prefill"]] * q["S"]
        meta = metadata("handoff", itype, stype, softplus, limit, "triton.chunk_scan",
                        f"mamba_chunk_scan_combined (batched, first {q['prefill']} tokens, return_final_states fp32) "
                        f"-> .to({FMT[stype]}) -> selective_state_update per token, {source_base}",
                        chunk=q["chunk"], layout="sequence")
    y_ref, f_ref = reference(p, cu, init, softplus, limit)
    e_y, e_f = rel_err(y, y_ref), rel_err(final, f_ref)
    path, shapes, size = dump(out_dir, name, p, cu, y, final, init, meta, prefill)
    flag = "  <-- GROSS MISMATCH" if max(e_y, e_f) > 0.1 else ""
    log(f"{name}: {size} bytes; max|y - ref|/max|ref| = {e_y:.3e}, final_states {e_f:.3e}{flag}")
    return {"name": name, "kind": kind, "kernel": meta["ssmv.kernel"], "tokens": T, "lengths": [int(v) for v in lengths],
            "H": H, "P": P, "N": N, "G": G, "input": FMT[itype], "state": FMT[stype],
            "options": describe(kind, q), "chunk": q.get("chunk"), "prefill": q.get("prefill"),
            "metadata": meta, "shapes": shapes, "bytes": size, "rel_err_y": e_y, "rel_err_final": e_f}


# ---------------------------------------------------------------------------------------
# The worked example

def ordered16(bits):
    v = bits.to(torch.int32)
    return torch.where(v < 0, -(v & 0x7FFF), v)


def ulp_diff_bf16(a, b):
    return (ordered16(a.view(torch.int16)) - ordered16(b.view(torch.int16))).abs()


def handoff_example(K, gen, out_dir, source_base, log, env):
    S, L, H, P, N, G, chunk, cut = 2, 300, 4, 32, 64, 1, 64, 200
    bf = torch.bfloat16
    p = make_problem(gen, S * L, H, P, N, G, bf, z=False, D="h")
    cu = np.arange(S + 1, dtype=np.int64) * L
    y_cs, fin_cs = run_chunk_batched(K, p, S, L, chunk, None, True, DEFAULT_LIMIT)
    zero = torch.zeros(S, H, P, N, dtype=torch.float32, device=gen.device)
    y_ssu, fin_ssu = run_ssu(K, p, [L] * S, zero, torch.float32, True)
    y_ho, fin_ho, fin_pre = run_handoff(K, p, S, L, cut, chunk, torch.float32, True)
    y_hb, fin_hb, _ = run_handoff(K, p, S, L, cut, chunk, torch.bfloat16, True)
    y_ref, f_ref = reference(p, cu, None, True, DEFAULT_LIMIT)
    pre = torch.zeros(S * L, dtype=torch.bool, device=gen.device)
    for s in range(S):
        pre[s * L:s * L + cut] = True
    dec = ~pre

    def cmp(a, b, mask=None):
        d = ulp_diff_bf16(a, b)
        diff = (a.double() - b.double()).abs()
        if mask is not None:
            d, diff = d[mask], diff[mask]
        return {"outputs": d.numel(), "differ": int((d != 0).sum()), "max_ulp": int(d.max()),
                "share": float((d != 0).double().mean()),
                "max_abs_diff_rel": float(diff.max() / y_ref.abs().max())}
    res = {
        "chunk_scan_vs_ssu_all": cmp(y_cs, y_ssu),
        "chunk_scan_vs_ssu_prefix": cmp(y_cs, y_ssu, pre), "chunk_scan_vs_ssu_decoded": cmp(y_cs, y_ssu, dec),
        "handoff_vs_chunk_scan_prefix": cmp(y_ho, y_cs, pre), "handoff_vs_chunk_scan_decoded": cmp(y_ho, y_cs, dec),
        "handoff_vs_ssu_decoded": cmp(y_ho, y_ssu, dec),
        "handoff_bf16state_vs_chunk_scan_decoded": cmp(y_hb, y_cs, dec),
        "handoff_bf16state_vs_handoff_fp32state_decoded": cmp(y_hb, y_ho, dec),
        "rel_err": {"chunk_scan": rel_err(y_cs, y_ref), "ssu_fp32state": rel_err(y_ssu, y_ref),
                    "handoff_fp32state": rel_err(y_ho, y_ref), "handoff_bf16state": rel_err(y_hb, y_ref)},
        "rel_err_final": {"chunk_scan": rel_err(fin_cs, f_ref), "ssu_fp32state": rel_err(fin_ssu, f_ref),
                          "handoff_fp32state": rel_err(fin_ho, f_ref), "handoff_bf16state": rel_err(fin_hb, f_ref)},
        "final_states_fp32_differ": {"chunk_scan_vs_ssu": int((fin_cs != fin_ssu).sum()),
                                     "handoff_vs_chunk_scan": int((fin_ho != fin_cs).sum()), "elements": fin_cs.numel()},
    }
    files = []
    errs = [("chunk_scan", None), ("ssu_fp32state", None), ("handoff_fp32state", cut)]
    src = f"worked example (2 x 300 tokens, H 4, P 32, N 64, G 1, bf16, chunk 64), {source_base}"
    m = metadata("chunk_scan", bf, torch.float32, True, DEFAULT_LIMIT, "triton.chunk_scan",
                 "mamba_chunk_scan_combined over all 300 tokens (batched, return_final_states), " + src,
                 chunk=chunk, layout="sequence")
    files.append(dump(out_dir, "example_chunk_scan_T300", p, cu, y_cs, fin_cs, None, m))
    m = metadata("ssu", bf, torch.float32, True, NO_LIMIT, "triton.ssu",
                 "selective_state_update token by token over all 300 tokens from the zero state (fp32 cache), " + src)
    files.append(dump(out_dir, "example_ssu_T300_fp32state", p, cu, y_ssu, fin_ssu, None, m))
    m = metadata("handoff", bf, torch.float32, True, DEFAULT_LIMIT, "triton.chunk_scan",
                 "mamba_chunk_scan_combined over tokens 0..199 (fp32 final states, fp32 cache), then "
                 "selective_state_update over 200..299, " + src, chunk=chunk, layout="sequence")
    files.append(dump(out_dir, "example_handoff_K200_fp32state", p, cu, y_ho, fin_ho, None, m, prefill=[cut] * S))
    for f in files:
        log(f"{os.path.basename(f[0])}: {f[2]} bytes")
    r = res
    L_ = ["# Worked example: chunk_scan, SSU and the prefill/decode hand-off on mamba_ssm's Triton kernels\n",
          f"{common.env_line(env)}. Made by `scripts/triton/make_fixtures.py` (function `handoff_example`). "
          "Two prompts of 300 tokens, H = 4, P = 32, N = 64, G = 1, bf16 inputs and outputs, chunk 64, D per head, "
          "dt_bias, dt_softplus, no z; Mamba2-realistic data (A = −exp(U[log 1, log 16]), dt_bias = softplus⁻¹ of "
          "a log-uniform dt in [1e-3, 0.1], dt ~ N(0, 0.5²), x/B/C ~ N(0, 1)). Differences are counted bit for bit "
          "on the bf16 outputs; ULP = bf16 ULP.\n",
          "| comparison | outputs | differ | share | max bf16 ULP | max abs difference ÷ max abs ref |", "|---|---|---|---|---|---|"]
    for key, label in (("chunk_scan_vs_ssu_all", "chunk_scan (all 300 tokens) vs SSU token by token (fp32 state), all tokens"),
                       ("chunk_scan_vs_ssu_prefix", "… of it, tokens 0..199"),
                       ("chunk_scan_vs_ssu_decoded", "… of it, tokens 200..299"),
                       ("handoff_vs_chunk_scan_prefix", "hand-off at 200 (fp32 cache) vs all-chunk_scan, tokens 0..199 (chunk_scan of 200 vs of 300 tokens)"),
                       ("handoff_vs_chunk_scan_decoded", "hand-off at 200 (fp32 cache) vs all-chunk_scan, decoded tokens 200..299"),
                       ("handoff_vs_ssu_decoded", "hand-off at 200 (fp32 cache) vs all-SSU, decoded tokens 200..299"),
                       ("handoff_bf16state_vs_chunk_scan_decoded", "hand-off at 200 (bf16 cache) vs all-chunk_scan, decoded tokens"),
                       ("handoff_bf16state_vs_handoff_fp32state_decoded", "hand-off at 200: bf16 cache vs fp32 cache, decoded tokens")):
        c = r[key]
        L_.append(f"| {label} | {c['outputs']} | {c['differ']} | {100 * c['share']:.2f}% | {c['max_ulp']} | "
                  f"{c['max_abs_diff_rel']:.2e} |")
    L_.append("\nThe large max-ULP counts come from outputs near zero whose sign differs: the bf16 ULP distance "
              "across zero counts every bf16 value in between. The chunked path's final states are stored in fp32 "
              "but carry the bf16 rounding of the dt-scaled B in every chunk state (chunk_state), hence "
              "their larger error than SSU's fp32 recurrence.")
    L_.append("\nNormwise error against the float64 recurrence (max|y − ref| / max|ref|; final states the same way):\n")
    L_.append("| run | y | final states |")
    L_.append("|---|---|---|")
    for k in ("chunk_scan", "ssu_fp32state", "handoff_fp32state", "handoff_bf16state"):
        L_.append(f"| {k} | {r['rel_err'][k]:.3e} | {r['rel_err_final'][k]:.3e} |")
    fd = r["final_states_fp32_differ"]
    L_.append(f"\nfp32 final states: chunk_scan vs SSU differ in {fd['chunk_scan_vs_ssu']} of {fd['elements']} "
              f"elements, hand-off vs chunk_scan in {fd['handoff_vs_chunk_scan']}.\n")
    L_.append("Dumps (verify/tests/triton_fixtures/): `example_chunk_scan_T300.npz`, `example_ssu_T300_fp32state.npz`, "
              "`example_handoff_K200_fp32state.npz` (same inputs; metadata as for the fixtures).\n")
    common.write_lines(os.path.join(out_dir, "handoff_example.md"), L_)
    log("\n".join(L_))
    out = []
    for f, (key, pre_) in zip(files, errs):
        _t, meta = common.load_fixture(f[0])
        out.append({"name": os.path.basename(f[0]), "shapes": f[1], "bytes": f[2], "metadata": meta,
                    "prefill": pre_, "rel_err_y": r["rel_err"][key], "rel_err_final": r["rel_err_final"][key]})
    return res, out


def write_readme(out_dir, recs, example_files, env, cmd, kinfo):
    L = ["# Fixtures from mamba_ssm's Triton kernels\n",
         f"Made by `{cmd}` on the device machine: {env['gpu']}, {env['date_utc']}, torch {env['torch']}, "
         f"Triton {env['triton']}, mamba_ssm {env['mamba_ssm_commit']} (exported to `.triton_src/`, "
         "see scripts/triton/README.md). mamba_ssm ran in its deterministic mode (`MAMBA_DETERMINISTIC=1`: "
         "one fixed config per autotuned kernel, listed below).\n",
         "Format: docs/tensor-files.md, packed layout (`x [T,H,P]`, `dt [T,H]`, `A [H]`, `B`/`C [T,G,N]`, "
         "`z [T,H,P]`, `D [H]` or `[H,P]`, `dt_bias [H]`, `initial_states [S,H,P,N]`, `cu_seqlens [S+1]` int64, "
         "`y [T,H,P]`, `final_states [S,H,P,N]`, hand-off: `prefill_tokens [S]` int64); bf16 as int16 bit "
         "patterns, fp16 as `<f2`; `__metadata__`: uint8 bytes of a JSON object of strings (`ssmv.kernel`, "
         "`ssmv.input_format`, `ssmv.state_format`, `ssmv.output_format`, `ssmv.dt_softplus`, `ssmv.dt_limit`, "
         "`ssmv.chunk_size`, `ssmv.chunk_layout`, `ssmv.contract`, `ssmv.decode_contract`, `ssmv.source`). "
         "Data: A = −exp(U[log 1, log 16]) fp32, dt_bias = softplus⁻¹(log-uniform [1e-3, 0.1]) fp32, dt ~ N(0, 0.5²) "
         "in the input type (without softplus: log-uniform [1e-3, 0.1]), x/B/C/z ~ N(0, 1), D ~ N(0, 1) fp32, "
         "initial states ~ N(0, 0.5²) in the state type.\n",
         "Error columns: max|out − ref| / max|ref| against a float64 evaluation of the recurrence "
         "(the sanity check of the dump; bf16 outputs and states are expected near 1e-2).\n",
         "| file | kernel | contract | tokens (per sequence) | H, P, N, G | in / state | chunk | options | err y | err final |",
         "|---|---|---|---|---|---|---|---|---|---|"]
    for r in recs:
        m = r["metadata"]
        contract = m["ssmv.contract"] + (" + " + m["ssmv.decode_contract"] if "ssmv.decode_contract" in m else "")
        chunk = f"{r['chunk']} ({m['ssmv.chunk_layout']})" if r["chunk"] else "—"
        if r["prefill"]:
            chunk += f", prefill {r['prefill']}"
        L.append(f"| `{r['name']}.npz` | {m['ssmv.kernel']} | {contract} | {r['tokens']} ({', '.join(map(str, r['lengths']))}) | "
                 f"{r['H']}, {r['P']}, {r['N']}, {r['G']} | {r['input']} / {r['state']} | {chunk} | "
                 f"{', '.join(r['options'])}; dt_limit {m['ssmv.dt_limit']} | {r['rel_err_y']:.2e} | {r['rel_err_final']:.2e} |")
    for e in example_files:
        m = e["metadata"]
        contract = m["ssmv.contract"] + (" + " + m["ssmv.decode_contract"] if "ssmv.decode_contract" in m else "")
        chunk = f"{m['ssmv.chunk_size']} ({m['ssmv.chunk_layout']})" if "ssmv.chunk_size" in m else "—"
        if e["prefill"]:
            chunk += f", prefill {e['prefill']}"
        L.append(f"| `{e['name']}` | {m['ssmv.kernel']} | {contract} | 600 (300, 300) | 4, 32, 64, 1 | "
                 f"{m['ssmv.input_format']} / {m['ssmv.state_format']} | {chunk} | worked example "
                 f"(docs/measurements/handoff-example.md): D[H], dt_bias, dt_softplus, no initial state; dt_limit "
                 f"{m['ssmv.dt_limit']} | {e['rel_err_y']:.2e} | {e['rel_err_final']:.2e} |")
    L.append("\nNotes:\n")
    L.append("* SSU fixtures: one `selective_state_update` call per token with `dt [batch,H,P]`, `A [H,P,N]` and "
             "`dt_bias`, `D [H,P]` broadcast (stride 0) from the per-head values saved (the `tie_hdim` path); the "
             "state cache in the state type between calls; `initial_states` is the cache content each request "
             "starts from, `final_states` the cache after its last token. `dt_limit` is `-inf,inf`: the decode "
             "kernel applies none. `ssu_bf16in_bf16state_ragged_slots`: requests of 5, 3 and 1 tokens in slots "
             "2, 0, 3 of a 4-slot cache, each call over the requests still running (`state_batch_indices`, no pad "
             "entries). `ssu_bf16in_fp32state_noD_nobias_nosoftplus_T4`: the wrapper raises TypeError for "
             "`D=None`/`dt_bias=None` at this commit, so the kernel was launched exactly as the wrapper does "
             "but with None-safe stride arguments (HAS_D, HAS_DT_BIAS false).")
    L.append("* Batched chunk_scan: `final_states` are fp32 (`_state_passing_fwd` always stores them in fp32), "
             "state format fp32; `initial_states` fp32.")
    L.append("* Varlen chunk_scan: chunks at multiples of the chunk size in the packed token axis (chunk layout "
             "`global`); `final_states` are the `return_varlen_states` states, stored in C's dtype (the input "
             "type): `chunk_state_varlen` forms them from the inter-chunk states, which `_state_passing_fwd` "
             "stores in C's dtype. No `initial_states` (mamba_ssm's varlen path applies `initial_states[0]` to "
             "the first sequence only).")
    L.append("* Hand-off: `prefill_tokens[s]` tokens of sequence s by batched chunk_scan (fp32 final state), the "
             "state cast to the decode cache type, then one SSU call per remaining token; `y` holds both parts, "
             "`final_states` the decode cache at the end. `ssmv.dt_limit` is the chunked part's (default (0, inf)); "
             "SSU applies none, the same after softplus.")
    if kinfo:
        L.append("\nKernel configs and PTX instructions seen (deterministic mode):\n")
        for k, v in kinfo.items():
            L.append(f"* `{k}`: config {v.get('best_config', (v.get('configs') or ['—'])[0])}; "
                     f"{', '.join(v.get('ptx_instructions', []))}")
    common.write_lines(os.path.join(out_dir, "README.md"), L)


def main():
    ap = common.base_parser(__doc__)
    ap.add_argument("--seed", type=int, default=20261201)
    ap.add_argument("--fake", action="store_true", help="float32 torch stand-ins for the kernels (smoke test)")
    ap.add_argument("--autotune", action="store_true", help="keep mamba_ssm's autotuning")
    ap.add_argument("--only", default="", help="comma-separated fixture names (default: all)")
    ap.add_argument("--no-example", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    device = "cpu" if args.fake else "cuda"
    K = Kernels(args.fake, args.mamba_src, args.autotune)
    env = common.environment(args.mamba_src)
    print("environment:", json.dumps(env), flush=True)
    source_base = (f"mamba_ssm {env['mamba_ssm_commit']}, torch {env['torch']}, triton {env['triton']}, "
                   f"{env['gpu']}, {env['date_utc']}" + ("" if args.autotune else ", MAMBA_DETERMINISTIC=1")
                   + (", FAKE float32 stand-in kernels" if args.fake else ""))
    log = lambda s: print(s, flush=True)  # noqa: E731
    recs = []
    t0 = time.time()
    only = set(filter(None, args.only.split(",")))
    for i, (name, kind, q) in enumerate(fixture_specs()):
        if only and name not in only:
            continue
        gen = Gen(args.seed + i, device)
        recs.append(make_one(K, gen, args.out, name, kind, q, source_base, log))
    log(f"fixtures: {time.time() - t0:.1f} s")
    ex_files = []
    example = None
    if not args.no_example:
        example, ex_files = handoff_example(K, Gen(args.seed + 100, device), args.out, source_base, log, env)
    kinfo = K.kernel_info()
    K.ptx_files(args.out)
    cmd = "python3 scripts/triton/make_fixtures.py --out DIR" + (" --autotune" if args.autotune else "")
    write_readme(args.out, recs, ex_files, env, cmd, kinfo)
    with open(os.path.join(args.out, "fixture_list.json"), "w") as fh:
        json.dump({"environment": env, "fixtures": recs, "example": example, "example_files": ex_files,
                   "kernels": kinfo}, fh, indent=1)
    total = sum(r["bytes"] for r in recs) + sum(f["bytes"] for f in ex_files)
    log(f"total {total} bytes in {len(recs) + len(ex_files)} dumps; {time.time() - t0:.1f} s")


if __name__ == "__main__":
    main()
