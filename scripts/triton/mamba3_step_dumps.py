#!/usr/bin/env python3
"""Dumps of mamba_ssm's Mamba-3 SISO decode step kernel, for `ssmv check` (kernel mamba3_step).

Runs mamba_ssm's Triton `mamba3_siso_step` (mamba_ssm/ops/triton/mamba3/mamba3_siso_step.py)
token by token over S sequences of T decode tokens — one launch per token, every sequence one
row of the launch's batch, the four-part state (angle, SSM state, K state, V state) each launch
returns fed to the next — and saves one .npz per case with ssmv's Mamba-3 tensor names
(verify/family/mamba3/dump_reading.h, docs/tensor-files.md "Mamba-3 dumps"): the tokens packed
by sequence (x[s·T + t] is V of launch t, row s) with cu_seqlens, bf16 as int16 bit patterns,
plus __metadata__ (ssmv.kernel = mamba3_step, the formats, ssmv.source).

Inputs are drawn as upstream's test draws them (tests/ops/triton/test_mamba3_siso.py,
create_mamba3_siso_inputs): Q, K, V, Z, Trap, Angles bf16 N(0, 1); DT log-uniform in
[1e-3, 0.1]; ADT = −a·DT with a uniform in [1, 16]; Q_bias, K_bias, D fp32 N(0, 1). An initial
four-part state, when a case has one: angle uniform in [0, 2π) (fp32), SSM and K state fp32
N(0, 1)·0.5, V state bf16 N(0, 1) (ssmv reads it in the state format, fp32, which holds it).
Without one, zeros go to the kernel and the dump has no initial_* tensors (ssmv's zero start).

Run on the device machine (torch 2.11, Triton 3.6; mamba_ssm's source in .triton_src, see
scripts/triton/README.md):
  run(command="python3 scripts/triton/mamba3_step_dumps.py --out $OUT", carry=[".triton_src"])
Local smoke test of everything but the kernel (a float32 torch stand-in of the step):
  /usr/bin/python3 scripts/triton/mamba3_step_dumps.py --fake --out "$(mktemp -d)"
"""

import argparse
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

# name: sequences S, decode tokens per sequence T, heads H, B/C heads G, head dim P, state dim N,
# rotary angles R (even, <= N/2, as the kernel asserts), D, z, an initial four-part state.
CASES = {
    "mamba3_step_S2_T8_H4_P64_N64_R16_D_z_init": dict(S=2, T=8, H=4, G=2, P=64, N=64, R=16, D=True, z=True,
                                                      initial=True, seed=1),
    "mamba3_step_S2_T8_H4_P64_N64_R16_plain": dict(S=2, T=8, H=4, G=2, P=64, N=64, R=16, D=False, z=False,
                                                   initial=False, seed=2),
    "mamba3_step_S1_T64_H2_P64_N128_R32_D_z_init": dict(S=1, T=64, H=2, G=1, P=64, N=128, R=32, D=True, z=True,
                                                        initial=True, seed=3),
}


def draw(case, device):
    """The case's inputs: per-launch tensors [T, S, ...] and the per-head ones."""
    g = torch.Generator(device="cpu").manual_seed(case["seed"])
    S, T, H, G, P, N, R = (case[k] for k in ("S", "T", "H", "G", "P", "N", "R"))

    def normal(*shape, dtype=torch.bfloat16, scale=1.0):
        return (torch.randn(*shape, generator=g) * scale).to(dtype)

    dt = torch.exp(math.log(1e-3) + torch.rand(T, S, H, generator=g) * (math.log(0.1) - math.log(1e-3)))
    x = dict(
        Q=normal(T, S, G, N), K=normal(T, S, G, N), V=normal(T, S, H, P),
        DT=dt.float(), ADT=(-(1.0 + 15.0 * torch.rand(T, S, H, generator=g)) * dt).float(),
        Trap=normal(T, S, H), Angles=normal(T, S, H, R),
        Q_bias=normal(H, N, dtype=torch.float32), K_bias=normal(H, N, dtype=torch.float32),
        D=normal(H, dtype=torch.float32) if case["D"] else None,
        Z=normal(T, S, H, P) if case["z"] else None)
    if case["initial"]:
        init = (torch.rand(S, H, R, generator=g) * (2 * math.pi)).float(), normal(S, H, P, N, dtype=torch.float32, scale=0.5), \
            normal(S, H, N, dtype=torch.float32, scale=0.5), normal(S, H, P)
    else:
        init = (torch.zeros(S, H, R), torch.zeros(S, H, P, N), torch.zeros(S, H, N), torch.zeros(S, H, P, dtype=torch.bfloat16))
    x = {k: (v.to(device) if v is not None else None) for k, v in x.items()}
    return x, tuple(t.to(device) for t in init)


