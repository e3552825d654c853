#!/usr/bin/env python3
"""Random-problem campaign of mamba_ssm's Triton kernels against ssmv's Triton presets.

Three subcommands:

* `gen` (device machine): draws random problems from a seeded plan and dumps mamba_ssm's
  selective_state_update / mamba_chunk_scan_combined (batched, varlen) / the prefill->decode
  hand-off on them, through make_fixtures.py's machinery (its Kernels, Mamba2-realistic
  data generator Gen/make_problem, run_* functions, reference check and dump writer: one
  make_one call per case). A share of the cases gets adversarial data (dt near the softplus
  shortcut 20, A near 0, x/B/C scaled by 2^k, zeros). Modes:
    deterministic  MAMBA_DETERMINISTIC=1: one fixed config per autotuned kernel (mma.sync);
    production     mamba_ssm's production config lists (the autotuner's candidates, wgmma at
                   4 and 8 warps); each autotuned kernel is pinned, per case, to one config
                   drawn (seeded) from its list, so every candidate the autotuner may pick is
                   exercised without timing runs; the configs are in each dump's ssmv.source.
  selective_state_update has no autotuned configs: its cases run in the deterministic process.
  Several worker processes per mode share the GPU (--jobs); each stops at its time or byte
  budget; case i of a mode is the same problem whatever the worker count.
* `check` (here): `ssmv check FILE --json OUT` of every dump, at most --jobs at a time.
* `report` (here): per kind / mode / tensor, the distribution of max_bound_usage and every
  VIOLATION / INVALID / refusal with the worst element's bound sources, as Markdown.

Device (see docs/measurements/triton-campaign.md for the command used):
  python3 scripts/triton/campaign.py gen --mode deterministic --jobs 7 --out "$(mktemp -d)" ...
Local smoke test (torch stand-ins for the kernels):
  python3 scripts/triton/campaign.py gen --fake --mode deterministic --jobs 1 --cases 12 --out "$(mktemp -d)"
"""

import argparse
import glob
import json
import math
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

DEFAULT_SEED = 20261202
KIND_WEIGHTS = {"deterministic": (("ssu", 0.36), ("batched", 0.34), ("varlen", 0.15), ("handoff", 0.15)),
                "production": (("batched", 0.55), ("varlen", 0.2), ("handoff", 0.25))}
ADVERSARIAL = ("dt_large", "A_near_0", "scale", "zeros")
ISZ = {"bf16": 2, "fp16": 2, "fp32": 4}
# mamba_chunk_scan_combined's autotuned forward kernels (module, name)
AUTOTUNED = (("ssd_chunk_state", "_chunk_cumsum_fwd_kernel"), ("ssd_chunk_state", "_chunk_state_fwd_kernel"),
             ("ssd_chunk_state", "_chunk_state_varlen_kernel"), ("ssd_state_passing", "_state_passing_fwd_kernel"),
             ("ssd_bmm", "_bmm_chunk_fwd_kernel"), ("ssd_chunk_scan", "_chunk_scan_fwd_kernel"))


def f32(v):
    """The fp32 value nearest v, as a Python float (kernels get their dt limits in fp32)."""
    import struct
    return struct.unpack("f", struct.pack("f", v))[0]


# ---------------------------------------------------------------------------------------
# The plan: case i of a mode, drawn from its own generator

def divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def est_bytes(kind, q):
    """The dump's size (tensors plus npz overhead), to keep every dump small."""
    isz = ISZ[q["itype"]]
    lengths = q["lengths"] if kind in ("ssu", "varlen") else [q["L"]] * q["S"]
    T, S = sum(lengths), len(lengths)
    H, P, N, G = q["H"], q["P"], q["N"], q["G"]
    b = T * H * P * isz * (3 if q.get("z", True) else 2) + T * H * isz + 2 * T * G * N * isz + 8 * H
    b += {"h": 4 * H, "hp": 4 * H * P, None: 0}[q.get("D", "h")]
    st = S * H * P * N
    if kind == "ssu":
        b += 2 * st * ISZ[q["stype"]]
    elif kind == "batched":
        b += st * 4 * (2 if q.get("init") else 1)
    elif kind == "varlen":
        b += st * isz
    else:
        b += st * ISZ[q["stype"]]
    return b + 8 * (S + 1) + 8 * S + 14 * 160 + 900


