"""Writes a self-describing SSU decode dump for timing and memory figures of `ssmv check`
(bench/NOTES.md): one sequence of T tokens, H = 8, P = 64, N = 128, G = 1, bf16 inputs
(stored as float32 values that are exact bf16 values), fp32 state and output, softplus,
dt_bias, D and z; y and final_states from the honest float32 NumPy decode of
python/tests/recurrence.py.

usage: /usr/bin/python3 bench/make_decode_dump.py OUT.npz [--tokens T] [--seed S]
"""

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "tests"))
from recurrence import decode_fp32  # noqa: E402

f32 = np.float32


def to_bf16(a):
    """Round float32 values to the nearest bf16 value (ties to even), kept as float32."""
    bits = np.ascontiguousarray(a, dtype=f32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return rounded.view(f32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--tokens", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=2026)
    a = ap.parse_args()
    T, H, P, N, G = a.tokens, 8, 64, 128, 1
    rng = np.random.default_rng(a.seed)
    p = dict(
        x=to_bf16(rng.standard_normal((T, H, P)).astype(f32)),
        dt=to_bf16((rng.standard_normal((T, H)) * 0.5).astype(f32)),
        A=(-np.exp(rng.uniform(0, 2.7, H))).astype(f32),
        B=to_bf16(rng.standard_normal((T, G, N)).astype(f32)),
        C=to_bf16(rng.standard_normal((T, G, N)).astype(f32)),
        z=to_bf16(rng.standard_normal((T, H, P)).astype(f32)),
        D=rng.standard_normal(H).astype(f32),
        dt_bias=rng.uniform(-5, -2, H).astype(f32),
        cu_seqlens=np.array([0, T], np.int64),
    )
    y, final = decode_fp32(**p, dt_softplus=True)
    meta = {"ssmv.kernel": "ssu", "ssmv.input_format": "bf16", "ssmv.state_format": "fp32",
            "ssmv.output_format": "fp32", "ssmv.dt_softplus": "true",
            "ssmv.source": "bench/make_decode_dump.py seed %d" % a.seed}
    np.savez(a.out, **p, y=y, final_states=final,
             __metadata__=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))


if __name__ == "__main__":
    main()