def fake_step(Q, K, V, ADT, DT, Trap, Q_bias, K_bias, Angles, D=None, Z=None, Input_States=None):
    """A float32 stand-in of mamba3_siso_step with its signature and outputs (smoke test only:
    the semantics of docs/mamba3-semantics.md in torch, not the kernel's rounding)."""
    angle, ssm, k_prev, v_prev = Input_States
    Bt, G, N = Q.shape
    H = V.shape[1]
    R = Angles.shape[-1]
    rep = H // G
    q = Q.float().repeat_interleave(rep, dim=1) + Q_bias
    k = K.float().repeat_interleave(rep, dim=1) + K_bias
    theta = angle + torch.tanh(Angles.float()) * math.pi * DT[..., None]
    theta = theta - 2 * math.pi * torch.floor(theta / (2 * math.pi))

    def rot(u):
        u = u.clone()
        c, s = torch.cos(theta), torch.sin(theta)
        u0, u1 = u[..., 0:2 * R:2].clone(), u[..., 1:2 * R:2].clone()
        u[..., 0:2 * R:2], u[..., 1:2 * R:2] = u0 * c - u1 * s, u0 * s + u1 * c
        return u

    q, k = rot(q), rot(k)
    lam = torch.sigmoid(Trap.float())
    alpha = torch.exp(ADT)
    beta, gamma = alpha * DT * (1 - lam), lam * DT
    ssm = ssm * alpha[..., None, None] + (beta[..., None] * v_prev.float())[..., None] * k_prev[..., None, :] + \
        (gamma[..., None] * V.float())[..., None] * k[..., None, :]
    out = torch.einsum("bhpn,bhn->bhp", ssm, q)
    if D is not None:
        out = out + D[:, None] * V.float()
    if Z is not None:
        out = out * Z.float() * torch.sigmoid(Z.float())
    return out.to(V.dtype), [theta, ssm, k, V]


def run_case(step, case, device):
    x, state = draw(case, device)
    initial = state
    ys = []
    for t in range(case["T"]):
        out, state = step(x["Q"][t], x["K"][t], x["V"][t], x["ADT"][t], x["DT"][t], x["Trap"][t], x["Q_bias"],
                          x["K_bias"], x["Angles"][t], D=x["D"], Z=x["Z"][t] if x["Z"] is not None else None,
                          Input_States=tuple(state))
        ys.append(out)
    S, T = case["S"], case["T"]

    def packed(v):  # [T, S, ...] -> [S·T, ...], sequence-major
        return v.transpose(0, 1).reshape(S * T, *v.shape[2:])

    a = common.np_array
    tensors = dict(x=a(packed(x["V"])), B=a(packed(x["K"])), C=a(packed(x["Q"])), dt=a(packed(x["DT"])),
                   adt=a(packed(x["ADT"])), trap=a(packed(x["Trap"])), angles=a(packed(x["Angles"])),
                   B_bias=a(x["K_bias"]), C_bias=a(x["Q_bias"]),
                   cu_seqlens=np.arange(0, S * T + 1, T, dtype=np.int64), y=a(packed(torch.stack(ys))))
    if x["D"] is not None:
        tensors["D"] = a(x["D"])
    if x["Z"] is not None:
        tensors["z"] = a(packed(x["Z"]))
    if case["initial"]:
        tensors.update(initial_angle_state=a(initial[0]), initial_states=a(initial[1]), initial_B_prev=a(initial[2]),
                       initial_x_prev=a(initial[3].float()))
    tensors.update(final_angle_state=a(state[0]), final_states=a(state[1]), final_B_prev=a(state[2]),
                   final_x_prev=a(state[3].float()))
    return tensors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="folder for the .npz dumps")
    ap.add_argument("--src", default=common.DEFAULT_MAMBA_SRC, help="mamba_ssm's exported source")
    ap.add_argument("--fake", action="store_true", help="a float32 torch stand-in of the kernel, no GPU")
    args = ap.parse_args()
    if args.fake:
        step, device = fake_step, "cpu"
    else:
        step = common.load_mamba_triton(args.src, modules=("mamba3.mamba3_siso_step",))[
            "mamba3.mamba3_siso_step"].mamba3_siso_step
        device = "cuda"
    env = common.environment(args.src)
    print("environment:", common.env_line(env))
    os.makedirs(args.out, exist_ok=True)
    for name, case in CASES.items():
        tensors = run_case(step, case, device)
        meta = {"ssmv.kernel": "mamba3_step", "ssmv.input_format": "bf16", "ssmv.state_format": "fp32",
                "ssmv.output_format": "bf16",
                "ssmv.source": ("float32 torch stand-in (smoke test)" if args.fake else "mamba_ssm mamba3_siso_step") +
                f" | {common.env_line(env)}"}
        path = os.path.join(args.out, name + ".npz")
        common.save_fixture(path, tensors, meta)
        print(f"{name}: {len(tensors)} tensors -> {path}")


if __name__ == "__main__":
    main()