def draw_dims(r, kind):
    H = r.randint(1, 8)
    G = r.choice(divisors(H))
    P = r.choice((8, 16, 32, 64)) if r.random() < 0.5 else r.randint(8, 64)
    N = r.choice((16, 32, 64, 128, 256) if kind == "ssu" else (16, 64, 128, 256))
    return H, P, N, G


def shrink(r, kind, q, cap):
    """Reduce the dimensions (a random one at a time) until the dump fits cap bytes."""
    for _ in range(200):
        if est_bytes(kind, q) <= cap:
            return
        opts = []
        if q["H"] > 1:
            opts.append("H")
        if q["P"] > 8:
            opts.append("P")
        if q["N"] > 16:
            opts.append("N")
        if q["G"] > 1:
            opts.append("G")
        if kind in ("batched", "handoff") and q["S"] > 1:
            opts.append("S")
        if kind in ("ssu", "varlen") and len(q["lengths"]) > 1:
            opts.append("S")
        if not opts:
            break
        d = r.choice(opts)
        if d == "H":
            q["H"] = r.randint(1, q["H"] - 1)
            q["G"] = max(g for g in divisors(q["H"]) if g <= q["G"])
        elif d == "P":
            q["P"] = max(8, q["P"] // 2)
        elif d == "N":
            q["N"] = {256: 128, 128: 64, 64: r.choice((16, 32)) if kind == "ssu" else 16, 32: 16}[q["N"]]
        elif d == "G":
            q["G"] = max(g for g in divisors(q["H"]) if g < q["G"])
        elif kind in ("batched", "handoff"):
            q["S"] -= 1
        else:
            q["lengths"].pop(r.randrange(len(q["lengths"])))
            if "slots" in q:
                q["slots"] = q["slots"][:len(q["lengths"])]
    # still too big at the smallest dimensions: shorter sequences
    for _ in range(100):
        if est_bytes(kind, q) <= cap:
            break
        if kind in ("batched",):
            q["L"] = max(1, int(q["L"] * 0.8))
        elif kind == "handoff":
            q["L"] = max(q["prefill"] + 1, int(q["L"] * 0.8))
            if q["L"] == q["prefill"] + 1 and est_bytes(kind, q) > cap:
                q["prefill"] = max(1, int(q["prefill"] * 0.8))
                q["L"] = q["prefill"] + 1
        else:
            i = max(range(len(q["lengths"])), key=lambda j: q["lengths"][j])
            if q["lengths"][i] == 1:
                break
            q["lengths"][i] = max(1, int(q["lengths"][i] * 0.8))


def draw_len(r, chunk, cls):
    if cls == "edge":
        return r.choice((chunk - 1, chunk, chunk + 1, 2 * chunk - 1, 2 * chunk, 2 * chunk + 1))
    if cls == "small":
        return r.randint(1, chunk - 2)
    if cls == "mid":
        return r.randint(chunk + 2, 3 * chunk)
    return r.randint(600, 1000)


def dt_options(r, q, allow_limit=True):
    """softplus / dt_bias / dt_limit / negative dt of a chunked case."""
    q["softplus"] = r.random() < 0.8
    if q["softplus"]:
        q["dt_bias"] = r.random() < 0.85
        q["dt_std"] = r.choice((0.5, 0.5, 1.0))
        if allow_limit and r.random() < 0.2:
            q["dt_limit"] = (r.choice((0.0, f32(1e-3))), f32(math.exp(r.uniform(math.log(0.01), math.log(0.5)))))
    else:
        q["dt_bias"] = False
        q["negative_dt"] = r.choice((0.0, 0.1, 0.3)) if allow_limit else 0.0
        if allow_limit and r.random() < 0.4:
            q["dt_limit"] = (f32(r.choice((1e-4, 1e-3, 5e-3))), f32(r.choice((0.03, 0.05, 0.08))))


def draw_case(seed, mode, index):
    r = random.Random(f"ssmv-campaign:{seed}:{mode}:{index}")
    kind = r.choices([k for k, _ in KIND_WEIGHTS[mode]], [w for _, w in KIND_WEIGHTS[mode]])[0]
    adv = []
    if r.random() < 0.35:
        adv.append(r.choice(ADVERSARIAL))
        if r.random() < 0.15:
            adv.append(r.choice([a for a in ADVERSARIAL if a != adv[0]]))
    cap = math.exp(r.uniform(math.log(4e3), math.log(24e3)))
    H, P, N, G = draw_dims(r, kind)
    q = {"H": H, "P": P, "N": N, "G": G, "z": r.random() < 0.5, "D": r.choice(("h", "h", "hp", None))}
    if kind == "ssu":
        q["itype"] = r.choice(("bf16", "bf16", "fp16", "fp32"))
        q["stype"] = r.choice(("fp32", "fp32", "bf16", "fp16"))
        S = r.randint(1, 4)
        q["softplus"] = r.random() < 0.8
        q["dt_bias"] = q["softplus"] and r.random() < 0.85
        # run_ssu: every call takes the whole batch, unless the requests live in cache slots
        # (state_batch_indices), where each call takes the requests still running
        q["lengths"] = [r.randint(1, 6)] * S
        if r.random() < 0.4:
            q["lengths"] = [r.randint(1, 6) for _ in range(S)]
            q["nslots"] = S + r.randint(0, 3)
            q["slots"] = r.sample(range(q["nslots"]), S)
    else:
        q["itype"] = r.choice(("bf16", "bf16", "bf16", "fp16"))
        chunk = r.choices((64, 128, 256), (0.5, 0.3, 0.2))[0]
        q["chunk"] = chunk
        if kind == "batched":
            cls = r.choices(("edge", "small", "mid", "long"), (0.4, 0.3, 0.24, 0.06))[0]
            q["L"] = draw_len(r, chunk, cls)
            q["S"] = 1 if cls == "long" else r.randint(1, 3)
            while q["S"] > 1 and q["S"] * q["L"] > 1100:
                q["S"] -= 1
            q["init"] = r.random() < 0.5
            dt_options(r, q)
        elif kind == "varlen":
            n = r.randint(2, 5)
            lens = []
            for _ in range(n):
                c = r.choices(("one", "small", "cross", "long"), (0.2, 0.4, 0.35, 0.05))[0]
                lens.append(1 if c == "one" else r.randint(2, chunk) if c == "small" else
                            r.randint(chunk // 2, 2 * chunk + 5) if c == "cross" else r.randint(300, 500))
            if 1 not in lens and r.random() < 0.5:
                lens[r.randrange(n)] = 1
            while sum(lens) > 1000:
                lens.pop(max(range(len(lens)), key=lambda j: lens[j]))
            q["lengths"] = lens
            dt_options(r, q)
        else:
            q["S"] = r.randint(1, 3)
            q["stype"] = r.choice(("fp32", "fp32", "bf16", "bf16", "fp16"))
            if r.random() < 0.1:
                q["prefill"] = chunk * r.randint(1, 2)
            else:
                q["prefill"] = r.choice((r.randint(1, chunk - 1), r.randint(1, chunk - 1), r.randint(chunk + 1, 3 * chunk)))
                if q["prefill"] % chunk == 0:
                    q["prefill"] += 1
            q["L"] = q["prefill"] + r.randint(1, 24)
            q["softplus"] = r.random() < 0.85
            q["dt_bias"] = q["softplus"] and r.random() < 0.85
            q["dt_std"] = 0.5
    T = sum(q["lengths"]) if kind in ("ssu", "varlen") else q["L"] * q["S"]
    if T > 300:
        cap = r.uniform(40e3, 130e3)
    shrink(r, kind, q, cap)
    return {"index": index, "mode": mode, "kind": kind, "adv": adv, "cap": int(cap), "q": q,
            "est_bytes": est_bytes(kind, q), "name": f"{mode[:3]}_{index:04d}_{kind}"}


# ---------------------------------------------------------------------------------------
# Adversarial data (applied by make_one's adjust hook)

def make_adjust(case, seed):
    import torch
    adv, q = case["adv"], case["q"]
    if not adv:
        return None
    g = torch.Generator().manual_seed(seed * 100003 + case["index"] * 7 + (1 if case["mode"] == "production" else 0))
    note = []

    def u(shape, lo, hi):
        return torch.empty(shape, dtype=torch.float64).uniform_(lo, hi, generator=g)

    def adjust(p, init):
        dev = p["x"].device
        it = p["x"].dtype
        T, H, P = p["x"].shape
        softplus = q.get("softplus", True)
        for a in adv:
            if a == "dt_large":
                if softplus:
                    if "dt_bias" in p:
                        p["dt_bias"] = u((H,), 14.0, 20.0).float().to(dev)
                        p["dt"] = (torch.randn((T, H), generator=g, dtype=torch.float64) * 3).to(it).to(dev)
                    else:
                        p["dt"] = u((T, H), 8.0, 30.0).to(it).to(dev)
                else:
                    p["dt"] = torch.exp(u((T, H), math.log(0.5), math.log(30.0))).to(it).to(dev)
                hi = 16.0 if torch.rand((), generator=g) < 0.5 else 2.0
                p["A"] = (-torch.exp(u((H,), math.log(1e-3), math.log(hi)))).float().to(dev)
                note.append(f"dt_large(A up to -{hi:g})")
            elif a == "A_near_0":
                A = -torch.exp(u((H,), math.log(1e-7), math.log(1e-3)))
                zero_head = bool(torch.rand((), generator=g) < 0.25)
                if zero_head:
                    A[int(torch.randint(0, H, (), generator=g))] = 0.0
                p["A"] = A.float().to(dev)
                note.append("A_near_0" + ("(one head A=0)" if zero_head else ""))
            elif a == "scale":
                for _ in range(100):
                    k = [int(v) for v in torch.randint(-8, 9, (3,), generator=g)]
                    if it != torch.float16 or (sum(k) <= 4 and k[0] + k[1] <= 4):
                        break
                else:
                    k = [0, 0, 0]
                for name, e in zip(("x", "B", "C"), k):
                    p[name] = (p[name].double() * 2.0 ** e).to(it)
                if init is not None:
                    init = (init.double() * 2.0 ** (k[0] + k[1])).to(init.dtype)
                note.append(f"scale(x 2^{k[0]}, B 2^{k[1]}, C 2^{k[2]})")
            elif a == "zeros":
                what = []
                for name, rows in (("x", (T,)), ("B", (T,)), ("C", (T,))):
                    if torch.rand((), generator=g) < 0.6:
                        m = (torch.rand(rows, generator=g) < 0.3).to(dev)
                        p[name] = p[name].clone()
                        p[name][m] = 0
                        what.append(f"{name} rows")
                if "z" in p and torch.rand((), generator=g) < 0.5:
                    m = (torch.rand(p["z"].shape, generator=g) < 0.3).to(dev)
                    p["z"] = p["z"].clone()
                    p["z"][m] = 0
                    what.append("z elements")
                if torch.rand((), generator=g) < 0.5:
                    m = (torch.rand((T, H), generator=g) < 0.3).to(dev)
                    dt = p["dt"].clone()
                    if softplus and "dt_bias" in p:
                        dt[m] = (-p["dt_bias"].double()).to(it)[None].expand(T, H)[m]
                        what.append("dt = -dt_bias")
                    else:
                        dt[m] = 0
                        what.append("dt = 0")
                    p["dt"] = dt
                if "D" in p and torch.rand((), generator=g) < 0.3:
                    p["D"] = torch.zeros_like(p["D"])
                    what.append("D = 0")
                if init is not None and torch.rand((), generator=g) < 0.3:
                    init = torch.zeros_like(init)
                    what.append("initial states = 0")
                note.append("zeros(" + ", ".join(what) + ")")
        return init

    adjust.note = note
    return adjust


# ---------------------------------------------------------------------------------------
# gen

def compact_config(c):
    kw = "".join(f"{k.replace('BLOCK_SIZE_', '')}{v}" for k, v in c.kwargs.items())
    return f"{kw} w{c.num_warps} s{c.num_stages}"


def autotuner_of(obj):
    while obj is not None and not hasattr(obj, "configs"):
        obj = getattr(obj, "fn", None)
    return obj


def gen_worker(args):
    import torch
    import make_fixtures as mf
    import common
    t0 = time.time()
    mode = args.mode
    K = mf.Kernels(args.fake, args.mamba_src, autotune=(mode == "production"))
    tuners = {}
    if not args.fake:
        try:
            for mod, name in AUTOTUNED:
                at = autotuner_of(getattr(K.mods[mod], name))
                tuners[name] = (at, list(at.configs))
        except Exception as e:  # noqa: BLE001
            print(f"[{mode} w{args.worker}] no config pinning ({type(e).__name__}: {e}); "
                  "production cases autotune normally", flush=True)
            tuners = {}
    env = common.environment(args.mamba_src)
    out = os.path.join(args.out, mode)
    os.makedirs(out, exist_ok=True)
    dtypes = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
    device = "cpu" if args.fake else "cuda"
    budget_bytes = args.byte_budget / args.jobs
    written = 0
    log_path = os.path.join(out, f"cases.w{args.worker}.jsonl")
    logf = open(log_path, "a")
    index = args.worker
    done = 0
    while index < args.cases and time.time() - t0 < args.time_budget and written < budget_bytes:
        case = draw_case(args.seed, mode, index)
        index += args.jobs
        q = dict(case["q"])
        q["itype"] = dtypes[q["itype"]]
        if "stype" in q:
            q["stype"] = dtypes[q["stype"]]
        rc = random.Random(f"ssmv-campaign-configs:{args.seed}:{case['index']}")
        rec = {"case": case}
        for attempt in range(4):
            cfg_note = ""
            if tuners and mode == "production" and case["kind"] != "ssu":
                picks = {}
                for name, (at, allc) in tuners.items():
                    c = rc.choice(allc)
                    at.configs = [c]
                    picks[name] = compact_config(c)
                rec["configs"] = picks
                cfg_note = "production configs pinned per case (" + "; ".join(
                    f"{n.strip('_').replace('_kernel', '')}: {v}" for n, v in picks.items()) + ")"
            elif tuners and case["kind"] != "ssu":
                rec["configs"] = {n: compact_config(a.configs[0]) for n, (a, _) in tuners.items()}
            adjust = make_adjust(case, args.seed)
            what = ("adversarial: " + ", ".join(case["adv"])) if case["adv"] else "Mamba2-realistic data"
            mode_note = ("MAMBA_DETERMINISTIC=1" if mode == "deterministic" else cfg_note) \
                if case["kind"] != "ssu" else "selective_state_update (no autotuned configs)"
            gen = mf.Gen(args.seed * 1000 + case["index"] * 2 + (mode == "production"), device)
            source_base = (f"ssmv campaign seed {args.seed} {mode} case {case['index']} ({what}; {mode_note}), "
                           f"mamba_ssm {env['mamba_ssm_commit']}, torch {env['torch']}, triton {env['triton']}, "
                           f"{env['gpu']}, {env['date_utc']}" + (", FAKE float32 stand-in kernels" if args.fake else ""))
            tc = time.time()
            try:
                r = mf.make_one(K, gen, out, case["name"], case["kind"], q, source_base,
                                (lambda s: None) if not args.verbose else print, adjust=adjust)
            except Exception as e:  # noqa: BLE001
                err = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                rec.setdefault("errors", []).append({"configs": rec.get("configs"), "error": err[:400]})
                print(f"[{mode} w{args.worker}] case {case['index']} attempt {attempt}: {err[:200]}", flush=True)
                if "OutOfResources" in err or "out of resource" in err.lower():
                    continue  # the autotuner would have skipped this config: draw others
                break
            rec.update({"file": case["name"] + ".npz", "bytes": r["bytes"], "rel_err_y": r["rel_err_y"],
                        "rel_err_final": r["rel_err_final"], "seconds": round(time.time() - tc, 3),
                        "adjust": adjust.note if adjust else [], "metadata": r["metadata"]})
            written += r["bytes"]
            done += 1
            break
        logf.write(json.dumps(rec) + "\n")
        logf.flush()
    info = K.kernel_info()
    with open(os.path.join(out, f"worker.w{args.worker}.json"), "w") as fh:
        json.dump({"environment": env, "kernels": info, "cases_done": done, "bytes": written,
                   "seconds": round(time.time() - t0, 1), "next_index": index}, fh, indent=1)
    print(f"[{mode} w{args.worker}] {done} dumps, {written} bytes, {time.time() - t0:.1f} s, next case {index}",
          flush=True)


def gen_main(args):
    if args.worker is not None:
        return gen_worker(args)
    os.makedirs(os.path.join(args.out, args.mode), exist_ok=True)
    procs = []
    for w in range(args.jobs):
        cmd = [sys.executable, os.path.abspath(__file__)] + sys.argv[1:] + ["--worker", str(w)]
        procs.append(subprocess.Popen(cmd))
    rc = 0
    for p in procs:
        rc |= p.wait()
    out = os.path.join(args.out, args.mode)
    recs = []
    for f in sorted(glob.glob(os.path.join(out, "cases.w*.jsonl"))):
        with open(f) as fh:
            recs += [json.loads(line) for line in fh if line.strip()]
    recs.sort(key=lambda r: r["case"]["index"])
    workers = []
    for f in sorted(glob.glob(os.path.join(out, "worker.w*.json"))):
        with open(f) as fh:
            workers.append(json.load(fh))
    with open(os.path.join(out, "campaign.json"), "w") as fh:
        json.dump({"seed": args.seed, "mode": args.mode, "command": " ".join(sys.argv), "workers": workers,
                   "cases": recs}, fh, indent=1)
    ok = sum(1 for r in recs if "file" in r)
    print(f"[{args.mode}] {ok} dumps of {len(recs)} cases, "
          f"{sum(r.get('bytes', 0) for r in recs)} bytes; worker exit codes or'ed {rc}", flush=True)
    return rc


def plan_main(args):
    """The plan's statistics without running anything (sizes, kinds)."""
    from collections import Counter
    for mode in ("deterministic", "production"):
        cs = [draw_case(args.seed, mode, i) for i in range(args.cases)]
        tot, n = 0, 0
        for c in cs:
            if tot + c["est_bytes"] > args.byte_budget:
                break
            tot += c["est_bytes"]
            n += 1
        print(mode, Counter(c["kind"] for c in cs[:n]), f"{n} cases in {tot} bytes; max {max(c['est_bytes'] for c in cs)}",
              Counter(tuple(c["adv"]) for c in cs[:n]).most_common(6))


# ---------------------------------------------------------------------------------------
# check and report (local: stdlib only)

def check_main(args):
    files = sorted(glob.glob(os.path.join(args.dumps, "*", "*.npz")))
    os.makedirs(args.results, exist_ok=True)
    todo = []
    for f in files:
        mode = os.path.basename(os.path.dirname(f))
        base = os.path.join(args.results, mode + "__" + os.path.basename(f)[:-4])
        if not (os.path.exists(base + ".rc") and args.resume):
            todo.append((f, base))
    t0 = time.time()
    running = []

    def reap(block):
        for item in list(running):
            p, f, base, fh, ts = item
            if p.poll() is None and not block:
                continue
            p.wait()
            fh.close()
            with open(base + ".rc", "w") as o:
                o.write(f"{p.returncode} {time.time() - ts:.3f}\n")
            running.remove(item)
            if block:
                return
    for f, base in todo:
        while len(running) >= args.jobs:
            reap(False)
            if len(running) >= args.jobs:
                time.sleep(0.02)
        fh = open(base + ".log", "w")
        p = subprocess.Popen([args.ssmv, "check", f, "--json", base + ".json"], stdout=fh, stderr=subprocess.STDOUT)
        running.append((p, f, base, fh, time.time()))
    while running:
        reap(True)
    print(f"checked {len(todo)} dumps in {time.time() - t0:.1f} s")


def pct(v, q):
    v = sorted(v)
    if not v:
        return float("nan")
    i = q * (len(v) - 1)
    lo = int(math.floor(i))
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (i - lo)


def report_main(args):
    cases = {}
    for f in glob.glob(os.path.join(args.dumps, "*", "campaign.json")):
        with open(f) as fh:
            d = json.load(fh)
        for r in d["cases"]:
            if "file" in r:
                cases[(d["mode"], r["file"][:-4])] = r
    rows = []
    for rcf in sorted(glob.glob(os.path.join(args.results, "*.rc"))):
        base = rcf[:-3]
        mode, name = os.path.basename(base).split("__", 1)
        with open(rcf) as fh:
            rc, secs = fh.read().split()
        rep = None
        if os.path.exists(base + ".json"):
            with open(base + ".json") as fh:
                rep = json.load(fh)
        with open(base + ".log") as fh:
            log = fh.read()
        rows.append({"mode": mode, "name": name, "rc": int(rc), "seconds": float(secs), "report": rep, "log": log,
                     "case": cases.get((mode, name))})
    with open(args.summary, "w") as fh:
        json.dump([{k: v for k, v in r.items() if k != "report"} | {
            "tensors": [{"name": t["name"], "verdict": t["verdict"], "usage": t["max_bound_usage"],
                         "elements": t["elements"], "exact_share": t.get("exact_share"),
                         "worst": t.get("worst", {}).get("coords"),
                         "sources": [(s["label"], s["share"]) for s in t.get("worst_bound_sources", [])]}
                        for e in (r["report"] or {}).get("entries", []) for t in e["tensors"]]}
            for r in rows], fh, indent=1)
    print(f"{len(rows)} results; summary in {args.summary}")
    if args.markdown:
        write_markdown(args.markdown, rows)


def group_label(r):
    c = r["case"]["case"]
    q = c["q"]
    kind = c["kind"]
    if kind == "ssu":
        return f"ssu, {q['stype']} state"
    if kind == "handoff":
        return f"handoff, {q['stype']} cache"
    return kind


def sources(t, n=3):
    src = t.get("worst_bound_sources", [])
    out = ", ".join(f"{s['label']} {100 * s['share']:.2g}%" for s in src[:n])
    return out + (f", {len(src) - n} more" if len(src) > n else "")


def write_markdown(path, rows):
    """The tables of docs/measurements/triton-campaign.md."""
    from collections import Counter, defaultdict
    L = []
    modes = ("deterministic", "production")
    cnt = Counter((r["case"]["case"]["kind"], r["mode"]) for r in rows)
    adv = Counter((r["case"]["case"]["kind"], r["mode"]) for r in rows if r["case"]["case"]["adv"])
    L += ["| kind | deterministic (adversarial) | production (adversarial) | total |", "|---|---|---|---|"]
    for k in ("ssu", "batched", "varlen", "handoff"):
        L.append(f"| {k} | " + " | ".join(f"{cnt[(k, m)]} ({adv[(k, m)]})" for m in modes) +
                 f" | {cnt[(k, modes[0])] + cnt[(k, modes[1])]} |")
    L.append(f"| all | " + " | ".join(f"{sum(v for (k, mm), v in cnt.items() if mm == m)} "
                                     f"({sum(v for (k, mm), v in adv.items() if mm == m)})" for m in modes) +
             f" | {len(rows)} |")
    rcs = Counter(r["rc"] for r in rows)
    verdicts = Counter(t["verdict"] for r in rows for e in (r["report"] or {}).get("entries", []) for t in e["tensors"])
    L.append(f"\nExit codes: {dict(sorted(rcs.items()))}; tensor verdicts: {dict(sorted(verdicts.items()))}.\n")
    bad = [r for r in rows if r["rc"] != 0]
    if bad:
        L += ["| file | exit | tensor | verdict | usage | worst element's bound sources |", "|---|---|---|---|---|---|"]
        for r in bad:
            for e in (r["report"] or {}).get("entries", []):
                for t in e["tensors"]:
                    if t["verdict"] in ("VIOLATION", "INVALID"):
                        L.append(f"| {r['mode']}/{r['name']}.npz | {r['rc']} | {t['name']} | {t['verdict']} | "
                                 f"{t['max_bound_usage']:.3g} | {sources(t)} |")
            if not r["report"]:
                L.append(f"| {r['mode']}/{r['name']}.npz | {r['rc']} | — | refused | — | "
                         f"{r['log'].strip().splitlines()[-1] if r['log'].strip() else ''} |")
        L.append("")
    groups = defaultdict(list)
    for r in rows:
        for e in (r["report"] or {}).get("entries", []):
            for t in e["tensors"]:
                groups[(group_label(r), r["mode"], t["name"])].append((t["max_bound_usage"], r, t))
    order = ["ssu, fp32 state", "ssu, bf16 state", "ssu, fp16 state", "batched", "varlen",
             "handoff, fp32 cache", "handoff, bf16 cache", "handoff, fp16 cache"]
    L += ["| kind | mode | tensor | dumps | min | p50 | p90 | max | max in | worst element's bound sources (max dump) |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    for g in order:
        for m in modes:
            for tn in ("y", "final_state"):
                v = groups.get((g, m, tn))
                if not v:
                    continue
                us = [u for u, _, _ in v]
                u, r, t = max(v, key=lambda x: x[0])
                L.append(f"| {g} | {m} | {tn} | {len(v)} | {min(us):.3g} | {pct(us, 0.5):.3g} | {pct(us, 0.9):.3g} | "
                         f"{max(us):.3g} | `{r['name']}` | {sources(t)} |")
    # by adversarial class
    ag = defaultdict(list)
    for r in rows:
        a = r["case"]["case"]["adv"]
        key = "+".join(a) if a else "realistic"
        for e in (r["report"] or {}).get("entries", []):
            for t in e["tensors"]:
                ag[(key.split("+")[0] if "+" not in key else "two kinds", t["name"])].append(t["max_bound_usage"])
    L += ["", "| data | tensor | tensors judged | p50 | p90 | max |", "|---|---|---|---|---|---|"]
    for key in ("realistic", "dt_large", "A_near_0", "scale", "zeros", "two kinds"):
        for tn in ("y", "final_state"):
            us = ag.get((key, tn))
            if us:
                L.append(f"| {key} | {tn} | {len(us)} | {pct(us, 0.5):.3g} | {pct(us, 0.9):.3g} | {max(us):.3g} |")
    with open(path, "w") as fh:
        fh.write("\n".join(L) + "\n")
    print(f"tables in {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("--out", required=True)
    g.add_argument("--mode", choices=("deterministic", "production"), required=True)
    g.add_argument("--seed", type=int, default=DEFAULT_SEED)
    g.add_argument("--cases", type=int, default=4000, help="plan size (cases 0..cases-1)")
    g.add_argument("--jobs", type=int, default=1)
    g.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    g.add_argument("--time-budget", type=float, default=200.0, help="seconds per worker")
    g.add_argument("--byte-budget", type=float, default=6.5e6, help="bytes of dumps per mode")
    g.add_argument("--fake", action="store_true")
    g.add_argument("--verbose", action="store_true")
    g.add_argument("--mamba-src", default=os.path.join(os.path.dirname(os.path.dirname(HERE)), ".triton_src"))
    pl = sub.add_parser("plan")
    pl.add_argument("--seed", type=int, default=DEFAULT_SEED)
    pl.add_argument("--cases", type=int, default=1000)
    pl.add_argument("--byte-budget", type=float, default=6.5e6)
    c = sub.add_parser("check")
    c.add_argument("--dumps", required=True)
    c.add_argument("--results", required=True)
    c.add_argument("--ssmv", default=os.path.join(os.path.dirname(os.path.dirname(HERE)), "build/release/ssmv"))
    c.add_argument("--jobs", type=int, default=2)
    c.add_argument("--resume", action="store_true")
    rp = sub.add_parser("report")
    rp.add_argument("--dumps", required=True)
    rp.add_argument("--results", required=True)
    rp.add_argument("--summary", required=True)
    rp.add_argument("--markdown", default=None)
    args = ap.parse_args()
    sys.exit({"gen": gen_main, "plan": plan_main, "check": check_main, "report": report_main}[args.cmd](args) or 0)


if __name__ == "__main__":
    main()
