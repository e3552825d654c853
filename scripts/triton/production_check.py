"""A production-shaped dump of mamba_ssm's chunk_scan and of its decode, for timing `ssmv
check` on the device host's CPU cores (issue 13's goal: a 1 x 8192, H = 32, P = 64, N = 128
prefill checked in <= 10 s on 16 cores) and for the presets' soundness at production shape.

Writes into --out: chunk_scan_T8192.npz (mamba_chunk_scan_combined, batched layout, bf16,
chunk 256, D per head, dt_bias, softplus, fp32 final states; contract triton.chunk_scan) and
ssu_T64.npz (selective_state_update token by token, 64 tokens of 4 requests, fp32 state;
contract triton.ssu). Self-describing (docs/tensor-files.md).

On the H200 (with carry [".triton_src", "build/release/ssmv"-holding folder]):
  python3 scripts/triton/production_check.py --out /tmp/prod && \
  /usr/bin/time -v ./ssmv check /tmp/prod/chunk_scan_T8192.npz --threads 16
"""

import os
import time

import make_fixtures as mf
import common


def main():
    ap = common.base_parser(__doc__)
    ap.add_argument("--seed", type=int, default=20261203)
    ap.add_argument("--tokens", type=int, default=8192)
    ap.add_argument("--heads", type=int, default=32)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    K = mf.Kernels(False, args.mamba_src, False)
    env = common.environment(args.mamba_src)
    source = (f"mamba_ssm {env['mamba_ssm_commit']}, torch {env['torch']}, triton {env['triton']}, "
              f"{env['gpu']}, {env['date_utc']}, MAMBA_DETERMINISTIC=1, scripts/triton/production_check.py")
    T, H, P, N, G, chunk = args.tokens, args.heads, 64, 128, 1, 256
    itype = mf.torch.bfloat16
    gen = mf.Gen(args.seed, "cuda")
    p = mf.make_problem(gen, T, H, P, N, G, itype, z=False, D="h")
    t0 = time.time()
    y, final = mf.run_chunk_batched(K, p, 1, T, chunk, None, True, mf.DEFAULT_LIMIT)
    meta = mf.metadata("chunk_scan", itype, mf.torch.float32, True, mf.DEFAULT_LIMIT, "triton.chunk_scan", source,
                       chunk=chunk, layout="sequence")
    path, shapes, size = mf.dump(args.out, f"chunk_scan_T{T}", p, [0, T], y, final, None, meta)
    print(f"{path}: {size} bytes, {shapes}, kernel {time.time() - t0:.2f} s", flush=True)

    lengths = [16, 16, 16, 16]
    q = mf.make_problem(gen, sum(lengths), H, P, N, G, itype, z=True, D="h")
    init = gen.randn((len(lengths), H, P, N), mf.torch.float32, 0.5)
    y2, final2 = mf.run_ssu(K, q, lengths, init, mf.torch.float32, True)
    meta2 = mf.metadata("ssu", itype, mf.torch.float32, True, mf.NO_LIMIT, "triton.ssu", source)
    cu = [0]
    for n in lengths:
        cu.append(cu[-1] + n)
    path2, shapes2, size2 = mf.dump(args.out, "ssu_T64", q, cu, y2, final2, init, meta2)
    print(f"{path2}: {size2} bytes, {shapes2}", flush=True)


if __name__ == "__main__":
    main()
