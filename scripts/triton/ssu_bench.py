"""mamba_ssm's Triton selective_state_update timed as bench/ssu/ssu_bench times ssmv's SSU kernel.

For issue 19's same-run comparison (bench/NOTES.md): H = 32, P = 64, N = 128, G = 1; bf16 x, dt,
B, C, z; A, D, dt_bias fp32; softplus, D per head, z gate; state fp32 and bf16 in a pool indexed by
state_batch_indices; batch 64 and 256; one token per request (this kernel takes one token per
call: x is (batch, nheads, dim), so it has no multi-token rows). Time: common.flushed_median_us,
median of --iterations (the warm-ups also compile and autotune).

Run on the device machine from the repository root: python3 scripts/triton/ssu_bench.py
(carry .triton_src, scripts/triton/README.md).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402



def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=200)
    args = parser.parse_args()
    import torch

    ssu = common.load_mamba_triton(modules=("selective_state_update",))["selective_state_update"]
    dev = torch.device("cuda")
    H, P, N, G = 32, 64, 128, 1
    print(f"mamba_ssm {common.mamba_commit()} Triton selective_state_update, H {H}, P {P}, N {N}, G {G}, bf16 "
          f"inputs; median of {args.iterations}, L2 flushed")
    print(f"{'state':6s} {'batch':>6s} {'tokens':>6s} {'us':>10s}")
    for state_dtype, name in ((torch.float32, "fp32"), (torch.bfloat16, "bf16")):
        for batch in (64, 256):
            g = torch.Generator(device=dev).manual_seed(7)

            def randn(*shape, dtype=torch.bfloat16, scale=1.0):
                return (scale * torch.randn(*shape, generator=g, device=dev)).to(dtype)

            state = randn(batch, H, P, N, dtype=state_dtype, scale=0.5)
            x, z = randn(batch, H, P), randn(batch, H, P)
            dt = randn(batch, H, P)  # dt is broadcast over dim in mamba_ssm's decode (tie_hdim)
            dt = dt[:, :, :1].expand(batch, H, P)
            B, C = randn(batch, G, N), randn(batch, G, N)
            A = -torch.rand(H, generator=g, device=dev).add(1.0)
            A = A[:, None, None].expand(H, P, N)
            D = randn(H, dtype=torch.float32)[:, None].expand(H, P)
            dt_bias = randn(H, dtype=torch.float32, scale=0.1)[:, None].expand(H, P)
            slots = torch.arange(batch, dtype=torch.int32, device=dev)

            def call():
                ssu.selective_state_update(state, x, dt, A, B, C, D=D, z=z, dt_bias=dt_bias, dt_softplus=True,
                                           state_batch_indices=slots)

            print(f"{name:6s} {batch:6d} {1:6d} {common.flushed_median_us(call, args.iterations):10.2f}", flush=True)


if __name__ == "__main__":
    main()
