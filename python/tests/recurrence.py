"""A tiny float32 NumPy implementation of the Mamba2 recurrence, token by token (what a
decode kernel with an fp32 state computes; spec/problem.h has the semantics), and random
problems for it. Honest fp32 arithmetic: within the `ssu` contract with an fp32 state."""

import numpy as np

f32 = np.float32


def decode_fp32(x, dt, A, B, C, cu_seqlens, D=None, z=None, dt_bias=None, initial_states=None,
                dt_softplus=False, dt_limit=None):
    T, H, P = x.shape
    G, N = B.shape[1:]
    S = len(cu_seqlens) - 1
    g = np.arange(H) // (H // G)
    y = np.zeros((T, H, P), f32)
    final = np.zeros((S, H, P, N), f32)
    for s in range(S):
        st = np.zeros((H, P, N), f32) if initial_states is None else initial_states[s].astype(f32)
        for t in range(cu_seqlens[s], cu_seqlens[s + 1]):
            d = dt[t].astype(f32)
            if dt_bias is not None:
                d = d + dt_bias
            if dt_softplus:
                d = np.where(d > f32(20), d, np.log1p(np.exp(d))).astype(f32)
            if dt_limit is not None:
                d = np.clip(d, f32(dt_limit[0]), f32(dt_limit[1])).astype(f32)
            decay = np.exp(d * A).astype(f32)                          # [H]
            dB = (d[:, None] * B[t][g]).astype(f32)                     # [H, N]
            st = (st * decay[:, None, None] + dB[:, None, :] * x[t][:, :, None]).astype(f32)
            yt = np.einsum("hpn,hn->hp", st, C[t][g]).astype(f32)
            if D is not None:
                yt = yt + (D[:, None] if D.ndim == 1 else D) * x[t]
            if z is not None:
                yt = yt * (z[t] / (f32(1) + np.exp(-z[t]))).astype(f32)
            y[t] = yt
        final[s] = st
    return y, final


def random_problem(seed=1, seqlens=(5, 3), H=2, P=4, N=16, G=1, z=True, D=True, initial_states=True):
    rng = np.random.default_rng(seed)
    T = sum(seqlens)
    p = dict(
        x=rng.standard_normal((T, H, P)).astype(f32),
        dt=(rng.standard_normal((T, H)) * 0.5).astype(f32),
        A=(-np.exp(rng.uniform(0, 2.7, H))).astype(f32),
        B=rng.standard_normal((T, G, N)).astype(f32),
        C=rng.standard_normal((T, G, N)).astype(f32),
        dt_bias=rng.uniform(-5, -2, H).astype(f32),
        cu_seqlens=np.concatenate([[0], np.cumsum(seqlens)]).astype(np.int64),
    )
    if z:
        p["z"] = rng.standard_normal((T, H, P)).astype(f32)
    if D:
        p["D"] = rng.standard_normal(H).astype(f32)
    if initial_states:
        p["initial_states"] = (rng.standard_normal((len(seqlens), H, P, N)) * 0.5).astype(f32)
    return p


def honest_case(seed=1, **kw):
    """A problem and an honest fp32 decode of it: check()'s keyword arguments."""
    p = random_problem(seed, **kw)
    y, final = decode_fp32(**p, dt_softplus=True)
    return dict(p, y=y, final_states=final, dt_softplus=True, kernel="ssu")
