#!/usr/bin/env python3
"""vLLM's configuration with --mamba-backend flashinfer on the H200: mamba_ssm's Triton
chunk_scan prefills the first K tokens of every sequence, its final state (fp32) is cast to the
cache dtype and FlashInfer's CUDA selective_state_update decodes the rest one token per launch.
Writes one self-describing hand-off dump per cache dtype (docs/tensor-files.md, "The hand-off":
ssmv.kernel handoff, ssmv.contract triton.chunk_scan, ssmv.decode_contract flashinfer.ssu).

The prefill reuses scripts/triton/make_fixtures.py (inputs, mamba_ssm's kernel from .triton_src,
deterministic configs); the decode runs ssu_driver (fi_ssu_nt4) on the decode tokens' inputs
through FI_INPUT_DIR, with the pool's slots holding the prefill's state.

Usage (device): python3 scripts/flashinfer/make_handoff.py --driver .dev-flashinfer/fi_ssu_nt4
                --mamba-src .triton_src --out DIR
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "triton"))
import common  # noqa: E402
import make_fixtures as mf  # noqa: E402

S, L, PREFILL, H, P, N, G, CHUNK = 2, 96, 64, 4, 64, 128, 1, 32


def save_npy(path, t):
    np.save(path, common.np_array(t))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--driver", required=True)
    ap.add_argument("--mamba-src", default=common.DEFAULT_MAMBA_SRC)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--source", default="")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    K = mf.Kernels(False, args.mamba_src, False)
    env = common.environment(args.mamba_src)
    gen = mf.Gen(args.seed, "cuda")
    p = mf.make_problem(gen, S * L, H, P, N, G, torch.bfloat16)
    pre = {k: (mf.batched(v, S, L)[:, :PREFILL].reshape(S * PREFILL, *v.shape[1:])
               if v.dim() >= 2 and v.shape[0] == S * L else v) for k, v in p.items()}
    y_pre, fin = mf.run_chunk_batched(K, pre, S, PREFILL, CHUNK, None, True, mf.DEFAULT_LIMIT)
    dec = {k: (mf.batched(v, S, L)[:, PREFILL:].reshape(S * (L - PREFILL), *v.shape[1:])
               if v.dim() >= 2 and v.shape[0] == S * L else v) for k, v in p.items()}
    for cache, name in ((torch.float32, "fp32"), (torch.bfloat16, "bf16")):
        inp = os.path.join(args.out, f"in_{name}")
        os.makedirs(inp, exist_ok=True)
        for k in ("x", "z", "B", "C"):
            save_npy(os.path.join(inp, k + ".npy"), dec[k])
        save_npy(os.path.join(inp, "dt.npy"), dec["dt"].float())
        for k in ("A", "D", "dt_bias"):
            save_npy(os.path.join(inp, k + ".npy"), p[k].float())
        save_npy(os.path.join(inp, "initial_states.npy"), fin.to(cache))
        raw = os.path.join(args.out, f"raw_{name}")
        # name state input K algo batch H G T seed z sr
        subprocess.run([args.driver, raw, "decode", name, "bf16", "1", "auto", str(S), str(H), str(G),
                        str(L - PREFILL), "1", "1", "0"], check=True, env=dict(os.environ, FI_INPUT_DIR=inp))
        d = os.path.join(raw, "decode")
        y_dec = np.load(os.path.join(d, "y.npy"))  # [S*(L-K), H, P], bf16 bits
        final = np.load(os.path.join(d, "final_states.npy"))
        y = common.np_array(y_pre).reshape(S, PREFILL, H, P)
        y = np.concatenate([y, y_dec.reshape(S, L - PREFILL, H, P).astype(y.dtype)], axis=1).reshape(S * L, H, P)
        meta = mf.metadata("handoff", torch.bfloat16, cache, True, mf.DEFAULT_LIMIT, "triton.chunk_scan",
                           f"mamba_ssm Triton chunk_scan (prefill {PREFILL} tokens, chunk {CHUNK}) + FlashInfer "
                           f"selective_state_update (decode, one token per launch, algorithm auto), "
                           f"{args.source}, mamba_ssm {env['mamba_ssm_commit'][:12]}, torch {env['torch']}, "
                           f"triton {env['triton']}, {env['gpu']}, {env['date_utc']}", chunk=CHUNK, layout="sequence")
        meta["ssmv.decode_contract"] = "flashinfer.ssu"
        t = {k: common.np_array(p[k]) for k in ("x", "dt", "A", "B", "C", "z", "D", "dt_bias")}
        t["cu_seqlens"] = np.arange(0, S * L + 1, L, dtype=np.int64)
        t["y"] = y
        t["final_states"] = final
        t["prefill_tokens"] = np.full(S, PREFILL, dtype=np.int64)
        path = os.path.join(args.out, f"handoff_triton_to_flashinfer_K{PREFILL}_{name}state.npz")
        common.save_fixture(path, t, meta)
        print(path, {k: list(v.shape) for k, v in t.items()}, flush=True)


if __name__ == "__main__":
    main()
