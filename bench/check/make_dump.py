"""A production-shaped dump for timing `ssmv check` on a machine without a GPU (the bound
benchmarks of bench/NOTES.md): realistic random inputs, one sequence, packed layout, and
outputs computed by this script's float64 recurrence rounded to the dump's formats
(docs/tensor-files.md; self-describing metadata, so `ssmv check FILE` needs no flags).

  /usr/bin/python3 bench/check/make_dump.py --kernel chunk_scan --tokens 2048 --heads 8 \
      --out "$dir/cs_T2048.npz"             # dir=$(mktemp -d)
  /usr/bin/time -v build/release/verify/cli/ssmv check "$dir/cs_T2048.npz" --threads 1

bf16 inputs and output, fp32 states, D per head, dt_bias, softplus, no z; chunk_scan:
chunk 256, contract chunk_scan.production; ssu: contract ssu. Only the shapes and the data's
distribution matter for the timing; the outputs are close to the exact values (float64
recurrence, then rounded to nearest even), so the verdict is WITHIN_CONTRACT.
"""

import argparse
import json

import numpy as np


def bf16_bits(v):
    """float64 -> bf16 bit patterns (int16), round to nearest even through fp32."""
    f = np.ascontiguousarray(v, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = (f + 0x7FFF + ((f >> 16) & 1)) >> 16
    return r.astype(np.uint16).view(np.int16)


def bf16_value(bits):
    return (bits.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernel", choices=["chunk_scan", "ssu"], required=True)
    ap.add_argument("--tokens", type=int, default=2048)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--P", type=int, default=64)
    ap.add_argument("--N", type=int, default=128)
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    T, H, P, N, G = a.tokens, a.heads, a.P, a.N, 1
    rng = np.random.default_rng(a.seed)
    x = bf16_bits(rng.standard_normal((T, H, P)))
    dt = bf16_bits(0.5 * rng.standard_normal((T, H)))
    B = bf16_bits(rng.standard_normal((T, G, N)))
    C = bf16_bits(rng.standard_normal((T, G, N)))
    A = -np.exp(rng.uniform(np.log(1.0), np.log(16.0), H)).astype(np.float32)
    D = rng.standard_normal(H).astype(np.float32)
    dt_bias = np.log(np.expm1(np.exp(rng.uniform(np.log(1e-3), np.log(1e-1), H)))).astype(np.float32)

    xv, Bv, Cv = bf16_value(x), bf16_value(B)[:, 0, :], bf16_value(C)[:, 0, :]
    v = bf16_value(dt) + dt_bias.astype(np.float64)
    delta = np.log1p(np.exp(v))  # softplus, dt_limit (0, inf)
    decay = np.exp(delta * A.astype(np.float64))
    S = np.zeros((H, P, N))
    y = np.empty((T, H, P))
    for t in range(T):
        S = decay[t][:, None, None] * S + (delta[t][:, None, None] * Bv[t][None, None, :]) * xv[t][:, :, None]
        y[t] = S @ Cv[t] + D.astype(np.float64)[:, None] * xv[t]

    tensors = {"x": x, "dt": dt, "A": A, "B": B, "C": C, "D": D, "dt_bias": dt_bias,
               "cu_seqlens": np.array([0, T], dtype=np.int64), "y": bf16_bits(y),
               "final_states": S[None].astype(np.float32)}
    meta = {"ssmv.kernel": a.kernel, "ssmv.input_format": "bf16", "ssmv.state_format": "fp32",
            "ssmv.output_format": "bf16", "ssmv.dt_softplus": "true", "ssmv.dt_limit": "0x0.0p+0,inf",
            "ssmv.contract": "chunk_scan.production" if a.kernel == "chunk_scan" else "ssu",
            "ssmv.source": f"bench/check/make_dump.py --tokens {T} --heads {H} --seed {a.seed}"}
    if a.kernel == "chunk_scan":
        meta["ssmv.chunk_size"] = "256"
        meta["ssmv.chunk_layout"] = "sequence"
    tensors["__metadata__"] = np.frombuffer(json.dumps(meta, sort_keys=True).encode("utf-8"), dtype=np.uint8).copy()
    np.savez(a.out, **tensors)


if __name__ == "__main__":
    main()
