#!/usr/bin/env python3
"""mamba_ssm's Triton selective_state_update on the problem of a FlashInfer dump, for
`ssmv compare` of the two decode kernels (docs/real-kernels.md, FlashInfer section).

Reads a dump written by pack_dumps.py (packed layout, equal sequence lengths, one token per
launch or K per launch: Triton's kernel always runs one token per launch), runs mamba_ssm's
selective_state_update token by token from the dump's initial states kept in the dump's state
dtype (scripts/triton/make_fixtures.py run_ssu; kernels imported from --mamba-src as
scripts/triton/README.md says), and writes a dump of the same problem — every input tensor
copied bit for bit — with Triton's y and final states, ssmv.contract triton.ssu and
ssmv.tokens_per_launch 1.

Usage (device): python3 scripts/flashinfer/triton_same_problem.py FI.npz OUT.npz --mamba-src DIR
Smoke test without a GPU: --fake (make_fixtures.py's float32 stand-in for the kernel, on the CPU).
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "triton"))
import common  # noqa: E402
import make_fixtures as mf  # noqa: E402

DTYPE = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def to_torch(a, fmt, dev):
    """A dump's array as a tensor of the format's dtype on dev (bf16 arrives as 16-bit patterns)."""
    if fmt == "bf16" and a.dtype != np.float32:
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16).to(dev)
    return torch.from_numpy(np.ascontiguousarray(a)).to(dev).to(DTYPE[fmt])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dump")
    ap.add_argument("out")
    ap.add_argument("--mamba-src", default=common.DEFAULT_MAMBA_SRC)
    ap.add_argument("--fake", action="store_true", help="a float32 stand-in kernel on the CPU (smoke test)")
    args = ap.parse_args()
    dev = "cpu" if args.fake else "cuda"
    tensors, meta = common.load_fixture(args.dump)
    fin, fst = meta["ssmv.input_format"], meta["ssmv.state_format"]
    if fst not in ("fp32", "bf16", "fp16"):
        raise SystemExit(f"{args.dump}: state format {fst}: mamba_ssm's kernel stores fp32, bf16 or fp16 states")
    cu = tensors["cu_seqlens"].astype(np.int64)
    lengths = np.diff(cu).tolist()
    K = mf.Kernels(args.fake, args.mamba_src, False)
    env = common.environment(args.mamba_src)
    p = {k: to_torch(tensors[k], fin, dev) for k in ("x", "B", "C", "z", "dt") if k in tensors}
    for k in ("A", "D", "dt_bias"):
        p[k] = to_torch(tensors[k], "fp32", dev)
    init = to_torch(tensors["initial_states"], fst, dev)
    y, final = mf.run_ssu(K, p, lengths, init, DTYPE[fst], meta["ssmv.dt_softplus"] == "true")
    if not args.fake:
        torch.cuda.synchronize()
    out = {k: v for k, v in tensors.items() if k not in ("y", "final_states")}
    out["y"] = common.np_array(y)
    out["final_states"] = common.np_array(final)
    m = dict(meta)
    m["ssmv.contract"] = "triton.ssu"
    m["ssmv.tokens_per_launch"] = "1"
    m["ssmv.source"] = (("FAKE (float32 stand-in) " if args.fake else "") + f"mamba_ssm Triton selective_state_update, one token per launch, on the problem of "
                        f"{os.path.basename(args.dump)}; mamba_ssm {env['mamba_ssm_commit'][:12]}, torch {env['torch']}, "
                        f"triton {env['triton']}, {env['gpu']}, {env['date_utc']}")
    common.save_fixture(args.out, out, m)
    print(args.out, json.dumps({k: list(v.shape) for k, v in out.items()}), flush=True)


if __name__ == "__main__":
    main()
