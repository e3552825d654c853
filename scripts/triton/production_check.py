"""A production-shaped dump of mamba_ssm's chunk_scan and of its decode, for timing `ssmv
check` on the device host's CPU cores (issue 13's goal: a 1 x 8192, H = 32, P = 64, N = 128
prefill checked in <= 10 s on 16 cores) and for the presets' soundness at production shape.

Writes into --out: chunk_scan_T8192.npz (mamba_chunk_scan_combined, batched layout, bf16,
chunk 256, D per head, dt_bias, softplus, fp32 final states; contract triton.chunk_scan) and
ssu_T64.npz (selective_state_update token by token, 64 tokens of 4 requests, fp32 state;
contract triton.ssu). Self-describing (docs/tensor-files.md).

--plant running_state_bf16 runs a copy of mamba_ssm whose state-passing step rounds the running
inter-chunk state to bf16 after every chunk (`states = scale * states + new_states` followed by
a round trip through bf16): the precision bug of issue 28 that stays WITHIN_CONTRACT at this
size and that the sharp verdict must flag (docs/sharp-verdicts.md). The dumps then end in
`_planted` and say so in their metadata. --varlen also writes chunk_scan_varlen_fp16.npz:
packed sequences (seq_idx, cu_seqlens), fp16 inputs, z, D per (head, dim), dt_limit,
return_varlen_states, chunk 128 (contract triton.chunk_scan.varlen, layout global).

On the H200 (with carry [".triton_src", "build/release/ssmv"-holding folder]):
  dir=$(mktemp -d) && python3 scripts/triton/production_check.py --out "$dir" && \
  /usr/bin/time -v ./ssmv check "$dir"/chunk_scan_T8192.npz --threads 16
"""

import os
import shutil
import tempfile
import time

import make_fixtures as mf
import common


PLANTS = {
    # the running state of _state_passing_fwd_kernel rounded to bf16 after every chunk
    "running_state_bf16": ("ssd_state_passing.py", "        states = scale * states + new_states\n",
                           "        states = (scale * states + new_states).to(tl.bfloat16).to(tl.float32)\n"),
}


def planted_copy(src, plant):
    """A copy of the mamba_ssm source in a temporary folder with one kernel line replaced."""
    name, find, replace = PLANTS[plant]
    dst = tempfile.mkdtemp(prefix="mamba_planted_")
    shutil.copytree(os.path.join(src, "mamba_ssm"), os.path.join(dst, "mamba_ssm"))
    for f in os.listdir(src):
        if os.path.isfile(os.path.join(src, f)):
            shutil.copy(os.path.join(src, f), dst)
    path = os.path.join(dst, "mamba_ssm", "ops", "triton", name)
    with open(path) as fh:
        text = fh.read()
    if text.count(find) != 1:
        raise SystemExit(f"plant {plant}: expected one '{find.strip()}' in {name}, found {text.count(find)}")
    with open(path, "w") as fh:
        fh.write(text.replace(find, replace))
    return dst


def main():
    ap = common.base_parser(__doc__)
    ap.add_argument("--seed", type=int, default=20261203)
    ap.add_argument("--tokens", type=int, default=8192)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--plant", choices=sorted(PLANTS), help="run mamba_ssm with this precision bug planted")
    ap.add_argument("--varlen", action="store_true", help="also write the varlen fp16 dump")
    ap.add_argument("--varlen-lengths", default="1000,700,1300,1096", help="its sequence lengths")
    ap.add_argument("--varlen-heads", type=int, default=8, help="its heads (groups: 2, or 1 for one head)")
    ap.add_argument("--varlen-name", default="chunk_scan_varlen_fp16", help="its file name (without .npz)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    src = planted_copy(args.mamba_src, args.plant) if args.plant else args.mamba_src
    suffix = "_planted" if args.plant else ""
    K = mf.Kernels(False, src, False)
    env = common.environment(args.mamba_src)
    source = (f"mamba_ssm {env['mamba_ssm_commit']}, torch {env['torch']}, triton {env['triton']}, "
              f"{env['gpu']}, {env['date_utc']}, MAMBA_DETERMINISTIC=1, scripts/triton/production_check.py"
              + (f", PLANTED BUG {args.plant}" if args.plant else ""))
    T, H, P, N, G, chunk = args.tokens, args.heads, 64, 128, 1, 256
    itype = mf.torch.bfloat16
    gen = mf.Gen(args.seed, "cuda")
    p = mf.make_problem(gen, T, H, P, N, G, itype, z=False, D="h")
    t0 = time.time()
    y, final = mf.run_chunk_batched(K, p, 1, T, chunk, None, True, mf.DEFAULT_LIMIT)
    meta = mf.metadata("chunk_scan", itype, mf.torch.float32, True, mf.DEFAULT_LIMIT, "triton.chunk_scan", source,
                       chunk=chunk, layout="sequence")
    path, shapes, size = mf.dump(args.out, f"chunk_scan_T{T}{suffix}", p, [0, T], y, final, None, meta)
    print(f"{path}: {size} bytes, {shapes}, kernel {time.time() - t0:.2f} s", flush=True)

    lengths = [16, 16, 16, 16]
    q = mf.make_problem(gen, sum(lengths), H, P, N, G, itype, z=True, D="h")
    init = gen.randn((len(lengths), H, P, N), mf.torch.float32, 0.5)
    y2, final2 = mf.run_ssu(K, q, lengths, init, mf.torch.float32, True)
    meta2 = mf.metadata("ssu", itype, mf.torch.float32, True, mf.NO_LIMIT, "triton.ssu", source)
    cu = [0]
    for n in lengths:
        cu.append(cu[-1] + n)
    path2, shapes2, size2 = mf.dump(args.out, f"ssu_T64{suffix}", q, cu, y2, final2, init, meta2)
    print(f"{path2}: {size2} bytes, {shapes2}", flush=True)

    if args.varlen:
        lengths = [int(n) for n in args.varlen_lengths.split(",")]
        itype16 = mf.torch.float16
        limit = (0.0, 0.1)
        Hv = args.varlen_heads
        v = mf.make_problem(gen, sum(lengths), Hv, P, N, 2 if Hv % 2 == 0 else 1, itype16, z=True, D="hp")
        yv, states = mf.run_chunk_varlen(K, v, lengths, 128, True, limit)
        meta3 = mf.metadata("chunk_scan", itype16, itype16, True, limit, "triton.chunk_scan.varlen", source,
                            chunk=128, layout="global")
        cu = [0]
        for n in lengths:
            cu.append(cu[-1] + n)
        path3, shapes3, size3 = mf.dump(args.out, f"{args.varlen_name}{suffix}", v, cu, yv, states, None, meta3)
        print(f"{path3}: {size3} bytes, {shapes3}", flush=True)


if __name__ == "__main__":
    main()
