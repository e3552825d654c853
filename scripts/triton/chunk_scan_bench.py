"""mamba_ssm's Triton mamba_chunk_scan_combined timed beside bench/chunk_scan/chunk_scan_bench.

The problem of chunk_scan_bench's "1 x 8192 tokens" row: one sequence of --tokens (8192), H = 32,
P = 64, N = 128, G = 1, chunk 256; bf16 x, dt, B, C; A, dt_bias, D per head fp32; softplus; no
z; no initial state; final states returned (fp32). Values drawn as spec/realistic_problem.h
draws them (A = -exp(U[0, ln 16]), dt_bias = softplus^-1 of a δ0 log-uniform in [1e-3, 0.1],
dt ~ N(0, 0.5²), D ~ 1 + N(0, 0.1²), x, B, C ~ N(0, 1)), from torch's generator, not ssmv's.
What differs, as the Triton API has it: the batched layout (batch 1, no cu_seqlens), where ssmv
takes cu_seqlens; dt_limit mamba_ssm's default (0, inf), a no-op for δ > 0, where ssmv has none;
the inter-chunk states in C's dtype (bf16, mamba_ssm's default state_dtype), where ssmv's stage
(e) reads them rounded to the input format too; the call is the autograd function's forward
(five kernels and their allocations; no host synchronisation), autotuned as mamba_ssm runs it
(MAMBA_DETERMINISTIC unset: the warm-ups compile and autotune).

Time: common.flushed_median_us, median of --iterations (default 200), the L2 flushed before each;
its GPU-side sleep before each call made ~1 ms here (sleep_cycles), so that all five launches
are queued before the start event and Python's launch time stays out of the timing.
Output: a "device NAME, N SMs" line, a header naming mamba_ssm's commit and the shape, then
`kernel tokens us` rows (bench/latest.py reads them as triton_chunk_scan_1x8192_us).

Run on the device machine from the repository root: python3 scripts/triton/chunk_scan_bench.py
(carry .triton_src, scripts/triton/README.md).
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--tokens", type=int, default=8192)
    args = parser.parse_args()
    import torch

    ssd = common.load_mamba_triton(modules=("ssd_combined",))["ssd_combined"]
    dev = torch.device("cuda")
    T, H, P, N, G, L = args.tokens, 32, 64, 128, 1, 256
    g = torch.Generator(device=dev).manual_seed(2026)

    def rand(*shape):
        return torch.rand(*shape, generator=g, device=dev)

    def randn(*shape, dtype=torch.bfloat16, mean=0.0, scale=1.0):
        return (mean + scale * torch.randn(*shape, generator=g, device=dev)).to(dtype)

    A = -torch.exp(rand(H) * math.log(16.0))
    delta0 = torch.exp(math.log(1e-3) + rand(H) * (math.log(0.1) - math.log(1e-3)))
    dt_bias = delta0 + torch.log(-torch.expm1(-delta0))  # softplus^-1(δ0)
    D = randn(H, dtype=torch.float32, mean=1.0, scale=0.1)
    dt = randn(1, T, H, scale=0.5)
    x, B, C = randn(1, T, H, P), randn(1, T, G, N), randn(1, T, G, N)

    def call():
        return ssd.mamba_chunk_scan_combined(x, dt, A, B, C, L, D=D, dt_bias=dt_bias, dt_softplus=True,
                                             return_final_states=True)

    prop = torch.cuda.get_device_properties(0)
    print(f"device {prop.name}, {prop.multi_processor_count} SMs")
    print(f"mamba_ssm {common.mamba_commit()} Triton mamba_chunk_scan_combined, 1 x {T} tokens, H {H}, P {P}, "
          f"N {N}, G {G}, chunk {L}, bf16 x dt B C, D, dt_bias, softplus, no z, fp32 final states; median of "
          f"{args.iterations}, L2 flushed")
    print(f"{'kernel':10s} {'tokens':>6s} {'us':>10s}")
    with torch.no_grad():
        # ~1 ms at 1.98 GHz: longer than the five Python launches take
        us = common.flushed_median_us(call, args.iterations, sleep_cycles=2_000_000)
    print(f"{'mamba_ssm':10s} {T:6d} {us:10.2f}", flush=True)


if __name__ == "__main__":
    main()
