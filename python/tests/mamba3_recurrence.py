"""The Mamba-3 SISO recurrence (docs/mamba3-semantics.md §3) in float64 NumPy, token by token, and
tiny random problems for it: the honest outputs of mamba_ssm's step kernel (kernel mamba3_step)
without a GPU. The float64 values are far closer to the exact ones than the kernel's rounding
points, so y rounded once to bf16 and the state parts rounded once to fp32 are within either
Mamba-3 step contract.

    λ = σ(trap), α = exp(adt), β = (1 − λ)·dt·α, γ = λ·dt
    θ[r] += π·tanh(angles[r])·dt                          (returned reduced to [0, 2π))
    b = Rot(θ)(B + B_bias), c = Rot(θ)(C + C_bias)        pairs (2r, 2r+1), r < R
    S = α·S + β·(x_prev ⊗ b_prev) + γ·(x ⊗ b)             S[p, n]
    y = c·S + D·x, then y·z·σ(z)
"""

import math

import numpy as np

import ssmv

f32 = np.float32


def _sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def _rotate(u, theta):
    """u [N] with its pairs (2r, 2r+1), r < len(theta), turned by theta[r]."""
    u = u.copy()
    R = len(theta)
    u0, u1 = u[0:2 * R:2].copy(), u[1:2 * R:2].copy()
    c, s = np.cos(theta), np.sin(theta)
    u[0:2 * R:2], u[1:2 * R:2] = u0 * c - u1 * s, u0 * s + u1 * c
    return u


def step_float64(x, B, C, dt, adt, trap, angles, B_bias, C_bias, D=None, z=None, cu_seqlens=None,
                 initial_angle_state=None, initial_states=None, initial_B_prev=None, initial_x_prev=None):
    """y [T, H, P] and the final four-part state (angle [S, H, R] reduced to [0, 2π), S [S, H, P, N],
    B_prev [S, H, N], x_prev [S, H, P]), all float64. The tensors: NumPy arrays of the values the
    kernel gets (np.asarray of an ssmv.bf16 array gives its values)."""
    x, B, C, dt, adt, trap, angles = (np.asarray(a, np.float64) for a in (x, B, C, dt, adt, trap, angles))
    B_bias, C_bias = np.asarray(B_bias, np.float64), np.asarray(C_bias, np.float64)
    T, H, P = x.shape
    G, N = B.shape[1:]
    R = angles.shape[2]
    cu = [0, T] if cu_seqlens is None else [int(v) for v in cu_seqlens]
    S = len(cu) - 1
    y = np.zeros((T, H, P))
    final = dict(angle=np.zeros((S, H, R)), S=np.zeros((S, H, P, N)), B_prev=np.zeros((S, H, N)),
                 x_prev=np.zeros((S, H, P)))
    for s in range(S):
        for h in range(H):
            g = h // (H // G)
            if initial_states is None:
                theta, st, b_prev, x_prev = np.zeros(R), np.zeros((P, N)), np.zeros(N), np.zeros(P)
            else:
                theta = np.asarray(initial_angle_state, np.float64)[s, h].copy()
                st = np.asarray(initial_states, np.float64)[s, h].copy()
                b_prev = np.asarray(initial_B_prev, np.float64)[s, h].copy()
                x_prev = np.asarray(initial_x_prev, np.float64)[s, h].copy()
            for t in range(cu[s], cu[s + 1]):
                lam = _sigmoid(trap[t, h])
                alpha = math.exp(adt[t, h])
                beta = (1.0 - lam) * dt[t, h] * alpha
                gamma = lam * dt[t, h]
                theta = theta + math.pi * np.tanh(angles[t, h]) * dt[t, h]
                b = _rotate(B[t, g] + B_bias[h], theta)
                c = _rotate(C[t, g] + C_bias[h], theta)
                st = alpha * st + beta * np.outer(x_prev, b_prev) + gamma * np.outer(x[t, h], b)
                yt = st @ c
                if D is not None:
                    yt = yt + float(np.asarray(D, np.float64)[h]) * x[t, h]
                if z is not None:
                    zt = np.asarray(z, np.float64)[t, h]
                    yt = yt * zt * _sigmoid(zt)
                y[t, h] = yt
                b_prev, x_prev = b, x[t, h]
            final["angle"][s, h] = np.mod(theta, 2 * math.pi)
            final["S"][s, h], final["B_prev"][s, h], final["x_prev"][s, h] = st, b_prev, x_prev
    return y, final


def random_problem(seed=3, seqlens=(3, 2), H=2, G=1, P=4, N=4, R=2, D=True, z=True, initial=True,
                   bf16_angles=True):
    """A Mamba-3 problem as check_mamba3() takes it: x, B, C, z, trap bf16 (ssmv.bf16), dt, adt,
    biases, D fp32, angles bf16 or fp32; drawn as upstream's test draws them (dt log-uniform in
    [1e-3, 0.1], adt = −a·dt with a in [1, 16]); an initial four-part state in fp32."""
    rng = np.random.default_rng(seed)
    T, S = sum(seqlens), len(seqlens)
    dt = np.exp(rng.uniform(math.log(1e-3), math.log(0.1), (T, H))).astype(f32)
    angles = rng.standard_normal((T, H, R)) * 2
    p = dict(
        x=ssmv.bf16(rng.standard_normal((T, H, P))),
        B=ssmv.bf16(rng.standard_normal((T, G, N))),
        C=ssmv.bf16(rng.standard_normal((T, G, N))),
        dt=dt,
        adt=(-rng.uniform(1, 16, (T, H)) * dt).astype(f32),
        trap=ssmv.bf16(rng.standard_normal((T, H))),
        angles=ssmv.bf16(angles) if bf16_angles else angles.astype(f32),
        B_bias=rng.standard_normal((H, N)).astype(f32),
        C_bias=rng.standard_normal((H, N)).astype(f32),
        cu_seqlens=np.concatenate([[0], np.cumsum(seqlens)]).astype(np.int64),
    )
    if D:
        p["D"] = rng.standard_normal(H).astype(f32)
    if z:
        p["z"] = ssmv.bf16(rng.standard_normal((T, H, P)))
    if initial:
        p["initial_angle_state"] = rng.uniform(0, 2 * math.pi, (S, H, R)).astype(f32)
        p["initial_states"] = (rng.standard_normal((S, H, P, N)) * 0.5).astype(f32)
        p["initial_B_prev"] = (rng.standard_normal((S, H, N)) * 0.5).astype(f32)
        p["initial_x_prev"] = np.asarray(ssmv.bf16(rng.standard_normal((S, H, P))))  # V state: bf16 values in fp32
    return p


def honest_case(seed=3, **kw):
    """A problem and its honest outputs: check_mamba3()'s keyword arguments (y bf16, every final
    state part fp32)."""
    p = random_problem(seed, **kw)
    values = {k: np.asarray(v) for k, v in p.items()}
    y, final = step_float64(**values)
    return dict(p, y=ssmv.bf16(y), final_angle_state=final["angle"].astype(f32), final_states=final["S"].astype(f32),
                final_B_prev=final["B_prev"].astype(f32), final_x_prev=final["x_prev"].astype(f32))
