"""vLLM's Triton selective_state_update timed as bench/ssu/ssu_bench times ssmv's SSU kernel.

vLLM's copy of the kernel takes several tokens per request (cu_seqlens: its speculative-decoding
path), which mamba_ssm's does not, so it is the Triton kernel for issue 19's multi-token rows
(bench/NOTES.md). Shapes as ssu_bench: H = 32, P = 64, N = 128, G = 1; bf16 x, dt, B, C, z; A, D,
dt_bias fp32 (broadcast over P and N, vLLM's tie_hdim case); softplus, D per head, z gate; state
fp32 and bf16 in a pool (slot 0 is vLLM's null block, so requests use slots 1..batch); batch 64
and 256; 1, 2, 4 and 8 tokens per request in one call (2 and more through cu_seqlens; the final
state stored, no per-token states). Time: common.flushed_median_us, median of --iterations.

vLLM is not installed on the device machine: the two files the kernel needs,
model_executor/layers/mamba/ops/{mamba_ssm,triton_helpers}.py, are exported into --src (a
git-ignored folder, carried by the device call; scripts/triton/README.md) and imported under
their own module names, with the few vllm names they import defined here (HAS_TRITON, triton, tl;
NULL_BLOCK_ID = 0 and PAD_SLOT_ID = -1 as vllm/v1/attention/backends/utils.py defines them; an
empty _custom_ops, which the decode kernel does not use).
"""
import argparse
import importlib.util
import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


def module(name, **attrs):
    m = types.ModuleType(name)
    m.__path__ = []
    m.__dict__.update(attrs)
    sys.modules[name] = m
    parent, _, child = name.rpartition(".")
    if parent in sys.modules:
        setattr(sys.modules[parent], child, m)
    return m


def load_vllm_ssu(src):
    import triton
    import triton.language as tl

    for name in ("vllm", "vllm.v1", "vllm.v1.attention", "vllm.v1.attention.backends", "vllm.model_executor",
                 "vllm.model_executor.layers", "vllm.model_executor.layers.mamba",
                 "vllm.model_executor.layers.mamba.ops"):
        module(name)
    module("vllm._custom_ops")
    module("vllm.triton_utils", HAS_TRITON=True, triton=triton, tl=tl)
    module("vllm.v1.attention.backends.utils", PAD_SLOT_ID=-1, NULL_BLOCK_ID=0)
    loaded = None
    for stem in ("triton_helpers", "mamba_ssm"):
        path = os.path.join(src, stem + ".py")
        if not os.path.exists(path):
            raise SystemExit(f"{path} not found (scripts/triton/README.md: the vLLM export)")
        name = "vllm.model_executor.layers.mamba.ops." + stem
        spec = importlib.util.spec_from_file_location(name, path)
        loaded = importlib.util.module_from_spec(spec)
        sys.modules[name] = loaded
        spec.loader.exec_module(loaded)
    return loaded


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", default=".vllm_src", help="folder with mamba_ssm.py and triton_helpers.py")
    parser.add_argument("--iterations", type=int, default=200)
    args = parser.parse_args()
    import torch

    ssu = load_vllm_ssu(args.src)
    commit_file = os.path.join(args.src, "VLLM_COMMIT")
    commit = open(commit_file).read().strip() if os.path.exists(commit_file) else "unknown"
    dev = torch.device("cuda")
    H, P, N, G = 32, 64, 128, 1
    print(f"vLLM {commit} Triton selective_state_update, H {H}, P {P}, N {N}, G {G}, bf16 inputs; "
          f"median of {args.iterations}, L2 flushed")
    print(f"{'state':6s} {'batch':>6s} {'tokens':>6s} {'us':>10s}")
    for state_dtype, name in ((torch.float32, "fp32"), (torch.bfloat16, "bf16")):
        for tokens in (1, 2, 4, 8):
            for batch in (64, 256):
                g = torch.Generator(device=dev).manual_seed(7)

                def randn(*shape, dtype=torch.bfloat16, scale=1.0):
                    return (scale * torch.randn(*shape, generator=g, device=dev)).to(dtype)

                T = batch * tokens
                state = randn(batch + 1, H, P, N, dtype=state_dtype, scale=0.5)
                x, z = randn(T, H, P), randn(T, H, P)
                dt = randn(T, H, 1).expand(T, H, P)
                B, C = randn(T, G, N), randn(T, G, N)
                A = (-torch.rand(H, generator=g, device=dev) - 1.0)[:, None, None].expand(H, P, N)
                D = randn(H, 1, dtype=torch.float32).expand(H, P)
                dt_bias = randn(H, 1, dtype=torch.float32, scale=0.1).expand(H, P)
                slots = torch.arange(1, batch + 1, dtype=torch.int32, device=dev)
                indices = slots[:, None].expand(batch, tokens).contiguous()
                cu = torch.arange(0, T + 1, tokens, dtype=torch.int32, device=dev) if tokens > 1 else None
                out = torch.empty_like(x)

                def call():
                    ssu.selective_state_update(state, x, dt, A, B, C, D, dt_bias, z=z, dt_softplus=True,
                                               state_batch_indices=indices, out=out, cu_seqlens=cu)

                print(f"{name:6s} {batch:6d} {tokens:6d} {common.flushed_median_us(call, args.iterations):10.2f}",
                      flush=True)


if __name__ == "__main__":
    main()
